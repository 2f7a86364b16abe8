"""The typed bundle of long-lived resources the lifespan builds and routes depend on."""

from __future__ import annotations

import os
import socket
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import httpx

from app.evaluation.prepared import PreparedRun
from app.evaluators.programs import ProgramRunner
from app.observability.logging import add_log_secrets
from app.observability.metrics import Metrics
from app.providers.registry import ProviderRegistry
from app.runs.cache import StoredResponseCache
from app.runs.database import database_url
from app.runs.executor import InProcessExecutor
from app.runs.spec import RunSpec, prepare_stored_run
from app.runs.store import RunStore
from app.runs.supervisor import RunSupervisor
from app.services.openai_evals import OpenAIEvalService
from app.services.runs import RunService
from app.services.sample import ensure_sample_run
from app.settings import Settings


def lease_holder(settings: Settings) -> str:
    """This process's name in run leases: the replica's name plus a token of its own.

    Replicas may share a name (containers may share a host name), so the name alone would let
    two processes execute one run together; the token makes every process's leases its own.
    """
    name = (settings.instance_id or socket.gethostname())[:120]
    return f"{name}/{os.getpid()}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class Services:
    """Everything a request may need beyond its own body, built once per app."""

    settings: Settings
    metrics: Metrics
    providers: ProviderRegistry
    store: RunStore
    supervisor: RunSupervisor
    runs: RunService
    exit_stack: AsyncExitStack
    openai_evals: OpenAIEvalService

    async def aclose(self) -> None:
        """Release every resource, last opened first."""
        await self.exit_stack.aclose()


async def build_services(
    settings: Settings, metrics: Metrics, *, transport: httpx.AsyncBaseTransport | None = None
) -> Services:
    """Open the targets, migrate the database, resume interrupted runs, add the sample run.

    Closing stops the runs first, then the store, then the targets' clients.
    """
    stack = AsyncExitStack()
    try:
        providers = ProviderRegistry(settings, transport=transport, observer=metrics)
        stack.push_async_callback(providers.aclose)
        add_log_secrets(secret for target in settings.targets for secret in target.secret_values())
        store = await RunStore.open(database_url(settings))
        stack.push_async_callback(store.aclose)
        cache = StoredResponseCache(store)
        programs = ProgramRunner.from_settings(settings)

        async def prepare(stored: dict[str, Any]) -> PreparedRun:
            return prepare_stored_run(RunSpec.model_validate(stored), providers, cache, programs)

        supervisor = RunSupervisor(
            store,
            InProcessExecutor(store, prepare),
            max_active_runs=settings.max_active_runs,
            holder=lease_holder(settings),
            lease_seconds=settings.run_lease_seconds,
        )
        stack.push_async_callback(supervisor.aclose)
        await supervisor.start()
        runs = RunService(settings, store, supervisor, providers)
        openai_evals = OpenAIEvalService(settings, store, supervisor, providers)
        await ensure_sample_run(settings, providers, runs, openai_evals)
    except BaseException:
        await stack.aclose()
        raise
    metrics.watch(limiters=providers, statuses=store)
    return Services(settings, metrics, providers, store, supervisor, runs, stack, openai_evals)
