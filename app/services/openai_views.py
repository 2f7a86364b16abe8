"""The OpenAI objects of stored things: an eval, a run (counts, usage), an output item."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.evaluation.openai_graders.runner import criterion_id
from app.runs.models import RunInfo
from app.runs.openai_evals.openai_store import RunTally, StoredEval, StoredEvalRun, StoredOutput
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
FAILED = ("failed", "borderline")
ERRORED = ("error", "judge_error")
"""Record statuses an output item shows as ``pass``, ``fail`` and ``error``."""
ITEM_STATUSES = {"pass": PASSED, "fail": FAILED, "error": ERRORED}
OUTPUT_ITEM_PREFIX = "outputitem_"
DEFAULT_TEMPERATURE = 1.0
DEFAULT_TOP_P = 1.0
DEFAULT_SEED = 42
"""The sampling defaults OpenAI's description gives (``sampling_params``), shown in a
sample for a parameter the candidate was not sent."""


@dataclass(frozen=True)
class Sampling:
    """The sampling parameters a run's samples report (``temperature``, ``top_p``...).

    ``max_completion_tokens`` is 0 when no limit was sent (the description gives no default).
    """

    temperature: float = DEFAULT_TEMPERATURE
    max_completion_tokens: int = 0
    top_p: float = DEFAULT_TOP_P
    seed: int = DEFAULT_SEED

    def given(self, sample: dict[str, Any] | None) -> Sampling:
        """These values, overridden by those a JSONL row's ``sample`` carries."""
        sample = sample or {}
        values = {
            key: sample[key]
            for key, kind in (
                ("temperature", (int, float)),
                ("max_completion_tokens", int),
                ("top_p", (int, float)),
                ("seed", int),
            )
            if isinstance(sample.get(key), kind) and not isinstance(sample.get(key), bool)
        }
        return Sampling(**{**self.__dict__, **values})


@dataclass(frozen=True)
class RunModels:
    """The models a run names, and the target each name is sent to.

    ``candidate`` is "" for a ``jsonl`` run; a name ``targets`` does not map is its own target.
    """

    candidate: str
    judges: tuple[str, ...]
    targets: Mapping[str, str]


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


def _counts(tally: RunTally) -> ResultCounts:
    def count(statuses: Iterable[str]) -> int:
        return sum(tally.statuses.get(status, 0) for status in statuses)

    # ``total`` counts the items executed so far (OpenAI's "executed output items").
    return ResultCounts(
        total=sum(tally.statuses.values()),
        passed=count(PASSED),
        failed=count(FAILED),
        errored=count(ERRORED),
    )


def _criteria(criteria: Sequence[dict[str, Any]], tally: RunTally) -> list[CriterionResult]:
    results = []
    for criterion in criteria:
        name = criterion_id(criterion)
        passed, failed = tally.graders.get(name, (0, 0))
        results.append(CriterionResult(testing_criteria=name, passed=passed, failed=failed))
    return results


def _usage(models: RunModels, tally: RunTally) -> list[ModelUsage]:
    """One entry per model, each with the calls of its own target, whatever the role.

    A model both candidate and judge is one entry; two names sent to one target cannot be
    told apart and are one entry, under the first name (the candidate's, then the judges' in
    order); a target no name stands for is listed under its own name. Results stored before
    targets were counted give their usage by role: the candidate's model, and the judges'
    names together.
    """
    named = ([models.candidate] if models.candidate else []) + list(models.judges)
    name_of: dict[str, str] = {}
    for model in named:
        name_of.setdefault(models.targets.get(model, model), model)
    totals: dict[str, list[int]] = {}

    def add(name: str, figures: tuple[int, int, int]) -> None:
        if name and any(figures):
            entry = totals.setdefault(name, [0, 0, 0])
            for index, figure in enumerate(figures):
                entry[index] += figure

    for target, figures in tally.targets.items():
        add(name_of.get(target, target), figures)
    for role, name in (("candidate", models.candidate), ("judge", ", ".join(models.judges))):
        add(name, tally.unattributed.get(role, (0, 0, 0)))

    def order(entry: tuple[str, list[int]]) -> tuple[int, str]:
        """The candidate's model first, then the judges' in order, then any other target."""
        return (named.index(entry[0]) if entry[0] in named else len(named), entry[0])

    return [
        ModelUsage(
            model_name=name,
            invocation_count=calls,
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion,
        )
        for name, (calls, prompt, completion) in sorted(totals.items(), key=order)
    ]


