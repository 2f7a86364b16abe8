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

from app.providers.adapters.anthropic import AnthropicAdapter
from app.providers.adapters.azure import AzureAdapter
from app.providers.adapters.cli import CliAdapter
from app.providers.adapters.embeddings import EmbeddingsAdapter, MockEmbeddingsAdapter
from app.providers.adapters.gemini import GeminiAdapter
from app.providers.adapters.http import ConnectorFactory
from app.providers.adapters.huggingface import HuggingFaceClassifierAdapter
from app.providers.adapters.mock import MockAdapter
from app.providers.adapters.moderation import ModerationAdapter
from app.providers.adapters.openai import OpenAIAdapter
from app.providers.adapters.responses import ResponsesAdapter
from app.providers.base import CallObserver, CallRole, Provider, ProviderRequest
from app.providers.errors import UnknownTarget
from app.providers.limiter import LimiterFactory, LimiterState, local_limiter
from app.providers.preview import ProviderPreview
from app.providers.retry import Sleep
from app.providers.runtime import TargetDescription, TargetRuntime, retry_policy
from app.settings import Settings
from app.settings.targets import (
    TARGET_ADAPTER,
    TargetConfig,
    canonical_provider,
    comparison_mock_targets,
    with_default_target,
)

__all__ = ["ADAPTERS", "ProviderRegistry", "TargetDescription", "TargetRuntime"]

STAND_IN_MODEL = "<model>"
# What a preview by provider name stands in for the target that does not exist (no key: the
# preview shows no headers, and the body carries none).
STAND_IN_TARGETS: dict[str, dict[str, Any]] = {
    "openai": {"model": STAND_IN_MODEL},
    "openai-responses": {"model": STAND_IN_MODEL, "api_format": "responses"},
    "azure": {"endpoint": "https://resource.openai.azure.com", "api_key": "", "deployment": "d"},
    "anthropic": {"api_key": "", "model": STAND_IN_MODEL},
    "gemini": {"api_key": "", "model": STAND_IN_MODEL},
}


@dataclass(frozen=True)
class AdapterOptions:
    """What every adapter factory may use besides the target's own configuration."""

    connector: ConnectorFactory | None
    timeout_seconds: float
    cli_path: str
    max_reply_bytes: int
    cli_max_output_bytes: int = 16 * 1024 * 1024

    def http(self) -> dict[str, Any]:
        """The keyword arguments of every HTTP adapter."""
        return {
            "connector": self.connector,
            "timeout_seconds": self.timeout_seconds,
            "max_reply_bytes": self.max_reply_bytes,
        }


AdapterFactory = Callable[[Any, AdapterOptions], Provider]

_OPENAI_WIRES: dict[str, Callable[..., Provider]] = {
    "responses": ResponsesAdapter,
    "embeddings": EmbeddingsAdapter,
    "moderation": ModerationAdapter,
}
"""The adapter of an OpenAI target's ``api_format`` other than ``chat``."""

ADAPTERS: dict[str, AdapterFactory] = {
    "mock": lambda config, _: (
        MockEmbeddingsAdapter(config) if config.api_format == "embeddings" else MockAdapter(config)
    ),
    "openai": lambda config, options: _OPENAI_WIRES.get(config.api_format, OpenAIAdapter)(
        config, **options.http()
    ),
    "azure": lambda config, options: AzureAdapter(config, **options.http()),
    "anthropic": lambda config, options: AnthropicAdapter(config, **options.http()),
    "gemini": lambda config, options: GeminiAdapter(config, **options.http()),
    "huggingface": lambda config, options: HuggingFaceClassifierAdapter(config, **options.http()),
    "cli": lambda config, options: CliAdapter(
        config, path=options.cli_path, max_output_bytes=options.cli_max_output_bytes
    ),
}
"""Each provider's adapter factory (its config is the ``TargetConfig`` of that provider)."""


