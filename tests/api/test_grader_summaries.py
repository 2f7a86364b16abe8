"""Graders in records and run summaries, and repeated trials, through ``/evaluate`` and ``/runs``.

The candidate is an OpenAI-wire target on the fake LLM server; the graders need no judge, so
every request the fake server sees is a candidate call.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from testkit.fake_llm import FakeLLM, Reply
from tests.api.test_evaluate import fake_settings
from tests.conftest import ClientFactory, wait_for_run

GRADERS = [
    {"name": "polite", "type": "icontains-any", "value": ["please", "thanks"], "weight": 2},
    {"name": "no-apology", "type": "not-contains", "value": "sorry"},
    {"name": "short", "type": "word-count", "max": 3},
]


def suite(repeat: dict[str, Any] | None = None, cases: int = 2) -> dict[str, Any]:
    document: dict[str, Any] = {
        "dataset": "graders",
        "tests": [
            {"id": f"c{index}", "criteria": "Polite", "input": f"Q{index}", "assertions": GRADERS}
            for index in range(cases)
        ],
    }
    if repeat is not None:
        document["repeat"] = repeat
    return document


def openai_reply(text: str) -> Reply:
    return Reply(text=text)


EXPECTED_GRADERS: dict[str, dict[str, Any]] = {
    "polite": {"type": "icontains_any", "count": 2, "passed": 1, "failed": 1, "errors": 0},
    "no-apology": {"type": "contains", "count": 2, "passed": 1, "failed": 1, "errors": 0},
    "short": {"type": "word_count", "count": 2, "passed": 2, "failed": 0, "errors": 0},
}


def check_graders(summary: dict[str, Any]) -> None:
    graders = summary["graders"]
    for name, expected in EXPECTED_GRADERS.items():
        assert {key: graders[name][key] for key in expected} == expected
        assert graders[name]["pass_rate"] == expected["passed"] / 2
        assert graders[name]["mean_score"] == expected["passed"] / 2


async def test_every_grader_result_is_in_the_record_and_the_summary_rates_each(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(openai_reply("Thanks, done"), openai_reply("sorry"))
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        body = {"suite": suite(), "target": "fake", "max_concurrency": 1}
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    document = response.json()
    first = document["results"][0]["evaluator_results"]
    assert [(r["name"], r["type"], r["score"], r["passed"], r["weight"]) for r in first] == [
        ("polite", "icontains_any", 1.0, True, 2.0),
        ("no-apology", "contains", 1.0, True, 1.0),
        ("short", "word_count", 1.0, True, 1.0),
    ]
    assert all(r["reasoning"] for r in first)
    check_graders(document["summary"])


async def test_durable_runs_and_regrades_rate_each_grader(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(openai_reply("Thanks, done"), openai_reply("sorry"))
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        body = {"suite": suite(), "target": "fake", "max_concurrency": 1}
        run_id = (await client.post("/runs", json=body)).json()["id"]
        finished = await wait_for_run(client, run_id)
        check_graders(finished["summary"])
        regrade = {"evaluators": [{"name": "thanks", "type": "icontains", "value": "THANKS"}]}
        again = (await client.post(f"/runs/{run_id}/regrade", json=regrade)).json()
        regraded = await wait_for_run(client, again["id"])
    assert regraded["summary"]["graders"] == {
        "thanks": {
            "type": "icontains",
            "count": 2,
            "passed": 1,
            "failed": 1,
            "errors": 0,
            "pass_rate": 0.5,
            "mean_score": 0.5,
        }
    }


async def test_trials_report_pass_at_k_and_the_spread(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(*(openai_reply(text) for text in ("sorry", "thanks", "sorry", "thanks")))
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        body = {"suite": suite({"count": 4, "strategy": "pass_any"}, cases=1), "target": "fake"}
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    [record] = response.json()["results"]
    trials = record["trials"]
    assert (trials["requested"], trials["count"], trials["passed"]) == (4, 4, 2)
    assert trials["pass_at_k"] == {"1": 0.5, "2": 1 - 1 / 6, "3": 1.0, "4": 1.0}
    # "sorry" only passes `short` (weight 1 of 4): 0.25; "thanks" passes all three: 1.
    assert (trials["scores"]["mean"], trials["scores"]["min"], trials["scores"]["max"]) == (
        0.625,
        0.25,
        1.0,
    )
    assert math.isclose(trials["scores"]["std_dev"], 0.75 / math.sqrt(3))
    assert [run["passed"] for run in trials["runs"]] == [False, True, False, True]
    assert (record["status"], record["candidate_answer"]) == ("passed", "thanks")
    assert len(fake_llm.requests) == 4
    assert record["usage"]["candidate"]["input_tokens"] > 0


async def test_pass_all_with_early_exit_stops_at_the_first_failure(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(openai_reply("thanks"), openai_reply("sorry"))
    async with make_client(fake_settings(tmp_path, fake_llm)) as client:
        repeat = {"count": 5, "strategy": "pass_all", "early_exit": True}
        body = {"suite": suite(repeat, cases=1), "target": "fake"}
        [record] = (await client.post("/evaluate", json=body)).json()["results"]
    assert (record["status"], record["trials"]["count"], record["trials"]["requested"]) == (
        "failed",
        2,
        5,
    )
    assert record["trials"]["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert len(fake_llm.requests) == 2
