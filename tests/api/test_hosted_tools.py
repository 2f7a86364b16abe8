"""Tools the provider runs itself (web search, MCP, Google Search) end to end through the API.

Each is sent as the suite wrote it to a target of the API that defines it, over real HTTP
(the fake server checks each body against its API's published shape), and refused by name
on a target of another API and when the operator has not allowed hosted tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from testkit.fake_llm import FakeLLM, Reply
from tests.api.test_tool_loops import settings_for
from tests.conftest import ClientFactory

WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
MCP = {"type": "mcp", "server_label": "deepwiki", "server_url": "https://mcp.example/mcp",
       "require_approval": "never", "allowed_tools": ["ask_question"]}  # fmt: skip
GOOGLE_SEARCH: dict[str, Any] = {"googleSearch": {}}
WEATHER = {"name": "get_weather", "input_schema": {"type": "object", "properties": {}}}
HOSTED: dict[str, dict[str, Any]] = {
    "claude": WEB_SEARCH,
    "responses": MCP,
    "gemini": GOOGLE_SEARCH,
}


def suite(*tools: dict[str, Any]) -> dict[str, Any]:
    test = {"id": "t", "input": "Search the web for the news.", "tools": list(tools),
            "assertions": [{"type": "contains", "value": "news"}]}  # fmt: skip
    return {"name": "hosted", "tests": [test]}


def allowed(tmp_path: Path, fake: FakeLLM) -> Settings:
    return settings_for(tmp_path, fake).model_copy(update={"hosted_tools": True})


@pytest.mark.parametrize("target", list(HOSTED))
async def test_a_hosted_tool_is_sent_as_written_to_a_target_of_its_api(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    fake_llm.script(Reply(text="Here is the news."))
    async with make_client(allowed(tmp_path, fake_llm)) as client:
        body = {"suite": suite(WEATHER, HOSTED[target]), "target": target}
        response = await client.post("/evaluate", json=body)
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    (record,) = response.json()["results"]
    assert record["status"] == "passed", record
    [sent] = fake_llm.requests
    assert HOSTED[target] in sent.json["tools"]
    assert len(sent.json["tools"]) == 2  # the function tool too


@pytest.mark.parametrize(("target", "tool"), [("gpt", "web_search_20250305"),
                                              ("claude", "mcp"), ("gemini", "mcp")])  # fmt: skip
async def test_a_target_of_another_api_refuses_the_case_naming_the_tool(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str, tool: str
) -> None:
    declared = next(t for t in HOSTED.values() if t.get("type", "googleSearch") == tool)
    async with make_client(allowed(tmp_path, fake_llm)) as client:
        response = await client.post("/evaluate", json={"suite": suite(declared), "target": target})
    assert response.status_code == 200, response.text
    (record,) = response.json()["results"]
    assert record["status"] == "error"
    assert f"cannot run the hosted tool {tool!r}" in record["error"]
    assert fake_llm.requests == []  # nothing sent


async def test_hosted_tools_are_refused_by_name_unless_the_operator_allows_them(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        check = await client.post("/validate", json={"suite": suite(WEATHER, MCP, WEB_SEARCH)})
        run = await client.post("/evaluate", json={"suite": suite(MCP), "target": "responses"})
    assert check.json()["valid"] is False
    messages = [error["message"] for error in check.json()["errors"]]
    assert any("hosted tool 'mcp' is not allowed" in m for m in messages), messages
    assert any("'web_search_20250305'" in m and "EVAL_HOSTED_TOOLS=true" in m for m in messages)
    assert run.status_code == 422
    assert fake_llm.requests == []


def responses_body(*items: dict[str, Any]) -> dict[str, Any]:
    message = {"type": "message", "id": "m", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": "The spec lists stdio and HTTP.",
                            "annotations": []}]}  # fmt: skip
    usage = {"input_tokens": 5, "output_tokens": 7}
    return {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
            "output": [*items, message], "usage": usage}  # fmt: skip


LISTED = {"type": "mcp_list_tools", "id": "l", "server_label": "deepwiki",
          "tools": [{"name": "ask_question"}]}  # fmt: skip


@pytest.mark.parametrize(
    ("call", "line", "valid"),
    [
        ({"type": "mcp_call", "id": "c", "name": "ask_question", "server_label": "deepwiki",
          "arguments": "{}", "output": "stdio, streamable HTTP"},
         "MCP Tool Result (ask_question): stdio, streamable HTTP", True),
        ({"type": "mcp_call", "id": "c", "name": "ask_question", "server_label": "deepwiki",
          "arguments": "{}", "error": "timeout"},
         "MCP Tool Error (ask_question): timeout", False),
    ],
)  # fmt: skip
async def test_a_hosted_mcp_call_is_a_line_of_the_answer_and_graded_as_promptfoo_grades_it(
    tmp_path: Path,
    fake_llm: FakeLLM,
    make_client: ClientFactory,
    call: dict[str, Any],
    line: str,
    valid: bool,
) -> None:
    fake_llm.script(Reply(body=responses_body(LISTED, call)))
    test = {"id": "t", "input": "Which transports?", "tools": [MCP],
            "assertions": [{"name": "tools", "type": "is-valid-openai-tools-call"},
                           {"name": "fn", "type": "is-valid-function-call"}]}  # fmt: skip
    async with make_client(allowed(tmp_path, fake_llm)) as client:
        body = {"suite": {"name": "mcp", "tests": [test]}, "target": "responses"}
        response = await client.post("/evaluate", json=body)
    (record,) = response.json()["results"]
    assert record["candidate_answer"].split("\n")[0] == "MCP Tools from deepwiki: ["
    assert record["candidate_answer"].endswith(f"\n{line}\nThe spec lists stdio and HTTP.")
    passed = {e["name"]: e["passed"] for e in record["evaluator_results"]}
    assert passed == {"tools": valid, "fn": False}  # promptfoo reads MCP lines for the former
