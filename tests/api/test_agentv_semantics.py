"""AgentV's semantics through the API (issue 35), each checked against AgentV 4.42.4 itself by
``scripts/conformance/agentv``: the default system prompt, a missing file errs only the cases
that use it, ``/validate`` refuses what ``/evaluate`` would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from app.formatting import DEFAULT_SYSTEM_PROMPT
from app.settings import Settings
from app.settings.targets import MockTarget
from tests.conftest import ClientFactory

QUESTION = {"input_messages": [{"role": "user", "content": "What is 2+2?"}]}


def chat(response: httpx.Response) -> list[tuple[str, str]]:
    assert response.status_code == 200, response.text
    return [(m["role"], m["content"]) for m in response.json()["chatPrompt"]]


async def test_format_shows_the_default_system_prompt_unless_the_case_has_one_or_turns_it_off(
    client: httpx.AsyncClient,
) -> None:
    default = await client.post("/format", json=QUESTION)
    assert chat(default) == [("system", DEFAULT_SYSTEM_PROMPT), ("user", "What is 2+2?")]
    off = await client.post("/format", json={**QUESTION, "default_system_prompt": ""})
    assert chat(off) == [("user", "What is 2+2?")]
    own = {"role": "system", "content": "You are terse."}
    with_own = await client.post(
        "/format", json={"input_messages": [own, *QUESTION["input_messages"]]}
    )
    assert chat(with_own)[0] == ("system", "You are terse.")


async def evaluate(
    make_client: ClientFactory, tmp_path: Path, suite: dict[str, Any], **target: Any
) -> dict[str, Any]:
    settings = Settings(
        data_dir=tmp_path / "data",
        sample_run=False,
        targets=[MockTarget(name="default", **target)],
    )
    async with make_client(settings) as http:
        response = await http.post("/evaluate", json={"suite": suite})
    assert response.status_code == 200, response.text
    return {record["eval_id"]: record for record in response.json()["results"]}


def system_of(record: dict[str, Any]) -> str | None:
    messages = record["raw_request"]["chatPrompt"]
    return messages[0]["content"] if messages[0]["role"] == "system" else None


async def test_a_run_sends_the_default_system_prompt_the_targets_or_the_suites(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    suite: dict[str, Any] = {"tests": [{"id": "q", "criteria": "Says 4", "input": "2+2?"}]}
    records = await evaluate(make_client, tmp_path, suite)
    assert system_of(records["q"]) == DEFAULT_SYSTEM_PROMPT
    records = await evaluate(make_client, tmp_path / "t", suite, system_prompt="Be brief.")
    assert system_of(records["q"]) == "Be brief."
    own = {**suite, "system_prompt": ""}
    records = await evaluate(make_client, tmp_path / "s", own, system_prompt="Be brief.")
    assert system_of(records["q"]) is None


async def test_a_missing_file_errs_only_the_cases_that_use_it(
    make_client: ClientFactory, tmp_path: Path
) -> None:
    uses = {"role": "user", "content": [{"type": "file", "value": "notes/gone.md"}, "Sum up"]}
    suite = {
        "tests": [
            {"id": "uses-it", "criteria": "Sums up", "input": [uses]},
            {"id": "plain", "criteria": "Says 4", "input": "2+2?"},
        ]
    }
    records = await evaluate(make_client, tmp_path, suite)
    assert records["uses-it"]["status"] == "error"
    assert records["uses-it"]["error"] == "file not found: notes/gone.md"
    assert records["plain"]["status"] in ("passed", "failed", "borderline")


async def test_validate_refuses_a_grader_naming_a_target_that_is_not_configured(
    client: httpx.AsyncClient,
) -> None:
    grader = {"type": "llm-grader", "target": "nowhere"}
    suite = {"tests": [{"id": "q", "criteria": "x", "input": "Hi", "assertions": [grader]}]}
    body = (await client.post("/validate", json={"suite": suite})).json()
    assert body["valid"] is False
    assert any("'nowhere'" in error["message"] for error in body["errors"]), body
    evaluate = await client.post("/evaluate", json={"suite": suite})
    assert evaluate.status_code == 422
