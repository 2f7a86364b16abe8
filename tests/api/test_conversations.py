"""Live conversations end to end: the candidate answers turn by turn over real HTTP.

The candidate and the judge are an OpenAI-wire target on the fake LLM server, which echoes
the last user message; every request it got is checked against the record.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from app.providers.adapters.mock import prompt_sections
from app.settings import Settings
from testkit.fake_llm import JUDGE_MARKER, FakeLLM, RecordedRequest, Reply, error
from tests.conftest import ClientFactory, wait_for_run

KEY = "sk-test-key-0123456789"


def settings_for(tmp_path: Path, fake: FakeLLM, database_url: str | None = None) -> Settings:
    entry = {"name": "local", "provider": "openai", "model": "smol", "api_key": KEY,
             "base_url": f"{fake.url}/v1"}  # fmt: skip
    extra = {"database_url": database_url} if database_url else {}
    return Settings.model_validate(
        {"data_dir": tmp_path / "data", "targets": [entry], "sample_run": False, **extra}
    )


def conversation(**case: Any) -> dict[str, Any]:
    return {
        "tests": [
            {
                "id": "chat",
                "criteria": "Keeps the thread.",
                "mode": "conversation",
                "input": [{"role": "system", "content": "You are a terse tutor."}],
                "turns": [
                    {"input": "alpha one", "assertions": [{"type": "contains", "value": "alpha"}]},
                    {"input": "beta two", "assertions": [{"type": "contains", "value": "zzz"}]},
                    "gamma three",
                ],
                **case,
            }
        ]
    }


def judged(request: RecordedRequest) -> bool:
    return JUDGE_MARKER in request.messages_text()


async def evaluate(
    make_client: ClientFactory, settings: Settings, suite: dict[str, Any]
) -> dict[str, Any]:
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": suite, "target": "local"})
    assert response.status_code == 200, response.text
    assert KEY not in response.text
    (record,) = response.json()["results"]
    return record  # type: ignore[no-any-return]


async def test_each_turn_gets_the_history_with_the_candidates_own_answers_natively(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    record = await evaluate(make_client, settings_for(tmp_path, fake_llm), conversation())

    asked = [r.json["messages"] for r in fake_llm.requests if not judged(r)]
    system = {"role": "system", "content": "You are a terse tutor."}
    assert asked == [
        [system, {"role": "user", "content": "alpha one"}],
        [system, {"role": "user", "content": "alpha one"},
         {"role": "assistant", "content": "alpha one"}, {"role": "user", "content": "beta two"}],
        [system, {"role": "user", "content": "alpha one"},
         {"role": "assistant", "content": "alpha one"}, {"role": "user", "content": "beta two"},
         {"role": "assistant", "content": "beta two"}, {"role": "user", "content": "gamma three"}],
    ]  # fmt: skip
    turns = record["turns"]
    assert [t["candidate_answer"] for t in turns] == ["alpha one", "beta two", "gamma three"]
    assert [t["status"] for t in turns[:2]] == ["passed", "failed"]
    assert turns[1]["question"] == (
        "@[System]:\nYou are a terse tutor.\n\n@[User]:\nalpha one\n\n"
        "@[Assistant]:\nalpha one\n\n@[User]:\nbeta two"
    )
    # The third turn's default judge got exactly the question the candidate saw on that turn.
    (judge,) = [r for r in fake_llm.requests if judged(r)]
    user_prompt = judge.json["messages"][-1]["content"]
    assert prompt_sections(user_prompt)["question"] == turns[2]["question"]
    assert turns[2]["evaluator_raw_request"]["userPrompt"].count("@[Assistant]:") == 2
    assert record["candidate_answer"] == "gamma three"
    assert record["raw_request"]["question"] == turns[2]["question"]
    assert record["attempts"] == {"candidate": 3, "judge": 1}
    assert record["evaluator_results"] == []  # nothing grades the whole conversation


@pytest.mark.parametrize(
    ("aggregation", "score", "verdict"),
    [("mean", (1 + 0 + 1) / 3, "borderline"), ("min", 0.0, "fail"), ("max", 1.0, "pass")],
)
async def test_the_turns_scores_make_the_cases_by_its_aggregation(
    tmp_path: Path,
    fake_llm: FakeLLM,
    make_client: ClientFactory,
    aggregation: str,
    score: float,
    verdict: str,
) -> None:
    suite = conversation(aggregation=aggregation)
    equals = [{"type": "equals", "value": "gamma"}]
    suite["tests"][0]["turns"][2] = {"input": "gamma", "assertions": equals}
    record = await evaluate(make_client, settings_for(tmp_path, fake_llm), suite)

    assert [t["score"] for t in record["turns"]] == [1.0, 0.0, 1.0]
    assert record["score"] == pytest.approx(score)
    assert record["verdict"] == verdict
    assert record["misses"]
    assert all(miss.startswith("turn 2: ") for miss in record["misses"])


async def test_a_failed_turn_stops_the_conversation_and_fails_the_case(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    suite = conversation(on_turn_failure="stop", aggregation="max")
    record = await evaluate(make_client, settings_for(tmp_path, fake_llm), suite)

    assert [t["status"] for t in record["turns"]] == ["passed", "failed", "skipped"]
    assert record["turns"][2]["candidate_answer"] is None
    assert len([r for r in fake_llm.requests if not judged(r)]) == 2  # the third never asked
    assert (record["status"], record["verdict"], record["score"]) == ("failed", "fail", 1.0)


async def test_the_cases_own_graders_grade_the_last_answer_as_one_more_score(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    suite = conversation(assertions=[{"type": "contains", "value": "alpha"}], aggregation="min")
    turns = suite["tests"][0]["turns"]
    turns[1]["assertions"] = [{"type": "contains", "value": "beta"}]
    turns[2] = {"input": "gamma three", "assertions": [{"type": "contains", "value": "gamma"}]}
    record = await evaluate(make_client, settings_for(tmp_path, fake_llm), suite)

    assert [t["status"] for t in record["turns"]] == ["passed", "passed", "passed"]
    (whole,) = record["evaluator_results"]
    assert (whole["name"], whole["passed"]) == ("contains", False)  # "gamma three" has no alpha
    assert (record["score"], record["verdict"]) == (0.0, "fail")
    assert not any(r for r in fake_llm.requests if judged(r))


async def test_a_candidate_failure_mid_conversation_keeps_the_turns_done(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.script(Reply(), error(400, "context window exceeded"))
    record = await evaluate(make_client, settings_for(tmp_path, fake_llm), conversation())

    assert record["status"] == "error"
    assert "context window exceeded" in record["error"]
    assert [t["status"] for t in record["turns"]] == ["passed", "error"]
    assert "context window exceeded" in record["turns"][1]["error"]


async def test_a_durable_run_stores_the_turns_shows_them_and_a_regrade_grades_them_again(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, database_url: str
) -> None:
    settings = settings_for(tmp_path, fake_llm, database_url)
    async with make_client(settings) as client:
        created = await client.post("/runs", json={"suite": conversation(), "target": "local"})
        assert created.status_code == 202, created.text
        run = await wait_for_run(client, created.json()["id"])
        (record,) = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
        page = (await client.get(f"/ui/fragments/runs/{run['id']}/cases/0")).text
        fragment = f"/ui/fragments/runs/{run['id']}"
        missed_2 = (await client.get(fragment, params={"missed": "turn 2: contains"})).text
        missed_1 = (await client.get(fragment, params={"missed": "turn 1: contains"})).text
        asked = len([r for r in fake_llm.requests if not judged(r)])
        regrade = await client.post(f"/runs/{run['id']}/regrade")
        assert regrade.status_code == 202, regrade.text
        again = await wait_for_run(client, regrade.json()["id"])
        (regraded,) = (await client.get(f"/runs/{again['id']}/results")).json()["results"]

    assert run["status"] == "completed", run
    graders = run["summary"]["graders"]  # each turn's graders count in the summary
    assert (graders["turn 1: contains"]["passed"], graders["turn 2: contains"]["failed"]) == (1, 1)
    assert '<span class="muted" id="shown">1 of 1 shown' in missed_2  # the viewer's filter
    assert '<span class="muted" id="shown">0 of 1 shown' in missed_1
    answers = [t["candidate_answer"] for t in record["turns"]]
    assert answers == ["alpha one", "beta two", "gamma three"]
    assert page.count('class="card live-turn"') == 3
    assert '<pre class="text turn-answer">beta two</pre>' in page
    assert '<span class="status status-failed">failed</span>' in page
    # The regrade grades each stored answer again, in the same history, asking nobody anew.
    assert len([r for r in fake_llm.requests if not judged(r)]) == asked
    assert [t["candidate_answer"] for t in regraded["turns"]] == answers
    assert [t["question"] for t in regraded["turns"]] == [t["question"] for t in record["turns"]]
    assert [t["status"] for t in regraded["turns"]] == [t["status"] for t in record["turns"]]
    assert regraded["score"] == record["score"]


AGENT = """\
import json, sys
prompt = open(sys.argv[1], encoding="utf-8").read()
with open(sys.argv[3], "a", encoding="utf-8") as log:
    log.write(json.dumps(prompt) + "\\n")
