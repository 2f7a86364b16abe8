"""The durable runs service: what each ``/runs`` route calls (one method per route)."""

from __future__ import annotations

import builtins
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence

import orjson

from app.errors import (
    FieldError,
    InvalidRequest,
    PayloadTooLarge,
    RunNotFound,
    RunStateConflict,
)
from app.evaluation.context import TargetLookup
from app.evaluation.prepared import PreparedRun
from app.evaluation.summary import RunSummary
from app.evaluators.catalog import program_reason
from app.evaluators.config import EvaluatorConfig
from app.runs.models import NewCase, NewRun, RunInfo, StoredEvent
from app.runs.reviewed import reviewed_facts, with_review
from app.runs.spec import RunSpec, build_run_spec, case_definition
from app.runs.storage.events import parse_last_event_id, stream_run_events
from app.runs.storage.store import RunStore
from app.runs.summary import summarize_results
from app.runs.supervisor import RunScheduler
from app.schemas.runs import (
    RegradeRequest,
    ResultPage,
    RunList,
    RunObject,
    RunPatch,
    RunProgress,
    RunRequest,
)
from app.schemas.viewer import CaseDetail, NumberedRecord
from app.services.preparation import prepare_run
from app.settings import Settings


def new_run_id() -> str:
    """A fresh, unguessable run id."""
    return f"run_{uuid.uuid4().hex}"


