"""promptfoo's ``functionToolCallbacks``: the callback's result is the output, per API.

promptfoo's ``openai-responses/promptfooconfig.function-callback.yaml``, end to end through
``/evaluate`` on the harness's fake (``CALL:<name>:<arguments>:END`` prompts): inline
JavaScript runs in the embedded V8 engine (awaited), a file's function in the program sandbox
(from a suite file under a workspace root, code graders on). Measured against promptfoo
0.123.1 by ``tests/conformance/promptfoo/function_callbacks.yaml``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from scripts.conformance.promptfoo.fake import respond
from testkit.fake_llm import FakeLLM
from tests.api.test_tool_loops import TARGETS, settings_for
from tests.conftest import ClientFactory

CORPUS = Path(__file__).resolve().parents[1] / "conformance" / "promptfoo"
ADD = {
    "type": "function", "name": "addNumbers", "description": "Add two numbers together",
    "parameters": {"type": "object", "properties": {"a": {"type": "number"},
                                                     "b": {"type": "number"}},
                   "required": ["a", "b"]},
}  # fmt: skip
INLINE = """async (args) => {
  const { a, b } = JSON.parse(args);
  return String(a + b);
}
"""


def suite(target: str, callbacks: dict[str, str], *tests: dict[str, Any]) -> dict[str, Any]:
    return {
        "prompts": ["CALL:{{name}}:{{arguments}}:END"],
        "providers": [{"id": "openai:responses:gpt-4o", "label": target,
                       "config": {"tools": [ADD], "functionToolCallbacks": callbacks}}],
        "tests": list(tests),
    }  # fmt: skip


def case(name: str, arguments: str, *asserts: dict[str, Any]) -> dict[str, Any]:
    return {"vars": {"name": name, "arguments": arguments}, "assert": list(asserts)}


@pytest.mark.parametrize("target", list(TARGETS))
async def test_an_inline_callbacks_result_is_the_output(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    fake_llm.responder = respond
    body = {"suite": suite(
        target,
        {"addNumbers": INLINE, "describe": "(args) => ({ called: JSON.parse(args) })",
         "boom": "async () => { throw new Error('boom'); }"},
        case("addNumbers", '{"a": 5, "b": 6}', {"type": "equals", "value": "11"}),
        case("describe", '{"x": 1}', {"type": "equals", "value": '{"called":{"x":1}}'}),
        case("boom", "{}", {"type": "contains", "value": "boom"}),
        case("nothing", "{}", {"type": "contains", "value": "nothing"}),
    )}  # fmt: skip
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    added, described, threw, uncalled = response.json()["results"]
    assert added["candidate_answer"] == "11"
    assert added["tool_calls"][0]["output"] == "11"
    assert described["candidate_answer"] == '{"called":{"x":1}}'
    # a callback that throws, or a call without one: the reply's calls are the answer
    assert "boom" in threw["candidate_answer"]
    assert threw["tool_calls"][0]["output"] is None
    assert "nothing" in uncalled["candidate_answer"]
    assert all(r["status"] == "passed" for r in (added, described, threw, uncalled))
    assert len(fake_llm.requests) == 4  # the result is not sent back to the model


async def test_a_file_callback_runs_in_the_sandbox(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    fake_llm.responder = respond
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "callbacks.js").write_text((CORPUS / "function_files" / "callbacks.js").read_text())
    test = case("addNumbers", '{"a": 123, "b": 456}', {"type": "equals", "value": "579"})
    content = suite("gpt", {"addNumbers": "file://callbacks.js:addNumbers"}, test)
    (folder / "promptfooconfig.yaml").write_text(json.dumps(content))
    settings = settings_for(tmp_path, fake_llm)
    settings = Settings.model_validate(
        {**settings.model_dump(), "workspace_roots": [tmp_path], "code_graders": True}
    )
    async with make_client(settings) as client:
        response = await client.post("/evaluate", json={"suite": "evals/promptfooconfig.yaml"})
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    assert record["candidate_answer"] == "579", record
    assert record["status"] == "passed"


async def test_a_file_callback_without_code_graders_is_refused_by_name(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    body = {"suite": suite("gpt", {"addNumbers": "file://callbacks.js:addNumbers"},
                           case("addNumbers", "{}"))}  # fmt: skip
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 422, response.text
    assert "functionToolCallbacks" in response.text
    assert "callbacks.js" in response.text
    assert fake_llm.requests == []


@pytest.mark.parametrize(("callbacks", "said"), [
    ("not a mapping", "must map tool names to callbacks"),
    ({"addNumbers": 3}, "must be JavaScript code or a file://path:function"),
    ({"addNumbers": "file://callbacks.py"}, "name the Python function"),
])  # fmt: skip
async def test_malformed_callbacks_are_refused_by_name(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, callbacks: Any, said: str
) -> None:
    body = {"suite": suite("gpt", callbacks, case("addNumbers", "{}"))}
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 422, response.text
    assert said in response.text
