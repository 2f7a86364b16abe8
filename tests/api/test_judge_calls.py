"""Judges on the servers people run: negotiation, budgets and call accounting, via ``/evaluate``.

Each record's accounting is checked call by call against the fake server's request log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from testkit.fake_llm import JUDGE_MARKER, MODES, FakeLLM, RecordedRequest, Reply, error
from tests.conftest import ClientFactory

KEY = "sk-test-key-0123456789"


def suite(*ids: str) -> dict[str, Any]:
    return {
        "dataset": "judges",
        "evalcases": [
            {"id": case_id, "expected_outcome": "Answers 4.",
             "input_messages": [{"role": "user", "content": f"{case_id}: what is 2 + 2?"}]}
            for case_id in ids
        ],
    }  # fmt: skip


def settings_for(tmp_path: Path, fake: FakeLLM, **target: Any) -> Settings:
    entry = {"name": "local", "provider": "openai", "model": "smol", "api_key": KEY,
             "base_url": f"{fake.url}/v1", **target}  # fmt: skip
    return Settings.model_validate(
        {"data_dir": tmp_path / "data", "targets": [entry], "retry_base_seconds": 0.01}
    )


def is_judge(request: RecordedRequest) -> bool:
    return JUDGE_MARKER in request.messages_text()


async def evaluate(
    make_client: ClientFactory, settings: Settings, *ids: str, **body: Any
) -> dict[str, Any]:
    async with make_client(settings) as client:
        response = await client.post(
            "/evaluate", json={"suite": suite(*ids), "target": "local", **body}
        )
        assert response.status_code == 200, response.text
        assert KEY not in response.text
        targets = (await client.get("/targets")).json()["targets"]
    result: dict[str, Any] = response.json()
    result["targets"] = {t["name"]: t for t in targets}
    return result


async def test_every_request_is_counted_in_the_record_call_by_call(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(
        error(503, "loading model"), Reply(),  # candidate: one retry
        Reply(text="I would give it a 4"),  # judge: a reply that gives no grade
        error(500, "out of memory"), Reply(),  # judge asked again: one retry
    )  # fmt: skip
    body = await evaluate(make_client, settings_for(tmp_path, fake_llm, max_retries=2), "c1")

    (record,) = body["results"]
    sent = fake_llm.requests
    candidate = [r for r in sent if not is_judge(r)]
    judge = [r for r in sent if is_judge(r)]
    assert record["status"] == "passed"
    assert record["attempts"] == {"candidate": len(candidate), "judge": len(judge)} == {
        "candidate": 2, "judge": 3,
    }  # fmt: skip
    for role, requests in (("candidate", candidate), ("judge", judge)):
        replies = [r.usage for r in requests if r.usage is not None]
        assert record["usage"][role] == {
            "input_tokens": sum(u["prompt_tokens"] for u in replies),
            "output_tokens": sum(u["completion_tokens"] for u in replies),
        }
        assert record["latency_ms"][role] > 0
    (result,) = record["evaluator_results"]
    tries = result["details"]["tries"]
    assert [t["status"] for t in tries] == [r.status for r in judge] == [200, 500, 200]
    assert [t["outcome"] for t in tries] == ["unparseable", "provider-unavailable", "ok"]
    assert tries[0]["output"] == "I would give it a 4"
    assert "out of memory" in tries[1]["error"]
    assert result["details"]["attempts"] == 3
    assert json.loads(result["raw_output"])["score"] == 1.0  # the graded reply is kept


async def test_a_judge_whose_every_try_fails_is_counted_and_named(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = lambda r: error(503, "model is restarting") if is_judge(r) else None
    settings = settings_for(tmp_path, fake_llm, max_retries=2)
    body = await evaluate(make_client, settings, "c1")

    (record,) = body["results"]
    judge = [r for r in fake_llm.requests if is_judge(r)]
    assert record["status"] == "judge_error"
    assert record["attempts"]["judge"] == len(judge) == 3
    assert record["latency_ms"]["judge"] > 0
    assert record["usage"]["judge"] == {"input_tokens": 0, "output_tokens": 0}
    error_text = record["error"]
    assert "target 'local' (openai): 3 tries in " in error_text
    assert fake_llm.url not in error_text
    assert "answered 503: model is restarting" in error_text
    assert "OpenAI answered" not in error_text  # an OpenAI-compatible server, not OpenAI
    tries = record["evaluator_results"][0]["details"]["tries"]
    assert [t["status"] for t in tries] == [503, 503, 503]


async def test_a_server_refusing_json_schema_still_grades_with_one_extra_request(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = MODES["refuse-json-schema"]
    body = await evaluate(make_client, settings_for(tmp_path, fake_llm), "a", "b", "c", "d")

    assert [r["status"] for r in body["results"]] == ["passed"] * 4
    judge = [r for r in fake_llm.requests if is_judge(r)]
    assert len(judge) == 4 + 1
    assert sum(r["attempts"]["judge"] for r in body["results"]) == len(judge)
    shown = body["targets"]["local"]["structured_output"]
    assert shown["setting"] == "auto"
    assert shown["form"] == "json_object"
    assert "Input should be 'text' or 'json_object'" in shown["fallback_reason"]


async def test_a_server_refusing_any_response_format_grades_from_the_prompt(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = MODES["refuse-response-format"]
    body = await evaluate(make_client, settings_for(tmp_path, fake_llm), "a", "b", "c")

    assert [r["status"] for r in body["results"]] == ["passed"] * 3
    assert sum(1 for r in fake_llm.requests if is_judge(r)) == 3 + 1
    assert body["targets"]["local"]["structured_output"]["form"] == "none"


@pytest.mark.parametrize("score", [9.12, -1, "0.9"])
async def test_json_mode_replies_are_still_held_to_the_contract(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, score: object
) -> None:
    verdict = json.dumps({"score": score, "hits": [], "misses": [], "reasoning": "x"})
    fake_llm.responder = lambda r: Reply(text=verdict) if is_judge(r) else None
    settings = settings_for(tmp_path, fake_llm, structured_output="json_object")
    body = await evaluate(make_client, settings, "c1")

    (record,) = body["results"]
    result = record["evaluator_results"][0]
    assert record["status"] == "judge_error"
    assert result["score"] is None  # never clamped into range
    assert result["raw_output"] == verdict
    assert result["details"]["attempts"] == 3


async def test_a_runaway_judge_is_cut_at_the_budget_and_not_asked_again(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    runaway = MODES["runaway"]
    fake_llm.responder = lambda r: runaway(r) if is_judge(r) else None
    settings = settings_for(tmp_path, fake_llm, judge_max_output_tokens=64)
    body = await evaluate(make_client, settings, "c1")

    (record,) = body["results"]
    judge = [r for r in fake_llm.requests if is_judge(r)]
    assert len(judge) == 1
    assert judge[0].json["max_tokens"] == 64
    assert record["status"] == "judge_error"
    assert "stopped at the output-token budget" in record["evaluator_results"][0]["reasoning"]
    assert record["usage"]["judge"]["output_tokens"] == judge[0].usage["completion_tokens"]  # type: ignore[index]


async def test_every_log_line_of_a_case_carries_its_case_id(
    tmp_path: Path,
    fake_llm: FakeLLM,
    make_client: ClientFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake_llm.responder = MODES["refuse-json-schema"]
    fake_llm.script(error(503, "warming up"))
    capsys.readouterr()
    await evaluate(make_client, settings_for(tmp_path, fake_llm, max_retries=1), "c1")

    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]
    provider_lines = [line for line in lines if line["logger"] == "app.providers"]
    messages = " | ".join(line["message"] for line in provider_lines)
    assert "retrying" in messages
    assert "structured output json_schema refused" in messages
    assert {line.get("case_id") for line in provider_lines} == {"c1"}