def body_hash(request: RunRequest) -> str:
    """A hash of the request's content, to tell a replayed ``Idempotency-Key`` from a reuse."""
    canonical = json.dumps(request.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def stored_cases(run: PreparedRun) -> Iterator[NewCase]:
    """The rows of a prepared run's cases: one per case, or one per (case, arm) in case order.

    Case by case, arm by arm: the arms of a run advance together, each within its target's
    limits, so a run takes the time of its slowest arm.
    """
    if not run.arm_runs:
        for case in run.cases:
            yield NewCase(eval_id=case.case.id, definition=case_definition(case))
        return
    arm_cases = [{c.case.id: c for c in arm_run.cases} for arm_run in run.arm_runs]
    for case in run.cases:
        for index, cases in enumerate(arm_cases):
            if (formatted := cases.get(case.case.id)) is not None:  # a test may skip a prompt
                yield NewCase(
                    eval_id=case.case.id, definition=case_definition(formatted), arm=index
                )


class RunService:
    """Submits, shows, streams, cancels, retries, regrades and deletes runs."""

    def __init__(
        self,
        settings: Settings,
        store: RunStore,
        supervisor: RunScheduler,
        providers: TargetLookup,
    ) -> None:
        self._settings = settings
        self._store = store
        self._supervisor = supervisor
        self._providers = providers

    async def submit(
        self, request: RunRequest, idempotency_key: str | None, caller: str | None = None
    ) -> tuple[RunObject, bool]:
        """Store a run of the request's suite and start it; returns it and whether it is new.

        Idempotency keys are the caller's own: two callers may use the same key.
        """
        idempotency = None
        if idempotency_key:
            idempotency = (f"{caller or ''}:{idempotency_key}", body_hash(request))
        return await self._create(request, new_run_id(), idempotency, caller)

    async def ensure_sample(self, run_id: str, request: RunRequest) -> RunObject:
        """Create the run ``run_id`` of ``request`` (no owner) unless it exists.

        Replicas starting together create it once: the second insert finds the first one's
        run under the same reserved idempotency key (callers' keys all contain a ``:``).
        """
        try:
            return await self.get(run_id)
        except RunNotFound:
            run, _ = await self._create(request, run_id, (f"sample-run-{run_id}", run_id), None)
            return run

    async def _create(
        self,
        request: RunRequest,
        run_id: str,
        idempotency: tuple[str, str] | None,
        caller: str | None,
    ) -> tuple[RunObject, bool]:
        if idempotency is not None:
            existing = await self._store.run_for_key(*idempotency)
            if existing is not None:
                return await self._view(existing), False
        run = await self._prepare(request)
        spec = build_run_spec(run)
        new_run = NewRun(
            id=run_id,
            kind="evaluate",
            target=run.plan.target,
            judge_target=run.plan.judge_target,
            spec=spec.model_dump(mode="json", by_alias=True),
            owner=caller,
            name=run.plan.dataset,
            arms=run.plan.arms,
            tags=tuple(request.tags),
        )
        stored, created = await self._store.create_run(
            new_run, stored_cases(run), idempotency=idempotency
        )
        if created:
            self._supervisor.submit(stored.id)
        return await self._view(stored), created

    async def _prepare(self, request: RunRequest) -> PreparedRun:
        if request.inline_targets:
            raise InvalidRequest(
                "inline targets are not accepted by durable runs: their keys are never "
                "stored, so the run could not resume after a restart; configure the target "
                "in the targets file, or use POST /evaluate",
                errors=[FieldError(path="targets", message="not accepted by /runs")],
            )
        limit = self._settings.max_cases_per_run
        return await prepare_run(
            request,
            self._settings,
            self._providers,
            max_cases=limit,
            too_many=lambda _, described: PayloadTooLarge(
                f"the suite has {described}; a run holds at most {limit} (EVAL_MAX_CASES_PER_RUN, "
                "cases x trials); split it, select cases with case_ids or lower repeat"
            ),
            use_cache=request.cache,
        )

    async def _view(
        self, run: RunInfo, reviewed: int = 0, tags: Sequence[str] | None = None
    ) -> RunObject:
        """The run as the API shows it; with ``reviewed`` cases, its summary as reviewed.

        ``tags``: the run's, when the caller read them already (a page of runs reads them
        in one query); else they are read here.
        """
        if tags is None:
            tags = (await self._store.tags_of([run.id])).get(run.id, [])
        summary = run.summary
        if reviewed:
            facts = reviewed_facts(
                await self._store.result_facts(run.id), await self._store.reviewed_outcomes(run.id)
            )
            reviewed_summary = summarize_results(facts).model_copy(update={"reviewed": reviewed})
            summary = reviewed_summary.model_dump()
        elif summary is None and run.done:
            summary = summarize_results(await self._store.result_facts(run.id)).model_dump()
        return RunObject(
            id=run.id,
            status=run.status,
            progress=RunProgress(done=run.done, total=run.total),
            summary=RunSummary.model_validate(summary) if summary is not None else None,
            target=run.target,
            judge_target=run.judge_target,
            name=run.name,
            tags=list(tags),
            created_at=run.created_at,
            started_at=run.started_at,
            finished_at=run.finished_at,
            kind=run.kind,
            parent_run_id=run.parent_run_id,
            error=run.error,
            arms=list(run.arms) or None,
        )

    async def _owned(self, run_id: str, caller: str | None) -> RunInfo:
        """The run, if ``caller`` may see it (every run when authentication is off)."""
        run = await self._store.get_run(run_id)
        if caller is not None and run.owner != caller:
            raise RunNotFound(f"no run has the id {run_id!r}")
        return run

    async def owned(self, run_id: str, caller: str | None) -> RunInfo:
        """The run, if ``caller`` may see it; else 404 (for services working on a run's parts)."""
        return await self._owned(run_id, caller)

    async def runs_in_flight(self, caller: str | None) -> int:
        """The caller's runs queued or running now (everyone's when authentication is off)."""
        return await self._store.count_active_runs(caller)

    async def get(self, run_id: str, caller: str | None = None) -> RunObject:
        """The run, with the summary of the cases finished so far (as people reviewed them)."""
        run = await self._owned(run_id, caller)
        return await self._view(run, (await self._store.review_counts([run.id])).get(run.id, 0))

    async def list(
        self,
        *,
        status: str | None,
        limit: int | None,
        cursor: str | None,
        caller: str | None = None,
        tag: str | None = None,
        name: str | None = None,
    ) -> RunList:
        """One page of the caller's runs, newest first (of ``tag``, ``name`` when given)."""
        page = await self._store.list_runs(
            status=status,
            limit=limit or self._settings.runs_page_size,
            cursor=cursor,
            owner=caller,
            tag=tag,
            name=name,
        )
        run_ids = [run.id for run in page.items]
        reviewed = await self._store.review_counts(run_ids)
        tags = await self._store.tags_of(run_ids)
        runs = [
            await self._view(run, reviewed.get(run.id, 0), tags.get(run.id, []))
            for run in page.items
        ]
        return RunList(runs=runs, next_cursor=page.next_cursor)

    async def update(self, run_id: str, patch: RunPatch, caller: str | None = None) -> RunObject:
        """Change what a run's owner may change (its tags), whatever its status."""
        await self._owned(run_id, caller)
        await self._store.set_tags(run_id, patch.tags)
        return await self.get(run_id, caller)

    async def results(
        self,
        run_id: str,
        *,
        status: str | None,
        limit: int | None,
        cursor: str | None,
        caller: str | None = None,
    ) -> ResultPage:
        """One page of the run's records, in case order."""
        await self._owned(run_id, caller)
        page = await self._store.list_results(
            run_id, status=status, limit=limit or self._settings.runs_page_size, cursor=cursor
        )
        return ResultPage(results=[json.loads(r) for r in page.items], next_cursor=page.next_cursor)

    async def export(
        self, run_id: str, *, status: str | None, caller: str | None = None
    ) -> AsyncIterator[bytes]:
        """Every record of the run as JSONL, streamed from the database (404 checked first)."""
        await self._owned(run_id, caller)

        async def lines() -> AsyncIterator[bytes]:
            async for record in self._store.iter_results(run_id, status=status):
                yield record.encode() + b"\n"

        return lines()

    async def numbered_records(
        self, run_id: str, caller: str | None = None
    ) -> builtins.list[NumberedRecord]:
        """Every record of the run with its case number, in case order.

        Parsed by orjson: the viewer reads every record of a run on each look.
        """
        await self._owned(run_id, caller)
        reviews = await self._store.reviews(run_id)
        return [
            NumberedRecord(seq=seq, record=with_review(orjson.loads(record), reviews.get(seq)))
            async for seq, record in self._store.iter_numbered_results(run_id)
        ]

    async def case(self, run_id: str, seq: int, caller: str | None = None) -> CaseDetail:
        """Case number ``seq`` of the run: its stored definition, record and neighbours."""
        run = await self._owned(run_id, caller)
        if not 0 <= seq < run.total:
            raise RunNotFound(f"run {run_id!r} has no case number {seq} (it has {run.total})")
        stored = await self._store.load_case(run_id, seq)
        record = await self._store.result_at(run_id, seq)
        review = (await self._store.reviews(run_id)).get(seq)
        return CaseDetail(
            run_id=run_id,
            seq=seq,
            total=run.total,
            definition=json.loads(stored.definition),
            record=with_review(json.loads(record), review) if record is not None else None,
            previous=seq - 1 if seq > 0 else None,
            next=seq + 1 if seq + 1 < run.total else None,
        )

    async def events(
        self, run_id: str, last_event_id: str | None, caller: str | None = None
    ) -> AsyncIterator[StoredEvent]:
        """The run's events after ``Last-Event-ID`` (404 checked first)."""
        await self._owned(run_id, caller)
        return stream_run_events(self._store, run_id, after=parse_last_event_id(last_event_id))

    async def cancel(self, run_id: str, caller: str | None = None) -> RunObject:
        """Stop the run; finished results are kept (a finished run is returned as is)."""
        await self._owned(run_id, caller)
        return await self._view(await self._supervisor.cancel(run_id))

    async def retry(self, run_id: str, caller: str | None = None) -> RunObject:
        """Run again the cases of a finished run whose status is ``error`` or ``judge_error``."""
        await self._owned(run_id, caller)
        if await self._store.reopen_for_retry(run_id):
            self._supervisor.submit(run_id)
        return await self.get(run_id)

    async def regrade(
        self, run_id: str, request: RegradeRequest, caller: str | None = None
    ) -> RunObject:
        """A new run grading the stored candidate answers of a finished run again."""
        source = await self._owned(run_id, caller)
        if not source.finished:
            raise RunStateConflict(f"run {run_id!r} is {source.status}; regrade needs it finished")
        spec = RunSpec.model_validate(await self._store.load_spec(run_id))
        judge = self._providers.get(request.judge_target or spec.plan.judge_target)
        arms = spec.plan.arms
        if arms and request.judge_target:  # the judge asked for grades every arm
            arms = tuple(arm.model_copy(update={"judge_target": judge.name}) for arm in arms)
        plan = spec.plan.model_copy(
            update={
                "judge_target": judge.name,
                "use_cache": spec.plan.use_cache if request.cache is None else request.cache,
                "arms": arms,
            }
        )
        refuse_programs(request.evaluators or ())
        evaluators = tuple(request.evaluators) if request.evaluators else spec.evaluators
        regraded = spec.model_copy(update={"plan": plan, "evaluators": evaluators})
        new_run = NewRun(
            id=new_run_id(),
            kind="regrade",
            target=source.target,
            judge_target=judge.name,
            spec=regraded.model_dump(mode="json", by_alias=True),
            parent_run_id=source.id,
            owner=source.owner,
            name=source.name,
            arms=source.arms,
            tags=tuple(request.tags),
        )
        run = await self._store.create_regrade_run(new_run, source.id)
        if request.keep_reviews:
            await self._store.copy_reviews(source.id, run.id)
        self._supervisor.submit(run.id)
        return await self._view(run)

    async def delete(self, run_id: str, caller: str | None = None) -> None:
        """Remove a finished run and everything stored with it."""
        await self._owned(run_id, caller)
        await self._store.delete_run(run_id)


def refuse_programs(evaluators: Sequence[EvaluatorConfig]) -> None:
    """Refuse regrade graders that would run a program or call out (requests never choose one).

    Programs run only as a suite file under a workspace root names them; a regrade's graders
    come from the request, so each such grader is an error naming it (nothing is looked up
    on disk, so the message says nothing of the server's folders).
    """
    errors = [
        FieldError(
            path=f"evaluators[{index}]",
            message=f"grader {config.name!r} cannot be sent in a regrade: {reason}",
        )
        for index, config in enumerate(evaluators)
        if (reason := program_reason(config)) is not None
    ]
    if errors:
        detail = "; ".join(error.message for error in errors[:5])
        raise InvalidRequest(
            f"{detail} (programs run only as named by a suite file under a workspace root)",
            errors=errors,
        )
