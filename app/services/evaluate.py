"""Serve ``POST /evaluate``: prepare the run, run it inline, shape the reply.

Two ways to deliver: ``collect_results`` (every record, then the summary) and
``stream_results`` (one NDJSON line per record as each case finishes, then the summary).
Both run the cases of one ``PreparedRun``; cancelling either cancels the cases, and both
close the request's inline targets when they are done.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import FieldError, InvalidRequest, PayloadTooLarge
from app.evaluation.context import RunnableTarget, TargetLookup
from app.evaluation.prepared import PreparedRun
from app.evaluation.records import ResultRecord
from app.evaluation.select_best import pending, settle_test
from app.evaluation.summary import SummaryBuilder
from app.providers.access.inline import inline_target
from app.providers.registry import ProviderRegistry, TargetRuntime
from app.schemas.evaluate import EvaluateRequest, EvaluateResponse
from app.services.preparation import prepare_run
from app.settings import Settings

RUNS_PATH = "/runs"


@dataclass(frozen=True)
class Evaluation:
    """A prepared run and the request's own targets, closed once its cases are done."""

    run: PreparedRun
    inline_targets: tuple[TargetRuntime, ...] = ()

    async def release(self) -> None:
        """Close the request's own targets (their clients)."""
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

    def names(self) -> list[str]:
        """The inline targets' names, then the configured ones'."""
        return [*self._inline, *self._configured.names()]


async def open_inline_targets(
    configs: Sequence[Mapping[str, Any]] | None, settings: Settings, registry: ProviderRegistry
) -> dict[str, TargetRuntime]:
    """Validate every inline target of a request, then open a runtime for each.

    Each runtime connects only to the addresses its host resolved to when it was checked.

    Raises:
        InlineTargetRefused: Inline targets are disabled, or one is not valid or not allowed.
        InvalidRequest: Two inline targets, or an inline and a configured one, share a name.
    """
    if not configs:
        return {}
    checked = [await inline_target(config, settings) for config in configs]
    names = [target.config.name for target in checked]
    for index, name in enumerate(names):
        if name in registry.names() or name in names[:index]:
            raise InvalidRequest(
                f"targets[{index}].name: a target called {name!r} already exists",
                errors=[FieldError(path=f"targets[{index}].name", message="name already used")],
            )
    return {
        target.config.name: registry.build_runtime(target.config, connector=target.connector)
        for target in checked
    }


async def prepare_evaluation(
    request: EvaluateRequest, settings: Settings, registry: ProviderRegistry
) -> Evaluation:
    """Check the suite, its files and targets, and format its cases: no provider is called.

    Raises:
        InvalidRequest: The suite, a file or a target is not valid (every problem listed).
        InlineTargetRefused: An inline target is not allowed.
        PayloadTooLarge: More cases than ``evaluate_max_cases``: use the durable runs API.
    """
    inline = await open_inline_targets(request.inline_targets, settings, registry)
    limit = settings.evaluate_max_cases

    def too_many(count: int, described: str) -> PayloadTooLarge:
        return PayloadTooLarge(
            f"the suite selects {described}; POST /evaluate runs at most {limit} inline "
            f"(EVAL_EVALUATE_MAX_CASES, cases x trials). Start a durable run with POST "
            f"{RUNS_PATH} and read its results as they come.",
            extra={"cases": count, "max_cases": limit, "runs": RUNS_PATH},
        )

    try:
        run = await prepare_run(
            request, settings, RequestTargets(registry, inline), max_cases=limit, too_many=too_many
        )
    except BaseException:
        for runtime in inline.values():
            await runtime.aclose()
        raise
    return Evaluation(run=run, inline_targets=tuple(inline.values()))


async def collect_results(evaluation: Evaluation) -> EvaluateResponse:
    """Run every case; the records in suite order and the summary."""
    records: dict[tuple[str, int | None], ResultRecord] = {}
    summary = SummaryBuilder()

    async def keep(record: ResultRecord) -> None:
        records[record.eval_id, record.arm.index if record.arm else None] = record
        summary.add(record)

    try:
        await evaluation.run.run(keep)
        if evaluation.run.plan.compares_arms:
            summary = SummaryBuilder()
            for record in await settled(evaluation.run, list(records.values())):
                records[record.eval_id, record.arm.index if record.arm else None] = record
                summary.add(record)
    finally:
        await evaluation.release()
    arms: list[int | None] = [arm.index for arm in evaluation.run.plan.arms] or [None]
    keys = [(c.case.id, arm) for c in evaluation.run.cases for arm in arms]
    ordered = [records[key] for key in keys if key in records]
    derived = evaluation.run.plan.derived_metrics
    return EvaluateResponse(summary=await summary.summary_with(derived), results=ordered)


async def settled(run: PreparedRun, records: list[ResultRecord]) -> list[ResultRecord]:
    """Every record, those of tests with a select-best grader settled across the arms."""
    cases = {formatted.case.id: formatted.case for formatted in run.cases}
    by_test: dict[str, list[ResultRecord]] = {}
    for record in records:
        by_test.setdefault(record.eval_id, []).append(record)
    done: list[ResultRecord] = []
    for eval_id, group in by_test.items():
        group.sort(key=lambda record: record.arm.index if record.arm else 0)
        if any(pending(record) for record in group):
            group = await settle_test(run, group, cases[eval_id])
        done.extend(group)
    return done


async def stream_results(evaluation: Evaluation) -> AsyncGenerator[bytes, None]:
    """NDJSON: one record per line as each case finishes, then ``{"summary": ...}``.

    Closing the iterator early (the client went away) cancels the cases still running.
    """
    finished: asyncio.Queue[ResultRecord | None] = asyncio.Queue()
    summary = SummaryBuilder()

    async def produce() -> None:
        try:
            await evaluation.run.run(finished.put)
        finally:
            finished.put_nowait(None)

    producer = asyncio.create_task(produce())
    waiting: list[ResultRecord] = []  # select-best: settled once every arm has answered
    try:
        while (record := await finished.get()) is not None:
            if pending(record):
                waiting.append(record)
                continue
            summary.add(record)
            yield record.model_dump_json(by_alias=True).encode() + b"\n"
        await producer
        for record in await settled(evaluation.run, waiting) if waiting else ():
            summary.add(record)
            yield record.model_dump_json(by_alias=True).encode() + b"\n"
        done = await summary.summary_with(evaluation.run.plan.derived_metrics)
        yield b'{"summary": ' + done.model_dump_json().encode() + b"}\n"
    finally:
        if not producer.done():
            producer.cancel()
            await asyncio.gather(producer, return_exceptions=True)
        await evaluation.release()
