"""The sample eval, run and file of a fresh server, and the ``/v1`` examples that name them.

Like ``run_sample`` for ``/runs``, a fresh server (``EVAL_SAMPLE_RUN``, mock ``default``)
holds an eval ``eval_sample`` with a finished run ``evalrun_sample`` and a file
``file-sample``, so every ``/v1`` example of ``/docs`` runs as prefilled. The sample run
grades the file's given answers (a ``jsonl`` run, like ``run_sample`` it calls no model):
the first is right and passes, the second is not and fails, so both ``status`` filters of
output items find one. The ``completions`` example asks the mock target, which echoes.
"""

from __future__ import annotations

import json
from typing import Any

from app.schemas.openai_evals import EvalCreateRequest, RunCreateRequest

SAMPLE_EVAL_ID = "eval_sample"
SAMPLE_EVAL_RUN_ID = "evalrun_sample"
SAMPLE_FILE_ID = "file-sample"
SAMPLE_MODEL = "default"
SAMPLE_ITEMS: list[dict[str, Any]] = [
    {"item": {"question": "Is the capital of France Paris or Lyon?", "answer": "Paris"}},
    {"item": {"question": "Which planet is the largest?", "answer": "Jupiter"}},
]
SAMPLE_ROWS: list[dict[str, Any]] = [
    {**SAMPLE_ITEMS[0], "sample": {"output_text": "Paris"}},
    {**SAMPLE_ITEMS[1], "sample": {"output_text": "Saturn"}},
]
SAMPLE_FILE_CONTENT = "".join(json.dumps(row) + "\n" for row in SAMPLE_ROWS)
_ITEM_SCHEMA = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
}
_CRITERIA: list[dict[str, Any]] = [
    {
        "type": "string_check",
        "name": "names the answer",
        "input": "{{ sample.output_text }}",
        "reference": "{{ item.answer }}",
        "operation": "ilike",
    },
    {
        "type": "text_similarity",
        "name": "close to the answer",
        "input": "{{ sample.output_text }}",
        "reference": "{{ item.answer }}",
        "evaluation_metric": "fuzzy_match",
        "pass_threshold": 0.1,
    },
]
_TEMPLATE = {
    "type": "template",
    "template": [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "{{ item.question }}"},
    ],
}
EVAL_EXAMPLE: dict[str, Any] = {
    "name": "Capitals and planets",
    "metadata": {"team": "docs"},
    "data_source_config": {
        "type": "custom",
        "item_schema": _ITEM_SCHEMA,
        "include_sample_schema": True,
    },
    "testing_criteria": _CRITERIA,
}
RUN_EXAMPLES: dict[str, dict[str, Any]] = {
    "completions": {
        "summary": "Ask a model (a target) for each item, then grade its answer",
        "value": {
            "name": "mock, cold",
            "data_source": {
                "type": "completions",
                "model": SAMPLE_MODEL,
                "input_messages": _TEMPLATE,
                "sampling_params": {"temperature": 0, "max_completion_tokens": 64},
                "source": {"type": "file_content", "content": SAMPLE_ITEMS},
            },
        },
    },
    "jsonl_file": {
        "summary": "Grade the answers of an uploaded file (no model called)",
        "value": {
            "data_source": {
                "type": "jsonl",
                "source": {"type": "file_id", "id": SAMPLE_FILE_ID},
            },
        },
    },
    "jsonl_rows": {
        "summary": "Grade answers given inline",
        "value": {
            "data_source": {
                "type": "jsonl",
                "source": {
                    "type": "file_content",
                    "content": SAMPLE_ROWS[:1],
                },
            },
        },
    },
}
UPDATE_EXAMPLE: dict[str, Any] = {"name": "Capitals and planets", "metadata": {"team": "qa"}}


def sample_eval_request() -> EvalCreateRequest:
    """The sample eval."""
    return EvalCreateRequest.model_validate({**EVAL_EXAMPLE, "name": "Sample eval"})


def sample_run_request() -> RunCreateRequest:
    """The sample run: the given answers of the sample file."""
    return RunCreateRequest.model_validate(
        {**RUN_EXAMPLES["jsonl_file"]["value"], "name": "Sample run"}
    )
