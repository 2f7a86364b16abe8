"""Serve ``POST /evaluate``: load the suite, plan the run, run it inline, shape the reply.

Two ways to deliver: ``collect_results`` (every record, then the summary) and
``stream_results`` (one NDJSON line per record as each case finishes, then the summary).
Both run the cases through ``orchestrator.run_cases``; cancelling either cancels the cases.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from app.errors import PayloadTooLarge
from app.evaluation.context import CaseContext, TargetLookup
from app.evaluation.orchestrator import run_cases
from app.evaluation.plan import RunPlan, build_run_plan
from app.evaluation.records import ResultRecord
from app.evaluation.summary import SummaryBuilder
from app.formatting import FormatOptions
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


async def prepare_evaluation(
    request: EvaluateRequest, settings: Settings, providers: TargetLookup
) -> PreparedRun:
    """Load and check the suite and its files, resolve the targets: no provider is called.

    Raises:
        InvalidRequest: The suite, a file or a target is not valid (every problem listed).
        PayloadTooLarge: More cases than ``evaluate_max_cases``: use the durable runs API.
    """
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

    await run_cases(run.suite, run.plan, run.context, keep)
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
