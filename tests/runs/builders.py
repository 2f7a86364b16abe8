"""Builders of runs, cases and records for the runs tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from app.evaluation.records import ResultRecord, RoleUsage, TokenUsage
from app.formatting import FormatOptions, Message, format_prompt
from app.runs.models import NewCase, NewRun
from app.runs.spec import case_definition
from app.suites.model import EvalCase, FormattedCase


def make_new_run(run_id: str | None = None, **changes: Any) -> NewRun:
    values: dict[str, Any] = {
        "id": run_id or f"run_{uuid.uuid4().hex}",
        "kind": "evaluate",
        "target": "default",
        "judge_target": "default",
        "spec": {"suite": {"dataset": "demo"}, "files": {}, "plan": {}},
    }
    values.update(changes)
    return NewRun(**values)


def make_definition(case_id: str) -> str:
    """A stored case: the case and the prompt it was formatted into when the run was made."""
    message = Message(role="user", content=f"Question {case_id}?")
    case = EvalCase(id=case_id, expected_outcome="ok", input_messages=(message,))
    prompt = format_prompt(case.input_messages, {}, FormatOptions())
    return case_definition(FormattedCase(case=case, prompt=prompt))


def make_cases(count: int, *, answer: str | None = None) -> list[NewCase]:
    return [
        NewCase(
            eval_id=f"case-{index}",
            definition=make_definition(f"case-{index}"),
            candidate_answer=answer,
        )
        for index in range(count)
    ]


def make_record(eval_id: str, status: str = "passed", score: float | None = 1.0) -> ResultRecord:
    verdict = None if score is None else ("pass" if score >= 0.8 else "fail")
    return ResultRecord.model_validate(
        {
            "eval_id": eval_id,
            "dataset": "demo",
            "status": status,
            "score": score,
            "verdict": verdict,
            "candidate_answer": f"answer to {eval_id}",
            "target": "default",
            "judge_target": "default",
            "timestamp": datetime(2026, 1, 1, tzinfo=UTC),
            "usage": RoleUsage(
                candidate=TokenUsage(input_tokens=10, output_tokens=5),
                judge=TokenUsage(input_tokens=20, output_tokens=3),
            ),
        }
    )
