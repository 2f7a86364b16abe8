"""The typed bundle of long-lived resources the lifespan builds and routes depend on."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import httpx

from app.observability.logging import add_log_secrets
from app.observability.metrics import Metrics
from app.providers.registry import ProviderRegistry
from app.runs.lifecycle import open_runs_layer
from app.runs.service import RunService
from app.runs.store import RunStore
from app.runs.supervisor import RunSupervisor
from app.settings import Settings, read_environment


@dataclass
class Services:
    """Everything a request may need beyond its own body, built once per app."""

    settings: Settings
    transport: httpx.AsyncBaseTransport | None = None
    exit_stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    metrics: Metrics = field(default_factory=Metrics)
    providers: ProviderRegistry = field(init=False)
    store: RunStore = field(init=False)
    supervisor: RunSupervisor = field(init=False)
    runs: RunService = field(init=False)

    async def aclose(self) -> None:
        """Release every resource, last opened first."""
        await self.exit_stack.aclose()


async def build_services(
    settings: Settings,
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    metrics: Metrics | None = None,
) -> Services:
    """Open the service's resources (called by the lifespan)."""
    services = Services(settings=settings, transport=transport, metrics=metrics or Metrics())
    services.providers = ProviderRegistry(
        settings, transport=transport, environ=read_environment(), observer=services.metrics
    )
    services.exit_stack.push_async_callback(services.providers.aclose)
    add_log_secrets(
        secret
        for name in services.providers.names()
        for secret in services.providers.get(name).config.secret_values()
    )
    runs = await open_runs_layer(settings, services.providers, services.exit_stack)
    services.store, services.supervisor, services.runs = runs.store, runs.supervisor, runs.service
    return services
