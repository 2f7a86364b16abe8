"""Serve ``POST /evaluate``: load the suite, plan the run, run it inline, shape the reply.

Two ways to deliver: ``collect_results`` (every record, then the summary) and
``stream_results`` (one NDJSON line per record as each case finishes, then the summary).
Both run the cases through ``orchestrator.run_cases``; cancelling either cancels the cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.errors import FieldError, InvalidRequest, PayloadTooLarge
from app.evaluation.context import CaseContext, RunnableTarget, TargetLookup
from app.evaluation.orchestrator import run_cases
from app.evaluation.plan import RunPlan, build_run_plan
from app.evaluation.records import ResultRecord
from app.evaluation.summary import SummaryBuilder
from app.formatting import FormatOptions
from app.providers.registry import ProviderRegistry, TargetRuntime
from app.providers.targets import inline_target
from app.schemas.evaluate import EvaluateRequest, EvaluateResponse
from app.settings import Settings
from app.suites.files import FileSource
from app.suites.loader import load_suite
from app.suites.model import EvalSuite

RUNS_PATH = "/runs"


@dataclass(frozen=True)
class PreparedRun:
    """A loaded suite (selected cases only), its plan and the context its cases run in."""

    suite: EvalSuite
    plan: RunPlan
    context: CaseContext
    warnings: tuple[str, ...] = ()
    inline_targets: tuple[TargetRuntime, ...] = ()

    async def release(self) -> None:
        """Close the request's own targets (their clients), once its cases are done."""
        for runtime in self.inline_targets:
            await runtime.aclose()


class RequestTargets:
    """The configured targets plus a request's inline ones."""

    def __init__(self, configured: TargetLookup, inline: Mapping[str, RunnableTarget]) -> None:
        self._configured = configured
        self._inline = inline

    def get(self, name: str) -> RunnableTarget:
        """The inline target called ``name``, else the configured one (``UnknownTarget``)."""
        inline = self._inline.get(name)
        return inline if inline is not None else self._configured.get(name)


def open_inline_targets(
    configs: Sequence[Mapping[str, Any]] | None, settings: Settings, registry: ProviderRegistry
) -> dict[str, TargetRuntime]:
    """Validate every inline target of a request, then open a runtime for each.

    Raises:
        InlineTargetRefused: Inline targets are disabled, or one is not valid or not allowed.
        InvalidRequest: Two inline targets, or an inline and a configured one, share a name.
    """
    if not configs:
        return {}
    checked = [inline_target(config, settings) for config in configs]
    names = [target.name for target in checked]
    for index, name in enumerate(names):
        if name in registry.names() or name in names[:index]:
            raise InvalidRequest(
                f"targets[{index}].name: a target called {name!r} already exists",
                errors=[FieldError(path=f"targets[{index}].name", message="name already used")],
            )
    return {target.name: registry.build_runtime(target) for target in checked}


async def prepare_evaluation(
    request: EvaluateRequest,
    settings: Settings,
    providers: TargetLookup,
    inline: Mapping[str, TargetRuntime] | None = None,
) -> PreparedRun:
    """Load and check the suite and its files, resolve the targets: no provider is called.

    ``inline`` targets (see ``open_inline_targets``) belong to the prepared run from here
    on: they are closed if preparation fails, else by ``release`` when the run is done.

    Raises:
        InvalidRequest: The suite, a file or a target is not valid (every problem listed).
        PayloadTooLarge: More cases than ``evaluate_max_cases``: use the durable runs API.
    """
    inline = dict(inline or {})
    try:
        prepared = await _prepare(request, settings, RequestTargets(providers, inline))
    except BaseException:
        for runtime in inline.values():
            await runtime.aclose()
        raise
    return replace(prepared, inline_targets=tuple(inline.values()))


async def _prepare(
    request: EvaluateRequest, settings: Settings, providers: TargetLookup
) -> PreparedRun:
    options = None
    if request.guideline_patterns:
        options = FormatOptions(guideline_patterns=tuple(request.guideline_patterns))
    loaded = await load_suite(
        request.suite,
        file_source=FileSource.from_settings(settings, request.files),
        case_ids=request.case_ids,
        allow_missing_files=request.allow_missing_files,
        options=options,
    )
    count = len(loaded.suite.cases)
    if count > settings.evaluate_max_cases:
        raise PayloadTooLarge(
            f"the suite selects {count} cases; POST /evaluate runs at most "
            f"{settings.evaluate_max_cases} inline. Start a durable run with POST {RUNS_PATH} "
            "and read its results as they come.",
            extra={"cases": count, "max_cases": settings.evaluate_max_cases, "runs": RUNS_PATH},
        )
    plan = build_run_plan(
        loaded.suite,
        providers,
        default_max_concurrency=settings.run_concurrency,
        target=request.target,
        judge_target=request.judge_target,
        max_concurrency=request.max_concurrency,
        guideline_patterns=request.guideline_patterns,
        judge_attempts=settings.judge_retries + 1,
        case_timeout_seconds=settings.case_timeout_seconds,
    )
    context = CaseContext(providers=providers, files=loaded.files)
    return PreparedRun(loaded.suite, plan, context, tuple(loaded.warnings))


async def collect_results(run: PreparedRun) -> EvaluateResponse:
    """Run every case; the records in suite order and the summary."""
    records: dict[str, ResultRecord] = {}
    summary = SummaryBuilder()

    async def keep(record: ResultRecord) -> None:
        records[record.eval_id] = record
        summary.add(record)

    try:
        await run_cases(run.suite, run.plan, run.context, keep)
    finally:
        await run.release()
    ordered = [records[case.id] for case in run.suite.cases if case.id in records]
    return EvaluateResponse(summary=summary.summary(), results=ordered)


async def stream_results(run: PreparedRun) -> AsyncGenerator[bytes, None]:
    """NDJSON: one record per line as each case finishes, then ``{"summary": ...}``.

    Closing the iterator early (the client went away) cancels the cases still running.
    """
    finished: asyncio.Queue[ResultRecord | None] = asyncio.Queue()
    summary = SummaryBuilder()

    async def produce() -> None:
        try:
            await run_cases(run.suite, run.plan, run.context, finished.put)
        finally:
            finished.put_nowait(None)

    producer = asyncio.create_task(produce())
    try:
        while (record := await finished.get()) is not None:
            summary.add(record)
            yield record.model_dump_json(by_alias=True).encode() + b"\n"
        await producer
        yield b'{"summary": ' + summary.summary().model_dump_json().encode() + b"}\n"
    finally:
        if not producer.done():
            producer.cancel()
            await asyncio.gather(producer, return_exceptions=True)
        await run.release()
