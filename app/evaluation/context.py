"""What running a case needs from outside: targets and a response cache.

Also ``RecordedTarget``: a target seen through one case, which reads and fills the response
cache and adds up each role's tokens, time and cache hits for the case's record.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from app.evaluation.records import (
    RoleAttempts,
    RoleCost,
    RoleLatency,
    RoleUsage,
    TargetUsage,
    TokenUsage,
)
from app.evaluation.repositories import RepoCheckouts
from app.evaluators.code.programs import ProgramRunner
from app.providers.base import (
    CallRole,
    ModelOptions,
    ProviderKind,
    ProviderRequest,
    ProviderResponse,
)
from app.providers.errors import ProviderError


class RunnableTarget(Protocol):
    """A configured target as a run uses it (``app.providers`` implements it)."""

    @property
    def name(self) -> str:
        """The target's name."""
        ...

    @property
    def kind(self) -> ProviderKind:
        """``api`` (native messages), ``agent`` (the question text) or ``embeddings``."""
        ...

    @property
    def judge_target(self) -> str | None:
        """The target that grades this one's answers by default."""
        ...

    @property
    def system_prompt(self) -> str | None:
        """The system message of cases with no system turn (None: the built-in default)."""
        ...

    @property
    def max_concurrency(self) -> int | None:
        """Cases to run at once against this target, when it says."""
        ...

    def untaken_options(self, options: ModelOptions) -> list[str]:
        """The sampling options set in ``options`` that the target's API does not take."""
        ...

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """One call, limits and retries inside; raises ``ProviderError`` when it fails."""
        ...


class TargetLookup(Protocol):
    """Targets by name (``app.providers``' registry); raises ``UnknownTarget`` (422)."""

    def get(self, name: str) -> RunnableTarget:
        """The target called ``name``."""
        ...

    def names(self) -> list[str]:
        """Every target's name."""
        ...


class ResponseCache(Protocol):
    """Provider replies by request key; errors are never stored."""

    async def get(self, key: str) -> ProviderResponse | None:
        """The stored reply for ``key``, if any."""
        ...

    async def put(self, key: str, response: ProviderResponse) -> None:
        """Store ``response`` under ``key``."""
        ...


def cache_key(target: str, request: ProviderRequest) -> str:
    """sha256 of the target name and the exact provider request JSON."""
    digest = hashlib.sha256(target.encode())
    digest.update(b"\n")
    digest.update(request.model_dump_json().encode())
    return digest.hexdigest()


class MemoryResponseCache:
    """A bounded in-process ``ResponseCache`` (least recently used entries leave first)."""

    def __init__(self, max_entries: int = 10_000) -> None:
        self._entries: OrderedDict[str, ProviderResponse] = OrderedDict()
        self._max_entries = max_entries

    async def get(self, key: str) -> ProviderResponse | None:
        """The stored reply for ``key``, if any."""
        response = self._entries.get(key)
        if response is not None:
            self._entries.move_to_end(key)
        return response

    async def put(self, key: str, response: ProviderResponse) -> None:
        """Store ``response``, dropping the oldest entry when full."""
        self._entries[key] = response
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


@dataclass(frozen=True)
class CaseContext:
    """The run-wide resources each case uses.

    Attributes:
        providers: Targets by name.
        cache: The response cache, used when the plan says so.
        programs: Runs code graders' programs (None: code graders are not enabled).
        files: Text of every file the suite references, keyed by the path as cases write
            it (a live conversation's turns are formatted with them as they run).
        repositories: The workspace's repositories, cloned once for the run's cases.
    """

    providers: TargetLookup
    cache: ResponseCache | None = None
    programs: ProgramRunner | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    repositories: RepoCheckouts = field(default_factory=RepoCheckouts)