class ProviderRegistry:
    """All configured targets (``Settings.targets`` plus the mock ``default``), built once.

    With no target configured, the embedded defaults: ``default`` and two more mock targets
    (``comparison_mock_targets``), so a fresh server can run a run on three arms.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        sleep: Sleep = asyncio.sleep,
        observer: CallObserver | None = None,
        limiters: LimiterFactory = local_limiter,
    ) -> None:
        self._settings = settings
        self._observer = observer
        self._sleep = sleep
        self._adapter_options = AdapterOptions(
            connector=None,
            timeout_seconds=settings.provider_attempt_timeout_seconds,
            cli_path=settings.program_path(),
            cli_max_output_bytes=settings.cli_max_output_bytes,
            max_reply_bytes=settings.provider_max_reply_bytes,
        )
        # Every configured secret: a reply echoing any of them has it removed.
        self._secrets = (
            *(secret for target in settings.targets for secret in target.secret_values()),
            *(key.get_secret_value() for key in settings.api_keys),
        )
        self._runtimes: dict[str, TargetRuntime] = {}
        self._stand_ins: dict[str, Provider] = {}
        self.warnings: tuple[str, ...] = settings.skipped_targets
        served = with_default_target(settings.targets, self.warnings)
        if settings.targets_file is None and not settings.targets:
            served += comparison_mock_targets()  # the embedded defaults: three mocks
        for config in served:
            self._runtimes[config.name] = self.build_runtime(config, limiters=limiters)

    def build_runtime(
        self,
        config: TargetConfig,
        *,
        connector: ConnectorFactory | None = None,
        limiters: LimiterFactory = local_limiter,
    ) -> TargetRuntime:
        """A runtime for one target (also for a validated inline target; close it after use).

        ``connector`` replaces the default connections (an inline target's pinned ones).
        Configured targets get the registry's limiters (fleet-wide ones when the service
        shares a PostgreSQL with other workers); inline targets keep in-process limits.
        """
        settings = self._settings
        policies = {role: retry_policy(settings, config, role) for role in CallRole}
        # The client's own timeout must not cut an attempt before the role's limit does.
        longest = max(policy.attempt_timeout_seconds for policy in policies.values())
        options = replace(self._adapter_options, timeout_seconds=longest)
        if connector is not None:
            options = replace(options, connector=connector)
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
            secrets=self._secrets,
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

    def runtimes(self) -> list[TargetRuntime]:
        """Every target's runtime, in file order."""
        return list(self._runtimes.values())

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
        """For each name, the exact body its adapter would send and the rewrites.

        A name no target has but a provider does (``openai``, ``anthropic``, ``claude``...)
        previews a stand-in target of that provider, with a placeholder model and a note.

        Raises:
            UnknownTarget: for the first name that is neither a target nor such a provider.
        """
        return {name: self._preview_one(name, request) for name in names}

    def _preview_one(self, name: str, request: ProviderRequest) -> ProviderPreview:
        if name in self._runtimes:
            return self._runtimes[name].preview(request)
        provider = name if name in STAND_IN_TARGETS else canonical_provider(name)
        if provider not in STAND_IN_TARGETS:
            raise UnknownTarget(name, self._runtimes, providers=STAND_IN_TARGETS)
        if provider not in self._stand_ins:
            wire = canonical_provider(provider)
            config = TARGET_ADAPTER.validate_python(
                {"name": provider, "provider": wire, **STAND_IN_TARGETS[provider]}
            )
            self._stand_ins[provider] = ADAPTERS[wire](config, self._adapter_options)
        note = (
            f"no target is named {name!r}: the body a target of provider {provider!r} would "
            f"send ({STAND_IN_MODEL!r} stands for its model)"
        )
        return self._stand_ins[provider].preview(request).model_copy(update={"note": note})

    async def aclose(self) -> None:
        """Close every adapter's client."""
        for runtime in self._runtimes.values():
            await runtime.aclose()
        for adapter in self._stand_ins.values():
            await adapter.aclose()
