"""Open the durable runs layer for the lifespan, and close it in the right order."""

from __future__ import annotations

import socket
from contextlib import AsyncExitStack
from dataclasses import dataclass

from app.evaluation.context import TargetLookup
from app.runs.database import database_url
from app.runs.executor import InProcessExecutor
from app.runs.preparation import evaluation_preparer
from app.runs.service import RunService
from app.runs.store import RunStore
from app.runs.supervisor import RunSupervisor
from app.settings import Settings


@dataclass(frozen=True)
class RunsLayer:
    """The store, the supervisor and the service routes call."""

    store: RunStore
    supervisor: RunSupervisor
    service: RunService


async def open_runs_layer(
    settings: Settings, providers: TargetLookup, exit_stack: AsyncExitStack
) -> RunsLayer:
    """Migrate the database, resume interrupted runs; closing stops runs, then the store."""
    store = await RunStore.open(database_url(settings))
    exit_stack.push_async_callback(store.aclose)
    executor = InProcessExecutor(store, evaluation_preparer(providers, store))
    supervisor = RunSupervisor(
        store,
        executor,
        max_active_runs=settings.max_active_runs,
        holder=settings.instance_id or socket.gethostname(),
        lease_seconds=settings.run_lease_seconds,
    )
    exit_stack.push_async_callback(supervisor.aclose)
    await supervisor.start()
    return RunsLayer(
        store=store,
        supervisor=supervisor,
        service=RunService(settings, store, supervisor, providers),
    )
