"""Targets by name: each one's adapter and runtime, built once per app.

The evaluation layer calls ``registry.get(name)`` and ``runtime.complete(request)`` and reads
``runtime.kind``, ``runtime.judge_target`` and ``runtime.max_concurrency`` (the runtime is in
``app.providers.runtime``). This is the only module that picks an adapter by provider name
(``ADAPTERS``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

from app.providers.anthropic import AnthropicAdapter
from app.providers.azure import AzureAdapter
from app.providers.base import CallObserver, CallRole, Provider, ProviderRequest
from app.providers.cli import CliAdapter
from app.providers.errors import UnknownTarget
from app.providers.gemini import GeminiAdapter
from app.providers.limiter import LimiterFactory, LimiterState, local_limiter
from app.providers.mock import MockAdapter
from app.providers.openai import OpenAIAdapter
from app.providers.preview import ProviderPreview
from app.providers.retry import Sleep
from app.providers.runtime import TargetDescription, TargetRuntime, retry_policy
from app.settings import Settings
from app.settings.targets import TargetConfig, with_default_target

__all__ = ["ADAPTERS", "ProviderRegistry", "TargetDescription", "TargetRuntime"]


@dataclass(frozen=True)
class AdapterOptions:
    """What every adapter factory may use besides the target's own configuration."""

    transport: httpx.AsyncBaseTransport | None
    timeout_seconds: float
    cli_path: str


AdapterFactory = Callable[[Any, AdapterOptions], Provider]

ADAPTERS: dict[str, AdapterFactory] = {
    "mock": lambda config, _: MockAdapter(config),
    "openai": lambda config, options: OpenAIAdapter(
        config, transport=options.transport, timeout_seconds=options.timeout_seconds
    ),
    "azure": lambda config, options: AzureAdapter(
        config, transport=options.transport, timeout_seconds=options.timeout_seconds
    ),
    "anthropic": lambda config, options: AnthropicAdapter(
        config, transport=options.transport, timeout_seconds=options.timeout_seconds
    ),
    "gemini": lambda config, options: GeminiAdapter(
        config, transport=options.transport, timeout_seconds=options.timeout_seconds
    ),
    "cli": lambda config, options: CliAdapter(config, path=options.cli_path),
}
"""Each provider's adapter factory (its config is the ``TargetConfig`` of that provider)."""


class ProviderRegistry:
    """All configured targets (``Settings.targets`` plus the mock ``default``), built once."""

    def __init__(
        self,
        settings: Settings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        observer: CallObserver | None = None,
        limiters: LimiterFactory = local_limiter,
    ) -> None:
        self._settings = settings
        self._observer = observer
        self._sleep = sleep
        self._adapter_options = AdapterOptions(
            transport=transport,
            timeout_seconds=settings.provider_attempt_timeout_seconds,
            cli_path=settings.program_path(),
        )
        self._runtimes: dict[str, TargetRuntime] = {}
        for config in with_default_target(settings.targets):
            self._runtimes[config.name] = self.build_runtime(config, limiters=limiters)

    def build_runtime(
        self, config: TargetConfig, *, limiters: LimiterFactory = local_limiter
    ) -> TargetRuntime:
        """A runtime for one target (also for a validated inline target; close it after use).

        Configured targets get the registry's limiters (fleet-wide ones when the service
        shares a PostgreSQL with other workers); inline targets keep in-process limits.
        """
        settings = self._settings
        policies = {role: retry_policy(settings, config, role) for role in CallRole}
        # The client's own timeout must not cut an attempt before the role's limit does.
        longest = max(policy.attempt_timeout_seconds for policy in policies.values())
        options = replace(self._adapter_options, timeout_seconds=longest)
        return TargetRuntime(
            config,
            ADAPTERS[config.provider](config, options),
            policies=policies,
            judge_max_output_tokens=(
                config.judge_max_output_tokens or settings.judge_max_output_tokens
            ),
            max_concurrency=config.max_concurrency or settings.default_target_concurrency,
            sleep=self._sleep,
            observer=self._observer,
            limiters=limiters,
        )

    def get(self, name: str) -> TargetRuntime:
        """The runtime of target ``name``.

        Raises:
            UnknownTarget: no target has that name (422, listing the known ones).
        """
        try:
            return self._runtimes[name]
        except KeyError:
            raise UnknownTarget(name, self._runtimes) from None

    def names(self) -> list[str]:
        """Every target's name, in file order (``default`` last when built in)."""
        return list(self._runtimes)

    def describe(self) -> list[TargetDescription]:
        """Every target without secrets, with live limiter state."""
        return [runtime.describe() for runtime in self._runtimes.values()]

    def limiter_states(self) -> list[tuple[str, str, LimiterState]]:
        """``(target, role, state)`` of every target's limiters (read by ``/metrics``)."""
        return [
            (name, role.value, limiter.state())
            for name, runtime in self._runtimes.items()
            for role, limiter in runtime.limiters.items()
        ]

    def preview(self, names: Sequence[str], request: ProviderRequest) -> dict[str, ProviderPreview]:
        """For each named target, the exact body its adapter would send and the rewrites.

        Raises:
            UnknownTarget: for the first name that is not configured.
        """
        return {name: self.get(name).preview(request) for name in names}

    async def aclose(self) -> None:
        """Close every adapter's client."""
        for runtime in self._runtimes.values():
            await runtime.aclose()
