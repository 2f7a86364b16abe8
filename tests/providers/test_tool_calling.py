"""Tools on API targets over real HTTP: each wire's native tools, calls and tool-loop turns.

The fake LLM server answers with tool calls in each API's own format and refuses (400) any
body its API would refuse (``testkit.wire_shapes``), so a body these tests pass with is one
the real API takes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.providers.base import CallRole, ToolCall, ToolStep
from app.providers.errors import ProviderRejected
from app.settings.tools import ToolChoice, ToolsError, ToolSpec, read_tool_choice, read_tools
from testkit.fake_llm import Reply
from testkit.wire_shapes import shape_problems
from tests.providers.conftest import (
    anthropic_target,
    azure_target,
    gemini_target,
    openai_target,
    request_for,
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
SEARCH = {"name": "search", "input_schema": {"type": "object", "properties": {"q": {}}}}


def _targets(url: str) -> dict[str, dict[str, Any]]:
    tools = {"tools": [WEATHER, SEARCH], "tool_choice": "required"}
    return {
        "gpt": openai_target(url, **tools),
        "az": azure_target(url, **tools),
        "resp": openai_target(url, name="resp", api_format="responses", **tools),
        "claude": anthropic_target(url, **tools),
        "gem": gemini_target(url, **tools),
    }


NAMES = ["gpt", "az", "resp", "claude", "gem"]


def _declared(body: dict[str, Any], name: str) -> list[str]:
    """The tool names a body declares, read the way its API reads them."""
    if name == "gem":
        return [d["name"] for d in body["tools"][0]["functionDeclarations"]]
    if name in ("gpt", "az"):
        return [t["function"]["name"] for t in body["tools"]]
    return [t["name"] for t in body["tools"]]


@pytest.mark.parametrize("name", NAMES)
async def test_each_adapter_sends_the_targets_tools_natively_and_reads_the_calls(
    fake_llm, make_registry, name
):
    registry = make_registry(list(_targets(fake_llm.url).values()))
    fake_llm.script(
        Reply(tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "c1"},
                          {"name": "search", "arguments": {"q": "rain"}, "id": "c2"}])
    )  # fmt: skip
    reply = await registry.get(name).complete(request_for(question="Weather in Paris?"))
    [sent] = fake_llm.requests
    assert fake_llm.shape_errors == []
    assert _declared(sent.json, name) == ["get_weather", "search"]
    assert [(c.tool, c.input) for c in reply.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("search", {"q": "rain"}),
    ]  # fmt: skip
    assert all(c.arguments_error is None and c.arguments for c in reply.tool_calls)
    assert json.loads(reply.tool_calls[0].arguments or "") == {"city": "Paris"}
    if name != "gem":  # Gemini's fake calls carry no id
        assert [c.id for c in reply.tool_calls] == ["c1", "c2"]
    answer = json.loads(reply.text)
    if name == "gem":  # promptfoo's Gemini output: the parts, `output[0].functionCall.name`
        assert [a["functionCall"]["name"] for a in answer] == ["get_weather", "search"]
        assert answer[0]["functionCall"]["args"] == {"city": "Paris"}
    else:
        assert [a["function"]["name"] for a in answer] == ["get_weather", "search"]
    # tool_calls / tool_use / STOP with calls / completed with calls: one normalised word
    assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(("max_tokens", "expected"), [(None, "stop"), (16, "length")])
async def test_each_adapter_records_why_the_model_stopped_in_promptfoos_words(
    fake_llm, make_registry, name, max_tokens, expected
):
    targets = _targets(fake_llm.url)
    registry = make_registry(
        [{**t, "tools": [], "tool_choice": None, "max_output_tokens": max_tokens}
         for t in targets.values()]
    )  # fmt: skip
    fake_llm.script(Reply(text=" ".join(["sunny"] * 20)))
    reply = await registry.get(name).complete(request_for(question="Weather?"))
    assert fake_llm.shape_errors == []
    assert reply.finish_reason == expected  # end_turn, STOP, completed / max_tokens, MAX_TOKENS


@pytest.mark.parametrize(
    ("name", "field", "expected"),
    [
        ("gpt", "tool_choice", "required"),
        ("resp", "tool_choice", "required"),
        ("claude", "tool_choice", {"type": "any"}),
        ("gem", "toolConfig", {"functionCallingConfig": {"mode": "ANY"}}),
    ],
)
async def test_tool_choice_is_sent_in_each_apis_spelling(
    fake_llm, make_registry, name, field, expected
):
    registry = make_registry(list(_targets(fake_llm.url).values()))
    await registry.get(name).complete(request_for())
    assert fake_llm.requests[0].json[field] == expected
    assert fake_llm.shape_errors == []


@pytest.mark.parametrize("name", ["gpt", "resp"])
async def test_arguments_that_do_not_parse_are_kept_and_marked(fake_llm, make_registry, name):
    registry = make_registry(list(_targets(fake_llm.url).values()))
    fake_llm.script(Reply(tool_calls=[{"name": "get_weather", "arguments": '{"city": "Par'}]))
    reply = await registry.get(name).complete(request_for())
    [call] = reply.tool_calls
    assert call.tool == "get_weather"
    assert call.input is None
    assert call.arguments == '{"city": "Par'
    assert call.arguments_error is not None
    assert call.arguments_error.startswith("arguments are not JSON")


@pytest.mark.parametrize("name", NAMES)
async def test_a_tool_loop_step_is_sent_back_natively_and_the_api_accepts_it(
    fake_llm, make_registry, name
):
    registry = make_registry(list(_targets(fake_llm.url).values()))
    calls = (
        ToolCall(tool="get_weather", input={"city": "Paris"}, id="c1", output={"temp": 21}),
        ToolCall(tool="search", input={"q": "rain"}, output="no rain today"),
    )
    request = request_for(question="Weather in Paris?").model_copy(
        update={"tool_steps": (ToolStep(text="Let me look.", calls=calls),)}
    )
    fake_llm.script(Reply(text="It is 21 degrees and dry."))
    reply = await registry.get(name).complete(request)
    assert fake_llm.shape_errors == []
    assert reply.text == "It is 21 degrees and dry."
    sent = fake_llm.requests[0].messages_text()
    assert "no rain today" in sent
    assert "21" in sent


async def test_a_result_answering_no_call_is_refused_as_the_api_would(fake_llm, make_registry):
    registry = make_registry([openai_target(fake_llm.url)])
    body = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "x", "content": "1"}]}
    assert shape_problems("openai", body)
    bad_tool = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}],
                "tools": [{"name": "t", "parameters": {}}]}  # fmt: skip
    assert shape_problems("anthropic", bad_tool)
    request = request_for().model_copy(update={"tools": (ToolSpec(name="bad name!"),)})
    with pytest.raises(ProviderRejected, match="tools/0/function/name"):
        await registry.get("gpt").complete(request)


async def test_judge_calls_never_carry_the_candidates_tools(fake_llm, make_registry):
    registry = make_registry([_targets(fake_llm.url)["claude"]])
    await registry.get("claude").complete(request_for(role=CallRole.JUDGE))
    assert "tools" not in fake_llm.requests[0].json


async def test_a_requests_own_tools_win_over_the_targets_by_name(fake_llm, make_registry):
    registry = make_registry([_targets(fake_llm.url)["gpt"]])
    own = read_tools([{"name": "get_weather", "parameters": {"type": "object"}}])
    request = request_for().model_copy(
        update={"tools": own, "tool_choice": ToolChoice(mode="tool", name="search")}
    )
    preview = registry.preview(["gpt"], request)["gpt"]
    functions = {t["function"]["name"]: t["function"] for t in preview.body["tools"]}
    assert functions["get_weather"] == {"name": "get_weather", "parameters": {"type": "object"}}
    assert preview.body["tool_choice"] == {"type": "function", "function": {"name": "search"}}


def test_every_spelling_of_a_tool_reads_the_same():
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}}
    spellings = [
        {"type": "function", "function": {"name": "w", "parameters": parameters}},
        {"type": "function", "function": {"name": "w", "input_schema": parameters}},
        {"type": "function", "name": "w", "parameters": parameters},
        {"name": "w", "input_schema": parameters},
        {"functionDeclarations": [{"name": "w", "parameters": parameters}]},
    ]
    read = [read_tools([spelling])[0] for spelling in spellings]
    assert all(tool == read[0] for tool in read)
    assert read[0].name == "w"
    assert read[0].parameters == parameters


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"type": "web_search"}], "tool type 'web_search' is not supported"),
        ([{"description": "x"}], "needs a 'name'"),
        ([{"name": "a"}, {"name": "a"}], "declared twice"),
        ([{"name": "a", "parameters": "object"}], "must be a JSON Schema object"),
    ],
)
def test_unreadable_tools_are_refused_by_name(raw, message):
    with pytest.raises(ToolsError, match=message):
        read_tools(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("auto", ToolChoice(mode="auto")),
        ("ANY", ToolChoice(mode="required")),
        ({"type": "any"}, ToolChoice(mode="required")),
        ({"type": "function", "function": {"name": "w"}}, ToolChoice(mode="tool", name="w")),
        ({"type": "tool", "name": "w"}, ToolChoice(mode="tool", name="w")),
    ],
)
def test_tool_choice_reads_every_apis_spelling(raw, expected):
    assert read_tool_choice(raw) == expected


def test_a_target_with_an_unreadable_tool_stops_start_up_naming_it(make_registry):
    from app.errors import TargetsFileError

    with pytest.raises(TargetsFileError, match="tool type 'mcp'"):
        make_registry([openai_target("http://127.0.0.1:1", tools=[{"type": "mcp"}])])