@dataclass
class CallLedger:
    """Tokens, milliseconds, requests, cost and cache hits of one case's calls, by role.

    ``targets`` splits the tokens and requests by the target called instead: the same
    totals, whatever role each call was for.
    """

    usage: RoleUsage = field(default_factory=RoleUsage)
    targets: dict[str, TargetUsage] = field(default_factory=dict)
    latency: RoleLatency = field(default_factory=RoleLatency)
    attempts: RoleAttempts = field(default_factory=RoleAttempts)
    cost: RoleCost = field(default_factory=RoleCost)
    calls: dict[str, int] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)

    def add(
        self, role: CallRole, target: str, response: ProviderResponse, elapsed_ms: float
    ) -> None:
        """Count one call of ``role`` to ``target`` that got ``response``.

        A reply not from the cache counts each request its call made (one when it does not
        say, as from a target outside a runtime).
        """
        tokens = TokenUsage(
            input_tokens=response.usage.input_tokens or 0,
            output_tokens=response.usage.output_tokens or 0,
        )
        self.carry(role, target, tokens)
        if response.cost_usd is not None:
            spent = getattr(self.cost, role.value) or 0.0
            setattr(self.cost, role.value, spent + response.cost_usd)
        self._spend(role, elapsed_ms)
        self.calls[role.value] = self.calls.get(role.value, 0) + 1
        if response.cached:
            self.hits[role.value] = self.hits.get(role.value, 0) + 1
        else:
            self._sent(role, target, len(response.attempts) or 1)

    def add_failure(
        self, role: CallRole, target: str, error: ProviderError, elapsed_ms: float
    ) -> None:
        """Count one call of ``role`` to ``target`` that failed: its time and its requests."""
        self._spend(role, elapsed_ms)
        self._sent(role, target, len(error.attempts))

    def carry(self, role: CallRole, target: str, tokens: TokenUsage) -> None:
        """Add ``tokens`` of ``target`` for ``role`` (no request: a reply already known)."""
        mine: TokenUsage = getattr(self.usage, role.value)
        mine.input_tokens += tokens.input_tokens
        mine.output_tokens += tokens.output_tokens
        used = TargetUsage(input_tokens=tokens.input_tokens, output_tokens=tokens.output_tokens)
        self._target(target, used)

    def _spend(self, role: CallRole, elapsed_ms: float) -> None:
        spent = getattr(self.latency, role.value) or 0.0
        setattr(self.latency, role.value, round(spent + elapsed_ms, 3))

    def _sent(self, role: CallRole, target: str, requests: int) -> None:
        setattr(self.attempts, role.value, getattr(self.attempts, role.value) + requests)
        self._target(target, TargetUsage(requests=requests))

    def _target(self, target: str, usage: TargetUsage) -> None:
        known = self.targets.get(target)
        self.targets[target] = usage if known is None else known.plus(usage)

    def cached(self) -> dict[str, bool]:
        """Per role that made calls: whether every one of them came from the cache."""
        return {role: self.hits.get(role, 0) == count for role, count in self.calls.items()}


class RecordedTarget:
    """A target used for one role of one case: cache first, then the call; all counted."""

    def __init__(
        self,
        runtime: RunnableTarget,
        role: CallRole,
        ledger: CallLedger,
        cache: ResponseCache | None = None,
    ) -> None:
        self._runtime = runtime
        self._role = role
        self._ledger = ledger
        self._cache = cache

    @property
    def name(self) -> str:
        """The target's name."""
        return self._runtime.name

    async def complete(self, request: ProviderRequest) -> ProviderResponse:
        """The cached reply to ``request`` if there is one, else the target's (then cached).

        A failed call is counted too (its time and requests) before its error goes on.
        """
        started = time.perf_counter()
        key = cache_key(self._runtime.name, request) if self._cache is not None else None
        response = None
        if self._cache is not None and key is not None:
            response = await self._cache.get(key)
            if response is not None:
                response = response.model_copy(update={"cached": True})
        if response is None:
            try:
                response = await self._runtime.complete(request)
            except ProviderError as exc:
                elapsed_ms = (time.perf_counter() - started) * 1000
                self._ledger.add_failure(self._role, self.name, exc, elapsed_ms)
                raise
            if self._cache is not None and key is not None:
                await self._cache.put(key, response)
        elapsed_ms = (time.perf_counter() - started) * 1000
        self._ledger.add(self._role, self.name, response, elapsed_ms)
        return response