def run_object(
    run: RunInfo,
    stored: StoredEvalRun,
    criteria: Sequence[dict[str, Any]],
    models: RunModels,
    tally: RunTally,
    report_url: str,
) -> EvalRunObject:
    """The ``eval.run`` object of a durable run and the results stored so far."""
    error = ApiError(code="run_failed", message=run.error) if run.error else None
    return EvalRunObject(
        id=run.id,
        eval_id=stored.eval_id,
        name=stored.name,
        model=stored.model,
        status=RUN_STATUSES.get(run.status, "failed"),
        created_at=int(stored.created_at.timestamp()),
        metadata=stored.metadata,
        data_source=stored.data_source,
        result_counts=_counts(tally),
        per_model_usage=_usage(models, tally),
        per_testing_criteria_results=_criteria(criteria, tally),
        error=error,
        report_url=report_url,
    )


def _sample(
    stored: StoredEvalRun,
    record: dict[str, Any],
    item_sample: dict[str, Any] | None,
    sampling: Sampling,
) -> Sample:
    raw = record.get("raw_request") or {}
    turns = [ChatTurn(role=m["role"], content=m["content"]) for m in raw.get("chatPrompt") or []]
    tokens = (record.get("usage") or {}).get("candidate") or {}
    prompt, completion = tokens.get("input_tokens", 0), tokens.get("output_tokens", 0)
    answer = record.get("candidate_answer")
    model = stored.model
    if item_sample is not None:
        if isinstance(item_sample.get("output_text"), str):
            answer = item_sample["output_text"]
        if not model and isinstance(item_sample.get("model"), str):
            model = item_sample["model"]
        sampling = sampling.given(item_sample)
    error = record.get("error")
    if error:
        finish_reason = "error"
    elif isinstance(item_sample, dict) and isinstance(item_sample.get("finish_reason"), str):
        finish_reason = item_sample["finish_reason"]
    else:
        finish_reason = "stop"
    return Sample(
        model=model,
        input=turns if stored.model else [],
        output=[ChatTurn(role="assistant", content=answer)] if answer is not None else [],
        usage=SampleUsage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        ),
        error=ApiError(code="sample_error", message=error) if error else None,
        finish_reason=finish_reason,
        temperature=sampling.temperature,
        max_completion_tokens=sampling.max_completion_tokens,
        top_p=sampling.top_p,
        seed=sampling.seed,
    )


def _result(entry: dict[str, Any]) -> GraderResult:
    details = entry.get("details") or {}
    failed = entry.get("status") != "ok"
    score = entry.get("score")
    return GraderResult(
        name=entry["name"],
        type=entry["type"],
        score=score if isinstance(score, int | float) else 0.0,
        passed=bool(entry.get("passed")),
        sample=details.get("sample"),
        error=entry.get("reasoning") if failed else None,
    )


def item_status(record_status: str | None) -> str:
    """An output item's status: ``pass``, ``fail``, or ``error`` when a step could not run."""
    return next(
        (name for name, statuses in ITEM_STATUSES.items() if record_status in statuses), "fail"
    )


def output_item(stored: StoredEvalRun, output: StoredOutput, sampling: Sampling) -> OutputItem:
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
        status=item_status(record.get("status")),
        datasource_item_id=output.seq,
        datasource_item=item,
        results=[_result(entry) for entry in record.get("evaluator_results") or []],
        sample=_sample(stored, record, given, sampling),
    )


def imported_run_object(stored: StoredEvalRun, report_url: str) -> EvalRunObject:
    """The source's run object in the description's shapes (nulls it forbids filled in)."""
    source = dict(stored.imported or {})
    for key in ("per_model_usage", "per_testing_criteria_results"):
        source[key] = source.get(key) or []
    source["per_model_usage"] = [
        {**usage, "cached_tokens": usage.get("cached_tokens") or 0}
        if isinstance(usage, dict)
        else usage
        for usage in source["per_model_usage"]
    ]
    counts = source.get("result_counts")
    counts = counts if isinstance(counts, dict) else {}
    return EvalRunObject.model_validate(
        {
            **source,
            "id": stored.id,
            "eval_id": stored.eval_id,
            "name": stored.name,
            "model": stored.model,
            "status": source.get("status"),
            "error": source.get("error") or None,
            "created_at": int(stored.created_at.timestamp()),
            "metadata": stored.metadata,
            "data_source": stored.data_source,
            "result_counts": {
                k: counts.get(k) or 0 for k in ("total", "passed", "failed", "errored")
            },
            "report_url": report_url,
        }
    )
