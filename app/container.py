"""The typed bundle of long-lived resources the lifespan builds and routes depend on."""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import httpx

from app.observability.metrics import Metrics
from app.providers.registry import ProviderRegistry
from app.settings import Settings, read_environment


@dataclass
class Services:
    """Everything a request may need beyond its own body, built once per app."""

    settings: Settings
    transport: httpx.AsyncBaseTransport | None = None
    exit_stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    metrics: Metrics = field(default_factory=Metrics)
    providers: ProviderRegistry = field(init=False)

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
    services.providers = ProviderRegistry(settings, transport=transport, environ=read_environment())
    services.exit_stack.push_async_callback(services.providers.aclose)
    return services