with open(sys.argv[2], "w", encoding="utf-8") as out:
    out.write(f"ack {prompt.count('@[User]:')}")
"""


async def test_an_agent_target_gets_each_turn_as_the_marked_question(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    script, log = tmp_path / "agent.py", tmp_path / "prompts.jsonl"
    script.write_text(AGENT, encoding="utf-8")
    command = (
        " ".join(shlex.quote(part) for part in (sys.executable, str(script), "{PROMPT_FILE}"))
        + f" {{OUTPUT_FILE}} {shlex.quote(str(log))}"
    )
    agent = {"name": "agent", "provider": "cli", "command_template": command}
    settings = Settings.model_validate(
        {"data_dir": tmp_path / "data", "targets": [agent], "sample_run": False}
    )
    contains = [{"type": "contains", "value": "ack"}]
    suite = {"tests": [{"id": "chat", "mode": "conversation",
                        "input": [{"role": "system", "content": "Be terse."}],
                        "turns": [{"input": "first", "assertions": contains},
                                  {"input": "second", "assertions": contains}]}]}  # fmt: skip
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": suite, "target": "agent"})
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]

    prompts = [json.loads(line) for line in log.read_text().splitlines()]
    assert prompts == [t["question"] for t in record["turns"]]
    assert prompts[1] == (
        "@[System]:\nBe terse.\n\n@[User]:\nfirst\n\n@[Assistant]:\nack 1\n\n@[User]:\nsecond"
    )
    assert [t["candidate_answer"] for t in record["turns"]] == ["ack 1", "ack 2"]
    assert record["status"] == "passed"
