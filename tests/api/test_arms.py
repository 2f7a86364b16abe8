"""Runs on several targets (arms): /evaluate and durable runs, SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.settings import Settings
from app.settings.targets import OpenAITarget
from testkit.fake_llm import FakeLLM, RecordedRequest, Reply, error
from tests.api.test_runs import sse_events
from tests.conftest import ClientFactory, wait_for_run

ANSWERS = {"ma": "It is 4.", "mb": "Five, I think.", "mc": "4"}
"""What each model answers: the arms on ``a`` and ``c`` pass, the arm on ``b`` fails."""


def answer_by_model(recorded: RecordedRequest) -> Reply:
    text = ANSWERS[recorded.json["model"]]
    return Reply(body={"choices": [{"message": {"role": "assistant", "content": text}}]})


def arms_settings(tmp_path: Path, fake: FakeLLM, database_url: str | None = None) -> Settings:
    fake.responder = answer_by_model
    targets = [
        OpenAITarget(name=name, provider="openai", base_url=f"{fake.url}/v1", model=f"m{name}")
        for name in ("a", "b", "c")
    ]
    return Settings(
        data_dir=tmp_path / "data",
        targets=targets,
        retry_max_attempts=1,
        sample_run=False,
        database_url=database_url,
    )


def suite(count: int = 2, **extra: Any) -> dict[str, Any]:
    return {
        "dataset": "arms",
        "evalcases": [
            {
                "id": f"q{index}",
                "input_messages": [{"role": "user", "content": f"What is 2 + 2? ({index})"}],
                "evaluators": [{"name": "four", "type": "contains", "value": "4"}],
            }
            for index in range(count)
        ],
        **extra,
    }


def arm_rates(summary: dict[str, Any]) -> dict[str, int]:
    return {arm["arm"]["target"]: arm["summary"]["counts"]["passed"] for arm in summary["arms"]}


async def test_evaluate_runs_every_case_once_per_target_and_summarises_each_arm(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": suite(), "targets": ["a", "b", "c"]}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    keys = [(r["eval_id"], r["arm"]["index"], r["target"]) for r in body["results"]]
    assert keys == [
        ("q0", 0, "a"), ("q0", 1, "b"), ("q0", 2, "c"),
        ("q1", 0, "a"), ("q1", 1, "b"), ("q1", 2, "c"),
    ]  # fmt: skip
    assert body["summary"]["total"] == 6
    assert body["summary"]["counts"]["passed"] == 4
    assert arm_rates(body["summary"]) == {"a": 2, "b": 0, "c": 2}
    models = sorted(r.json["model"] for r in fake_llm.requests)
    assert models == ["ma", "ma", "mb", "mb", "mc", "mc"]


async def test_a_run_on_one_target_has_no_arms(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        listed = await client.post("/evaluate", json={"suite": suite(1), "targets": ["b"]})
        named = await client.post("/evaluate", json={"suite": suite(1), "target": "b"})
    assert listed.json()["results"][0]["arm"] is None
    assert listed.json()["summary"]["arms"] is None
    assert listed.json()["results"][0]["target"] == "b"
    assert named.json()["summary"] == listed.json()["summary"]


async def test_target_with_several_targets_and_unknown_arms_are_refused_by_name(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        both = await client.post(
            "/evaluate", json={"suite": suite(1), "target": "a", "targets": ["a", "b"]}
        )
        unknown = await client.post("/evaluate", json={"suite": suite(1), "targets": ["a", "zz"]})
    assert both.status_code == 422
    assert "targets" in both.text
    assert unknown.status_code == 422
    assert "zz" in unknown.text
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    "document",
    [
        # promptfoo's prompts/providers/vars layout with several providers
        {
            "prompts": ["What is 2 + 2? {{ n }}"],
            "providers": ["a", {"id": "openai:chat:x", "label": "b"}, "c"],
            "tests": [
                {"vars": {"n": index}, "assert": [{"type": "contains", "value": "4"}]}
                for index in range(2)
            ],
        },
        # AgentV's targets list
        {
            "targets": ["a", "b", {"name": "c"}],
            "tests": [
                {
                    "id": f"t{index}",
                    "input": f"What is 2 + 2? {index}",
                    "assertions": [{"type": "contains", "value": "4"}],
                }
                for index in range(2)
            ],
        },
    ],
    ids=["promptfoo-providers", "agentv-targets"],
)
async def test_a_suites_own_target_list_makes_arms(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, document: dict[str, Any]
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": yaml.safe_dump(document)})
    assert response.status_code == 200, response.text
    summary = response.json()["summary"]
    assert arm_rates(summary) == {"a": 2, "b": 0, "c": 2}


async def test_a_durable_run_stores_each_case_once_per_arm_and_streams_the_arm(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    settings = arms_settings(tmp_path, fake_llm, database_url)
    async with make_client(settings) as client:
        created = await client.post(
            "/runs", json={"suite": suite(3), "targets": ["a", "b", "c"], "max_concurrency": 2}
        )
        assert created.status_code == 202, created.text
        run_id = created.json()["id"]
        run = await wait_for_run(client, run_id)
        events = sse_events((await client.get(f"/runs/{run_id}/events")).text)
        results = (await client.get(f"/runs/{run_id}/results?limit=100")).json()
        exported = (await client.get(f"/ui/fragments/runs/{run_id}/export.csv")).text
    assert run["status"] == "completed"
    assert run["progress"] == {"done": 9, "total": 9}
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert sorted((row["eval_id"], row["arm"]) for row in rows) == sorted(
        (f"q{i}", t) for i in range(3) for t in "abc"
    )
    assert [arm["target"] for arm in run["arms"]] == ["a", "b", "c"]
    assert arm_rates(run["summary"]) == {"a": 3, "b": 0, "c": 3}
    assert run["summary"]["counts"]["passed"] == 6
    records = results["results"]
    keys = sorted((r["eval_id"], r["arm"]["target"]) for r in records)
    assert keys == sorted((f"q{i}", t) for i in range(3) for t in "abc")
    completed = [json.loads(e["data"]) for e in events if e["event"] == "case_completed"]
    assert sorted((d["eval_id"], d["arm"]["index"]) for d in completed) == sorted(
        (f"q{i}", arm) for i in range(3) for arm in range(3)
    )
    progress = [json.loads(e["data"]) for e in events if e["event"] == "progress"]
    assert [p["done"] for p in progress] == list(range(1, 10))
    assert [p["arm"] for p in progress] == [d["arm"] for d in completed]
    assert len(fake_llm.requests) == 9


async def test_a_review_counts_in_its_arms_summary_and_the_overall_one_only(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm, database_url)) as client:
        created = await client.post("/runs", json={"suite": suite(2), "targets": ["a", "b"]})
        run_id = created.json()["id"]
        await wait_for_run(client, run_id)
        # seq 1 is case q0 on arm 1 (target b), which the graders failed.
        reviewed = await client.put(f"/runs/{run_id}/cases/1/review", json={"verdict": "pass"})
        summary = (await client.get(f"/runs/{run_id}")).json()["summary"]
    assert reviewed.status_code == 200, reviewed.text
    assert summary["counts"]["passed"] == 3
    assert summary["reviewed"] == 1
    assert arm_rates(summary) == {"a": 2, "b": 1}
    assert [arm["summary"]["reviewed"] for arm in summary["arms"]] == [0, 1]


async def test_retry_reruns_only_the_failed_arm_of_a_case(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = arms_settings(tmp_path, fake_llm)
    failing = {"on": True}

    def flaky_b(recorded: RecordedRequest) -> Reply:
        if recorded.json["model"] == "mb" and failing["on"]:
            return error(500, "b is down")
        return answer_by_model(recorded)

    async with make_client(settings) as client:
        fake_llm.responder = flaky_b
        created = await client.post("/runs", json={"suite": suite(2), "targets": ["a", "b"]})
        run_id = created.json()["id"]
        run = await wait_for_run(client, run_id)
        assert run["summary"]["arms"][1]["summary"]["counts"]["error"] == 2
        failing["on"] = False
        fake_llm.reset()
        assert (await client.post(f"/runs/{run_id}/retry")).status_code == 200
        run = await wait_for_run(client, run_id)
    assert [r.json["model"] for r in fake_llm.requests] == ["mb", "mb"]
    assert run["progress"] == {"done": 4, "total": 4}
    assert run["summary"]["arms"][1]["summary"]["counts"]["failed"] == 2


async def test_compare_every_pair_of_arms_with_holm_and_a_verdict_per_pair(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        created = await client.post("/runs", json={"suite": suite(6), "targets": ["a", "b", "c"]})
        run_id = created.json()["id"]
        await wait_for_run(client, run_id)
        compared = await client.get(f"/runs/{run_id}/compare")
        a_vs_b = await client.get(
            "/runs/compare",
            params={"base": run_id, "head": run_id, "base_arm": "a", "head_arm": "1"},
        )
        unnamed = await client.get("/runs/compare", params={"base": run_id, "head": run_id})
    assert compared.status_code == 200, compared.text
    pairs = {(p["base"]["target"], p["head"]["target"]): p for p in compared.json()["pairs"]}
    assert list(pairs) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert {key: p["verdict"] for key, p in pairs.items()} == {
        ("a", "b"): "base_better",
        ("a", "c"): "no_difference",
        ("b", "c"): "head_better",
    }
    assert pairs["a", "b"]["regression"] == 6
    assert "a scores higher than b" in pairs["a", "b"]["summary"]
    assert pairs["a", "c"]["p_holm"] == 1.0
    assert a_vs_b.status_code == 200, a_vs_b.text
    assert a_vs_b.json()["counts"]["regression"] == 6
    assert a_vs_b.json()["shared"] == 6
    assert unnamed.status_code == 422
    assert "base_arm" in unnamed.text


async def test_a_regrade_keeps_each_answers_arm_and_grades_every_arm(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        created = await client.post("/runs", json={"suite": suite(2), "targets": ["a", "b"]})
        run_id = created.json()["id"]
        await wait_for_run(client, run_id)
        fake_llm.reset()
        five = [{"name": "five", "type": "contains", "value": "Five"}]
        regrade = await client.post(f"/runs/{run_id}/regrade", json={"evaluators": five})
        assert regrade.status_code == 202, regrade.text
        run = await wait_for_run(client, regrade.json()["id"])
    assert fake_llm.requests == []  # no candidate called again
    assert [arm["target"] for arm in run["arms"]] == ["a", "b"]
    assert arm_rates(run["summary"]) == {"a": 0, "b": 2}


async def test_arms_count_toward_the_case_limit_and_the_refusal_names_them(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    settings = arms_settings(tmp_path, fake_llm).model_copy(update={"max_cases_per_run": 5})
    async with make_client(settings) as client:
        refused = await client.post("/runs", json={"suite": suite(2), "targets": ["a", "b", "c"]})
        accepted = await client.post("/runs", json={"suite": suite(2), "targets": ["a", "b"]})
    assert refused.status_code == 413
    assert "2 cases x 3 arms = 6 evaluations" in refused.json()["detail"]
    assert accepted.status_code == 202


async def test_each_provider_of_several_sends_the_tools_of_its_own_config(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    document = {
        "prompts": ["What is 2 + 2?"],
        "providers": ["a", {"id": "b", "config": {"tools": [tool]}}],
        "tests": [{"assert": [{"type": "contains", "value": "4"}]}],
    }
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": yaml.safe_dump(document)})
    assert response.status_code == 200, response.text
    sent = {r.json["model"]: r.json.get("tools") for r in fake_llm.requests}
    assert sent["ma"] is None
    assert [t["function"]["name"] for t in sent["mb"]] == ["lookup"]


async def test_a_target_named_by_the_request_runs_a_suite_with_a_list_on_it_alone(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(arms_settings(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": suite(2, targets=["a", "b"]), "target": "c"}
        )
    assert response.status_code == 200, response.text
    assert response.json()["summary"]["arms"] is None
    assert {r.json["model"] for r in fake_llm.requests} == {"mc"}
