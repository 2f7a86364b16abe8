"""The typed bundle of long-lived resources the lifespan builds and routes depend on."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from app.evaluation.prepared import PreparedRun
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.offload import cpu_process
from app.observability.links import Links
from app.observability.logging import add_log_secrets
from app.observability.metrics import Metrics
from app.providers.adapters.http import tls_context
from app.providers.limiter import local_limiter
from app.providers.registry import ProviderRegistry
from app.runs.database import database_url
from app.runs.executor import InProcessExecutor, RunSlots
from app.runs.notify.webhook_endpoints import WebhookEndpointStore
from app.runs.notify.webhook_secrets import SecretBox
from app.runs.notify.webhook_sender import WebhookSender
from app.runs.notify.webhooks import Outbox, WebhookStore
from app.runs.postgres.fleet import FleetRuns, run_limit_key
from app.runs.postgres.fleet_limits import FleetLimits
from app.runs.postgres.jobs import asyncpg_dsn
from app.runs.postgres.worker import CaseWorker
from app.runs.spec import RunSpec, prepare_stored_run
from app.runs.storage.cache import StoredResponseCache
from app.runs.storage.store import RunStore
from app.runs.supervisor import RunScheduler, RunSupervisor
from app.sandbox import sweep_stale
from app.services.openai_evals import OpenAIEvalService
from app.services.openai_imports import OpenAIImportService
from app.services.runs import RunService
from app.services.sample import ensure_sample_run
from app.services.webhooks import WebhookService
from app.settings import Settings

logger = logging.getLogger("app.services")


@dataclass(frozen=True)
class Services:
    """Everything a request may need beyond its own body, built once per app."""

    settings: Settings
    metrics: Metrics
    providers: ProviderRegistry
    store: RunStore
    supervisor: RunScheduler
    runs: RunService
    exit_stack: AsyncExitStack
    openai_evals: OpenAIEvalService
    links: Links
    """The state of the long-lived database links (PostgreSQL): readiness and metrics."""
    webhooks: WebhookService
    openai_imports: OpenAIImportService

    async def aclose(self) -> None:
        """Release every resource, last opened first."""
        await self.exit_stack.aclose()


def process_name(settings: Settings) -> str:
    """This process's name in claims and metrics: the replica's name plus a token of its own.

    Replicas may share a name (containers may share a host name), so the name alone would let
    two processes take each other's claims; the process id and token make every name unique.
    """
    name = (settings.instance_id or socket.gethostname())[:120]
    return f"{name}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


async def build_services(
    settings: Settings,
    metrics: Metrics,
    *,
    execute_cases: bool | None = None,
) -> Services:
    """Open the store (migrating it), the targets, what executes runs, and the sample run.

    SQLite: runs execute in this process (``RunSupervisor``), resumed on start. PostgreSQL:
    cases are jobs of the task queue, run by every worker on the database (``FleetRuns``;
    this process is one of them unless ``execute_cases`` is off), under fleet-wide limits.
    Closing stops the runs first, then the targets' clients, then the store.
    """
    stack = AsyncExitStack()
    swept = await asyncio.to_thread(sweep_stale)  # what processes killed with -9 left behind
    if swept:
        logger.info("removed %d stale scratch folders of ended processes", len(swept))
    links = Links()
    await asyncio.to_thread(cpu_process.start)
    stack.push_async_callback(asyncio.to_thread, cpu_process.stop)
    try:
        store = await RunStore.open(database_url(settings))
        stack.push_async_callback(store.aclose)
        webhook_store = WebhookStore(store)
        endpoint_store = WebhookEndpointStore(store)
        key = settings.webhook_secrets_key
        box = SecretBox(key.get_secret_value()) if key is not None else None
        add_log_secrets(settings.secret_values())
        store.outbox = Outbox(tuple(settings.webhooks))  # registered endpoints: rows
        sender = WebhookSender(settings, webhook_store, endpoint_store, box)
        sender.start()
        stack.push_async_callback(sender.aclose)
        fleet: FleetLimits | None = None
        name = process_name(settings)
        if store.job_queue:
            dsn = asyncpg_dsn(database_url(settings))
            fleet = FleetLimits(dsn, name, ttl_seconds=settings.claim_timeout_seconds, links=links)
            await fleet.start()
            stack.push_async_callback(fleet.aclose)
        tls_context()  # the CA bundle loaded now rather than on a run's first calls
        providers = ProviderRegistry(
            settings,
            observer=metrics,
            limiters=fleet.target_limiters() if fleet else local_limiter,
        )
        stack.push_async_callback(providers.aclose)
        supervisor = _scheduler(
            settings, store, providers, fleet, metrics, links, name, execute_cases
        )
        stack.push_async_callback(supervisor.aclose)
        await supervisor.start()
        runs = RunService(settings, store, supervisor, providers)
        openai_evals = OpenAIEvalService(settings, store, supervisor, providers)
        await ensure_sample_run(settings, providers, runs, openai_evals)
    except BaseException:
        await stack.aclose()
        raise
    metrics.watch(limiters=providers, statuses=store, links=links)
    webhooks = WebhookService(settings, webhook_store, endpoint_store, box)
    imports = OpenAIImportService(openai_evals, store)
    return Services(
        settings,
        metrics,
        providers,
        store,
        supervisor,
        runs,
        stack,
        openai_evals,
        links,
        webhooks,
        imports,
    )


def _scheduler(
    settings: Settings,
    store: RunStore,
    providers: ProviderRegistry,
    fleet: FleetLimits | None,
    metrics: Metrics,
    links: Links,
    name: str,
    execute_cases: bool | None,
) -> RunScheduler:
    """The embedded supervisor (SQLite), or the fleet's runs and this process's worker."""
    cache = StoredResponseCache(store)
    programs = ProgramRunner.from_settings(settings)

    async def prepare(stored: dict[str, Any]) -> PreparedRun:
        return prepare_stored_run(RunSpec.model_validate(stored), providers, cache, programs)

    if fleet is None:
        executor = InProcessExecutor(store, prepare)
        return RunSupervisor(store, executor, max_active_runs=settings.max_active_runs)

    def run_slots(run_id: str, max_concurrency: int) -> Any:
        return fleet.limiter(run_limit_key(run_id), max_concurrency).slot()

    slots: RunSlots = run_slots
    runs = FleetRuns(store, InProcessExecutor(store, prepare, run_slots=slots), fleet, links=links)
    if settings.execute_cases if execute_cases is None else execute_cases:
        runs.worker = CaseWorker(
            runs.run_case,
            dsn=asyncpg_dsn(database_url(settings)),
            name=name,
            max_cases=settings.worker_max_cases,
            claim_timeout_seconds=settings.claim_timeout_seconds,
            observer=metrics,
            links=links,
        )
    return runs
