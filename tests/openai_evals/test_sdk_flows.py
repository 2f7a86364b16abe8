"""The official ``openai`` SDK's ``client.evals`` against a live uvicorn process of the service.

The flows of OpenAI's evals cookbook: an eval with a custom item schema, a ``string_check``
and a ``label_model`` grader; a JSONL file uploaded; a ``completions`` run with a template on
the fake LLM server; polled to completion; failing items paged; a long run cancelled;
everything deleted. Every method of ``client.evals``, ``.runs`` and ``.runs.output_items``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from openai import OpenAI

from testkit.fake_llm import FakeLLM
from testkit.openai_spec import SpecValidator
from testkit.server import running_service

pytestmark = pytest.mark.slow
TICKETS = [
    ("billing", "billing"),
    ("hardware", "hardware"),
    ("my card was charged twice", "billing"),
    ("the screen flickers", "hardware"),
]
ITEM_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"ticket_text": {"type": "string"}, "correct_label": {"type": "string"}},
    "required": ["ticket_text", "correct_label"],
}


@pytest.fixture
def client(tmp_path: Path, fake_llm: FakeLLM, spec_validator: SpecValidator) -> Iterator[OpenAI]:
    targets = tmp_path / "targets.yaml"
    fake = {"name": "fake", "provider": "openai", "base_url": f"{fake_llm.url}/v1", "model": "m"}
    embed = {**fake, "name": "embed", "api_format": "embeddings", "model": "text-embedding-3-large"}
    targets.write_text(yaml.safe_dump({"targets": [fake, embed]}), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", ""),  # noqa: TID251
        "EVAL_DATA_DIR": str(tmp_path / "data"),
        "EVAL_TARGETS_FILE": str(targets),
        "EVAL_LOG_LEVEL": "WARNING",
        "EVAL_OPENAI_MODELS": json.dumps({"gpt-4.1": "fake", "o3-mini": "default"}),
        "EVAL_RUN_CONCURRENCY": "2",
    }
    with (
        running_service(env) as (url, _),
        httpx.Client(event_hooks={"response": [spec_validator.sync_hook]}) as http,
        OpenAI(
            base_url=f"{url}/v1",
            api_key="not-checked",
            max_retries=0,
            timeout=20,
            http_client=http,  # type: ignore[arg-type]  # typed for httpx2, takes httpx too
        ) as sdk,
    ):
        yield sdk
    assert spec_validator.checked > 0


def wait_until(sdk: OpenAI, eval_id: str, run_id: str, statuses: set[str]) -> Any:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run = sdk.evals.runs.retrieve(run_id, eval_id=eval_id)
        if run.status in statuses:
            return run
        time.sleep(0.1)
    raise TimeoutError(f"run {run_id} is still {run.status}")


def create_ticket_eval(sdk: OpenAI) -> Any:
    return sdk.evals.create(
        name="IT tickets",
        metadata={"team": "support"},
        data_source_config={
            "type": "custom",
            "item_schema": ITEM_SCHEMA,
            "include_sample_schema": True,
        },
        testing_criteria=[
            {
                "type": "string_check",
                "name": "label matches",
                "input": "{{ sample.output_text }}",
                "reference": "{{ item.correct_label }}",
                "operation": "eq",
            },
            {
                "type": "label_model",
                "name": "judged correct",
                "model": "gpt-4.1",
                "input": [
                    {"role": "developer", "content": "Is the category right? correct/incorrect"},
                    {
                        "role": "user",
                        "content": "Ticket: {{item.ticket_text}}\nAnswer: {{sample.output_text}}",
                    },
                ],
                "labels": ["correct", "incorrect"],
                "passing_labels": ["correct"],
            },
        ],
    )


def test_cookbook_flow_on_the_fake_llm(client: OpenAI, fake_llm: FakeLLM) -> None:
    ev = create_ticket_eval(client)
    assert ev.object == "eval"
    assert ev.data_source_config.schema_["properties"]["item"] == ITEM_SCHEMA
    rows = [{"item": {"ticket_text": t, "correct_label": label}} for t, label in TICKETS]
    jsonl = "\n".join(json.dumps(row) for row in rows).encode()
    uploaded = client.files.create(file=("tickets.jsonl", jsonl), purpose="evals")
    assert uploaded.bytes == len(jsonl)

    run = client.evals.runs.create(
        ev.id,
        name="gpt-4.1 on tickets",
        data_source={
            "type": "completions",
            "model": "gpt-4.1",
            "input_messages": {
                "type": "template",
                "template": [
                    {"role": "developer", "content": "Answer with one category."},
                    {"role": "user", "content": "{{ item.ticket_text }}"},
                ],
            },
            "source": {"type": "file_id", "id": uploaded.id},
        },
    )
    assert run.status in {"queued", "in_progress", "completed"}
    done = wait_until(client, ev.id, run.id, {"completed", "failed"})
    assert done.status == "completed"
    assert (done.result_counts.passed, done.result_counts.failed) == (2, 2)
    names = {c.to_dict()["id"]: c.name for c in ev.testing_criteria}
    assert all(ident.startswith(f"{name}-") for ident, name in names.items())
    criteria = {
        names[r.testing_criteria]: (r.passed, r.failed) for r in done.per_testing_criteria_results
    }
    assert criteria == {"label matches": (2, 2), "judged correct": (4, 0)}
    assert done.report_url.endswith(f"/runs/{run.id}")
    usage = {u.run_model_name: u for u in done.per_model_usage}
    assert usage["gpt-4.1"].invocation_count >= 4

    # The candidate got the rendered template (developer as system).
    candidate = [r for r in fake_llm.requests if "Answer with one category." in r.messages_text()]
    assert any("my card was charged twice" in r.messages_text() for r in candidate)

    failing = list(
        client.evals.runs.output_items.list(run.id, eval_id=ev.id, status="fail", limit=1)
    )
    assert [item.status for item in failing] == ["fail", "fail"]
    assert {item.datasource_item["ticket_text"] for item in failing} == {
        "my card was charged twice",
        "the screen flickers",
    }
    first = failing[0]
    assert first.sample.output[0].content == first.datasource_item["ticket_text"]
    results = {names[result.name]: result for result in first.results}
    assert results["label matches"].passed is False
    assert results["judged correct"].passed is True
    again = client.evals.runs.output_items.retrieve(first.id, eval_id=ev.id, run_id=run.id)
    assert again.id == first.id
    assert again.datasource_item == first.datasource_item
    passing = client.evals.runs.output_items.list(run.id, eval_id=ev.id, status="pass")
    assert len(passing.data) == 2

    assert [r.id for r in client.evals.runs.list(ev.id)] == [run.id]
    assert client.evals.runs.list(ev.id, status="canceled").data == []
    assert client.evals.retrieve(ev.id).name == "IT tickets"
    renamed = client.evals.update(ev.id, name="Tickets v2", metadata={"team": "it"})
    assert (renamed.name, renamed.metadata) == ("Tickets v2", {"team": "it"})
    assert ev.id in [e.id for e in client.evals.list(order="desc")]

    assert client.files.retrieve(uploaded.id).filename == "tickets.jsonl"
    assert client.files.content(uploaded.id).content == jsonl
    assert client.evals.runs.delete(run.id, eval_id=ev.id).deleted is True
    with pytest.raises(openai.NotFoundError):
        client.evals.runs.retrieve(run.id, eval_id=ev.id)
    assert client.evals.delete(ev.id).deleted is True
    assert client.files.delete(uploaded.id).deleted is True
    with pytest.raises(openai.NotFoundError):
        client.evals.retrieve(ev.id)


def test_a_long_run_is_cancelled(client: OpenAI, fake_llm: FakeLLM) -> None:
    fake_llm.latency = 0.5
    ev = create_ticket_eval(client)
    rows: list[Any] = [{"item": {"ticket_text": f"t{i}", "correct_label": "x"}} for i in range(40)]
    run = client.evals.runs.create(
        ev.id,
        data_source={
            "type": "completions",
            "model": "gpt-4.1",
            "input_messages": {
                "type": "template",
                "template": [{"role": "user", "content": "{{ item.ticket_text }}"}],
            },
            "source": {"type": "file_content", "content": rows},
        },
    )
    cancelled = client.evals.runs.cancel(run.id, eval_id=ev.id)
    assert cancelled.status in {"canceled", "in_progress", "queued"}
    final = wait_until(client, ev.id, run.id, {"canceled"})
    assert final.result_counts.passed + final.result_counts.failed < 40
    assert client.evals.delete(ev.id).deleted is True


def test_jsonl_run_with_similarity_multi_and_score_model_on_the_mock(client: OpenAI) -> None:
    ev = client.evals.create(
        name="given answers",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[
            {
                "type": "text_similarity",
                "name": "close",
                "input": "{{ sample.output_text }}",
                "reference": "{{ item.reference }}",
                "evaluation_metric": "fuzzy_match",
                "pass_threshold": 0.8,
            },
            {  # type: ignore[list-item]  # the SDK types lack `multi`; the API has it
                "type": "multi",
                "name": "blend",
                "graders": {
                    "rouge": {
                        "type": "text_similarity",
                        "name": "rouge",
                        "input": "{{ sample.output_text }}",
                        "reference": "{{ item.reference }}",
                        "evaluation_metric": "rouge_1",
                    },
                    "exact": {
                        "type": "string_check",
                        "name": "exact",
                        "input": "{{ sample.output_text }}",
                        "reference": "{{ item.reference }}",
                        "operation": "ilike",
                    },
                },
                "calculate_output": "0.5 * rouge + 0.5 * exact",
            },
            {
                "type": "score_model",
                "name": "quality",
                "model": "o3-mini",
                "input": [{"role": "user", "content": "Rate: {{ sample.output_text }}"}],
                "range": [0, 10],
                # The mock judge scores the share of expected words it finds: none here.
                "pass_threshold": 0,
            },
        ],
    )
    rows: list[Any] = [
        {
            "item": {"reference": "Paris is the capital"},
            "sample": {"output_text": "Paris is the capital"},
        },
        {"item": {"reference": "Paris is the capital"}, "sample": {"output_text": "no idea"}},
    ]
    run = client.evals.runs.create(
        ev.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    )
    done = wait_until(client, ev.id, run.id, {"completed", "failed"})
    assert (done.result_counts.passed, done.result_counts.failed) == (1, 1)
    items = client.evals.runs.output_items.list(run.id, eval_id=ev.id, order="asc").data
    names = {c.to_dict()["id"]: c.name for c in ev.testing_criteria}
    scores = [{names[r.name]: r.score for r in item.results} for item in items]
    assert scores[0]["close"] == pytest.approx(1.0)
    assert scores[0]["blend"] == pytest.approx(1.0)
    assert scores[1]["close"] < 0.8
    assert scores[0]["quality"] == 0
    quality = next(r for r in items[0].results if names[r.name] == "quality")
    assert quality.sample is not None
    assert quality.sample["input"] == [{"role": "user", "content": "Rate: Paris is the capital"}]
    assert items[0].sample.output[0].content == "Paris is the capital"


def test_cosine_text_similarity_embeds_on_the_embeddings_target(
    client: OpenAI, fake_llm: FakeLLM
) -> None:
    ev = client.evals.create(
        name="cosine",
        data_source_config={"type": "custom", "item_schema": {"type": "object"}},
        testing_criteria=[
            {
                "type": "text_similarity",
                "name": "meaning",
                "input": "{{ sample.output_text }}",
                "reference": "{{ item.reference }}",
                "evaluation_metric": "cosine",
                "pass_threshold": 0.9,
            }
        ],
    )
    reference = {"reference": "Paris is the capital"}
    rows: list[Any] = [
        {"item": reference, "sample": {"output_text": "The capital is Paris"}},
        {"item": reference, "sample": {"output_text": "no idea"}},
    ]
    run = client.evals.runs.create(
        ev.id, data_source={"type": "jsonl", "source": {"type": "file_content", "content": rows}}
    )
    done = wait_until(client, ev.id, run.id, {"completed", "failed"})
    assert (done.result_counts.passed, done.result_counts.failed) == (1, 1)
    items = client.evals.runs.output_items.list(run.id, eval_id=ev.id, order="asc").data
    scores = [item.results[0].score for item in items]
    assert scores[0] == pytest.approx(1.0)
    assert scores[1] < 0.9
    embedded = {r.json["input"] for r in fake_llm.requests if r.path == "/v1/embeddings"}
    assert embedded == {"Paris is the capital", "The capital is Paris", "no idea"}
    assert all(r.json["model"] == "text-embedding-3-large" for r in fake_llm.requests)


def test_errors_are_the_sdks_own_classes(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.evals.retrieve("eval_does_not_exist")
    assert "eval_does_not_exist" in missing.value.message
    with pytest.raises(openai.NotFoundError):
        client.evals.runs.list("eval_does_not_exist")
    with pytest.raises(openai.BadRequestError) as unknown_model:
        client.evals.create(
            name="x",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[
                {
                    "type": "label_model",
                    "name": "j",
                    "model": "gpt-unknown",
                    "input": [{"role": "user", "content": "x"}],
                    "labels": ["a"],
                    "passing_labels": ["a"],
                }
            ],
        )
    assert unknown_model.value.code == "model_not_found"
    assert unknown_model.value.param == "testing_criteria[0].model"
    ev = create_ticket_eval(client)
    with pytest.raises(openai.BadRequestError) as bad_run:
        client.evals.runs.create(
            ev.id,
            data_source={
                "type": "completions",
                "model": "gpt-5-nowhere",
                "input_messages": {"type": "item_reference", "item_reference": "item.messages"},
                "source": {"type": "file_content", "content": [{"item": {}}]},
            },
        )
    assert bad_run.value.param == "data_source.model"
    with pytest.raises(openai.BadRequestError) as schema:
        client.evals.runs.create(
            ev.id,
            data_source={
                "type": "jsonl",
                "source": {"type": "file_content", "content": [{"item": {"ticket_text": 3}}]},
            },
        )
    assert "data_source.source.content[0].item" in str(schema.value.param)
    with pytest.raises(openai.BadRequestError) as python_off:
        client.evals.create(
            name="x",
            data_source_config={"type": "custom", "item_schema": {"type": "object"}},
            testing_criteria=[
                {"type": "python", "name": "p", "source": "def grade(s, i): return 1"}
            ],
        )
    assert "EVAL_CODE_GRADERS" in python_off.value.message
    # The SDK cannot even encode a lone surrogate; a hand-written JSON escape can spell one.
    not_text = httpx.post(
        f"{client.base_url}evals/{ev.id}",
        content=b'{"name": "bad\\ud800"}',
        headers={"authorization": f"Bearer {client.api_key}", "content-type": "application/json"},
    )
    assert not_text.status_code == 400
    error = not_text.json()["error"]
    assert error["param"] == "name"
    assert "lone surrogate" in error["message"]
