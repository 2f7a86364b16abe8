"""The OpenAI objects of stored things: an eval, a run (counts, usage), an output item."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from app.runs.models import RunInfo
from app.runs.openai_store import RunTally, StoredEval, StoredEvalRun, StoredOutput
from app.schemas.openai_evals import (
    ApiError,
    ChatTurn,
    CriterionResult,
    EvalObject,
    EvalRunObject,
    GraderResult,
    ModelUsage,
    OutputItem,
    ResultCounts,
    RunStatus,
    Sample,
    SampleUsage,
)

RUN_STATUSES: dict[str, RunStatus] = {
    "queued": "queued",
    "running": "in_progress",
    "completed": "completed",
    "cancelled": "canceled",
    "failed": "failed",
}
"""Durable run status -> the OpenAI run status."""
STORED_STATUSES: dict[str, str] = {value: key for key, value in RUN_STATUSES.items()}
PASSED = ("passed",)
FAILED = ("failed", "borderline", "error", "judge_error")
"""Record statuses an output item shows as ``pass`` and as ``fail`` (errors included)."""
ERRORED = frozenset({"error", "judge_error"})
OUTPUT_ITEM_PREFIX = "outputitem_"


def eval_object(stored: StoredEval) -> EvalObject:
    """The ``eval`` object."""
    return EvalObject(
        id=stored.id,
        name=stored.name,
        created_at=int(stored.created_at.timestamp()),
        metadata=stored.metadata,
        data_source_config=stored.data_source_config,
        testing_criteria=stored.testing_criteria,
    )


def data_source_schema(item_schema: dict[str, Any], include_sample: bool) -> dict[str, Any]:
    """The eval's ``data_source_config.schema``: ``{item, sample?}`` as OpenAI returns it."""
    properties: dict[str, Any] = {"item": item_schema}
    if include_sample:
        properties["sample"] = {
            "type": "object",
            "properties": {"output_text": {"type": "string"}, "output_json": {"type": "object"}},
        }
    return {"type": "object", "properties": properties, "required": list(properties)}


def output_item_id(run_id: str, seq: int) -> str:
    """The id of the output item at position ``seq`` of the run."""
    return f"{OUTPUT_ITEM_PREFIX}{run_id.removeprefix('evalrun_')}_{seq}"


def output_item_seq(item_id: str) -> int | None:
    """The position an output item id names, or None when it is not one of ours."""
    head, _, tail = item_id.rpartition("_")
    if not head.startswith(OUTPUT_ITEM_PREFIX) or not tail.isdigit():
        return None
    return int(tail)


def _counts(run: RunInfo, tally: RunTally) -> ResultCounts:
    def count(statuses: Iterable[str]) -> int:
        return sum(tally.statuses.get(status, 0) for status in statuses)

    return ResultCounts(
        total=run.total,
        passed=count(PASSED),
        failed=count(set(FAILED) - ERRORED),
        errored=count(ERRORED),
    )


def _criteria(criteria: Sequence[dict[str, Any]], tally: RunTally) -> list[CriterionResult]:
    results = []
    for criterion in criteria:
        name = str(criterion["name"])
        passed, failed = tally.graders.get(name, (0, 0))
        results.append(CriterionResult(testing_criteria=name, passed=passed, failed=failed))
    return results


def _usage(model: str | None, judges: Sequence[str], tally: RunTally) -> list[ModelUsage]:
    usages = []
    for role, name in (("candidate", model), ("judge", ", ".join(judges) or None)):
        calls = tally.calls.get(role, 0)
        prompt, completion = tally.tokens.get(role, (0, 0))
        if name is not None and (calls or prompt or completion):
            usages.append(
                ModelUsage(
                    model_name=name,
                    invocation_count=calls,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    total_tokens=prompt + completion,
                )
            )
    return usages


def run_object(
    run: RunInfo,
    stored: StoredEvalRun,
    criteria: Sequence[dict[str, Any]],
    judges: Sequence[str],
    tally: RunTally,
    report_url: str,
) -> EvalRunObject:
    """The ``eval.run`` object of a durable run and the results stored so far."""
    error = ApiError(code="run_failed", message=run.error) if run.error else None
    return EvalRunObject(
        id=run.id,
        eval_id=stored.eval_id,
        name=stored.name,
        model=stored.model or None,
        status=RUN_STATUSES.get(run.status, "failed"),
        created_at=int(stored.created_at.timestamp()),
        metadata=stored.metadata,
        data_source=stored.data_source,
        result_counts=_counts(run, tally),
        per_model_usage=_usage(stored.model or None, judges, tally),
        per_testing_criteria_results=_criteria(criteria, tally),
        error=error,
        report_url=report_url,
    )


def _sample(
    stored: StoredEvalRun, record: dict[str, Any], item_sample: dict[str, Any] | None
) -> Sample:
    raw = record.get("raw_request") or {}
    turns = [ChatTurn(role=m["role"], content=m["content"]) for m in raw.get("chatPrompt") or []]
    tokens = (record.get("usage") or {}).get("candidate") or {}
    prompt, completion = tokens.get("input_tokens", 0), tokens.get("output_tokens", 0)
    answer = record.get("candidate_answer")
    if item_sample is not None and isinstance(item_sample.get("output_text"), str):
        answer = item_sample["output_text"]
    error = record.get("error")
    params = stored.data_source.get("sampling_params") or {}
    return Sample(
        model=stored.model or None,
        input=turns if stored.model else [],
        output=[ChatTurn(role="assistant", content=answer)] if answer is not None else [],
        usage=SampleUsage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        ),
        error=ApiError(code="sample_error", message=error) if error else None,
        finish_reason="stop" if answer is not None and not error else None,
        temperature=params.get("temperature"),
        max_completion_tokens=params.get("max_completion_tokens"),
    )


def _result(entry: dict[str, Any]) -> GraderResult:
    details = entry.get("details") or {}
    failed = entry.get("status") != "ok"
    return GraderResult(
        name=entry["name"],
        type=entry["type"],
        score=entry.get("score"),
        passed=bool(entry.get("passed")),
        sample=details.get("sample"),
        error=entry.get("reasoning") if failed else None,
    )


def output_item(stored: StoredEvalRun, output: StoredOutput) -> OutputItem:
    """The ``eval.run.output_item`` of one finished case."""
    record = output.record
    case = output.definition.get("case") or {}
    item = (case.get("metadata") or {}).get("item") or {}
    configs = case.get("evaluators") or []
    given = configs[0].get("sample") if configs else None
    return OutputItem(
        id=output_item_id(stored.id, output.seq),
        eval_id=stored.eval_id,
        run_id=stored.id,
        created_at=int(output.created_at.timestamp()),
        status="pass" if record.get("status") in PASSED else "fail",
        datasource_item_id=output.seq,
        datasource_item=item,
        results=[_result(entry) for entry in record.get("evaluator_results") or []],
        sample=_sample(stored, record, given),
    )
