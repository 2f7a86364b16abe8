"""``POST /format`` through the ASGI app: success shapes and every error."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.schemas.format import FORMAT_EXAMPLES

PROBLEM = "application/problem+json"


async def post(client: httpx.AsyncClient, body: object) -> httpx.Response:
    return await client.post("/format", json=body)


@pytest.mark.parametrize("name", sorted(FORMAT_EXAMPLES))
async def test_every_docs_example_formats(client: httpx.AsyncClient, name: str) -> None:
    response = await post(client, FORMAT_EXAMPLES[name]["value"])
    assert response.status_code == 200, response.text
    body = response.json()
    expected = {
        "question",
        "guidelines",
        "guideline_paths",
        "chatPrompt",
        "role_markers",
        "warnings",
    }
    if "providers" in FORMAT_EXAMPLES[name]["value"]:
        expected.add("provider_requests")
    assert set(body) == expected


async def test_multi_turn_example_has_markers_guidelines_and_native_turns(client) -> None:
    body = (await post(client, FORMAT_EXAMPLES["multi_turn_tool"]["value"])).json()
    assert body["role_markers"] is True
    assert body["guideline_paths"] == ["ops/oncall.instructions.md"]
    assert [m["role"] for m in body["chatPrompt"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "user",
    ]
    system = body["chatPrompt"][0]["content"]
    assert system.startswith("[[ ## Guidelines ## ]]\n\n")
    assert system.endswith("\n\nYou are an on-call assistant.")
    assert "<Attached: ops/oncall.instructions.md>" in body["question"]
    assert "missing DATABASE_URL" in body["question"]


async def test_yaml_body_gives_the_same_answer_as_json(client) -> None:
    yaml_body = (
        "input_messages:\n"
        "  - role: system\n    content: Be brief.\n"
        "  - role: user\n    content: Hi\n"
        "marker_style: bracket\n"
    )
    response = await client.post(
        "/format", content=yaml_body, headers={"content-type": "application/yaml"}
    )
    as_json = await post(
        client,
        {
            "input_messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
            ],
            "marker_style": "bracket",
        },
    )
    assert response.status_code == 200
    assert response.json() == as_json.json()
    assert response.json()["question"] == "[System]:\nBe brief.\n\n[User]:\nHi"


async def test_system_prompt_leads_the_system_message(client) -> None:
    body = (
        await post(
            client,
            {"input_messages": [{"role": "user", "content": "Hi"}], "system_prompt": "Be kind."},
        )
    ).json()
    assert body["chatPrompt"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "Hi"},
    ]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"input_messages": [{"role": "developer", "content": "x"}]}, "input_messages[0].role"),
        ({"input_messages": [{"role": "user", "content": 42}]}, "input_messages[0].content"),
        (
            {
                "input_messages": [
                    {"role": "user", "content": [{"type": "image", "value": "a.png"}]}
                ]
            },
            "input_messages[0].content[0]",
        ),
        (
            {"input_messages": [{"role": "user", "content": [{"type": "text"}]}]},
            "input_messages[0].content[0]",
        ),
        ({"input_messages": []}, "input_messages"),
        ({}, "input_messages"),
        ({"input_messages": [{"role": "user", "content": "x"}], "mode": "chat"}, "mode"),
        ({"input_messages": [{"role": "user", "content": "x"}], "surprise": 1}, "surprise"),
    ],
    ids=[
        "unknown-role",
        "content-wrong-type",
        "unknown-part-type",
        "text-part-without-value",
        "empty-messages",
        "no-messages",
        "bad-mode",
        "unknown-field",
    ],
)
async def test_schema_violations_are_422_problems_naming_the_field(client, body, path) -> None:
    response = await post(client, body)
    assert response.status_code == 422
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert {"type", "title", "status", "detail"} <= set(problem)
    assert path in [error["path"] for error in problem["errors"]]


async def test_missing_file_in_lm_mode_is_422_naming_the_file(client) -> None:
    response = await post(
        client,
        {
            "input_messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "value": "Read"},
                        {"type": "file", "value": "notes/a.md"},
                    ],
                }
            ]
        },
    )
    assert response.status_code == 422
    problem = response.json()
    assert "notes/a.md" in problem["detail"]
    assert problem["errors"] == [
        {"path": "input_messages[0].content[1].value", "message": "file not found: notes/a.md"}
    ]


async def test_missing_file_allowed_is_skipped_with_a_warning(client) -> None:
    response = await post(
        client,
        {
            "input_messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "value": "Read"},
                        {"type": "file", "value": "a.md"},
                    ],
                }
            ],
            "allow_missing_files": True,
        },
    )
    assert response.status_code == 200
    assert response.json()["question"] == "Read"
    assert response.json()["warnings"] == ["file not found: a.md (left out)"]


async def test_missing_file_in_agent_mode_is_a_reference_with_a_warning(client) -> None:
    response = await post(
        client,
        {
            "input_messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "value": "a.md"},
                        {"type": "text", "value": "Read"},
                    ],
                }
            ],
            "mode": "agent",
        },
    )
    assert response.status_code == 200
    assert response.json()["question"] == '<file: path="a.md">\n\nRead'
    assert response.json()["warnings"]


@pytest.mark.parametrize(
    ("content", "media_type"),
    [
        (b"{not json", "application/json"),
        (b"input_messages: [\n", "application/yaml"),
        (b"\xff\xfe", "application/json"),
    ],
    ids=["bad-json", "bad-yaml", "not-utf8"],
)
async def test_unparsable_body_is_400_problem(client, content, media_type) -> None:
    response = await client.post("/format", content=content, headers={"content-type": media_type})
    assert response.status_code == 400
    assert response.headers["content-type"] == PROBLEM


async def test_yaml_syntax_error_reports_its_position(client) -> None:
    response = await client.post(
        "/format",
        content=b"input_messages:\n  - role: user\n    content: [unclosed\n",
        headers={"content-type": "application/yaml"},
    )
    error = response.json()["errors"][0]
    assert response.status_code == 400
    assert error["line"] >= 3


async def test_other_media_type_is_415(client) -> None:
    response = await client.post(
        "/format", content=b"a=1", headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 415
    assert response.headers["content-type"] == PROBLEM


async def test_body_over_the_limit_is_413(client, settings) -> None:
    big = json.dumps(
        {"input_messages": [{"role": "user", "content": "x" * settings.max_body_bytes}]}
    )
    response = await client.post(
        "/format", content=big, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["status"] == 413


async def test_body_that_is_not_an_object_is_422(client) -> None:
    response = await post(client, [1, 2])
    assert response.status_code == 422


async def test_yaml_alias_bomb_is_refused_quickly(client) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    response = await client.post(
        "/format", content="\n".join(lines), headers={"content-type": "application/yaml"}
    )
    assert response.status_code == 400
    assert "expands" in response.json()["detail"]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["role", "content", "type", "value", "input_messages", "files", "mode"]
            ),
            children,
            max_size=3,
        )
    ),
    max_leaves=12,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.dictionaries(
        st.sampled_from(
            [
                "input_messages",
                "files",
                "mode",
                "marker_style",
                "guideline_patterns",
                "allow_missing_files",
            ]
        ),
        JSON_VALUES,
        max_size=4,
    )
)
async def test_no_input_produces_a_500(client, body) -> None:
    response = await post(client, body)
    assert response.status_code in (200, 422)


async def test_provider_preview_shows_each_apis_body_without_configured_targets(client) -> None:
    response = await post(client, FORMAT_EXAMPLES["provider_preview"]["value"])
    previews = response.json()["provider_requests"]
    assert response.status_code == 200
    assert set(previews) == {"openai", "anthropic", "gemini"}
    openai, anthropic, gemini = (previews[name] for name in ("openai", "anthropic", "gemini"))
    roles = [m["role"] for m in openai["body"]["messages"]]
    assert roles == ["system", "user", "assistant", "user", "user"]  # the default system prompt
    assert openai["rewrites"] == ["tool turn 4 sent as user with @[Tool]: marker"]
    assert [m["role"] for m in anthropic["body"]["messages"]] == ["user", "assistant", "user"]
    assert "turns 4 and 5 merged: consecutive user" in anthropic["rewrites"]
    assert [turn["role"] for turn in gemini["body"]["contents"]] == ["user", "model", "user"]
    assert all("no target is named" in preview["note"] for preview in previews.values())


async def test_provider_preview_of_a_configured_target_wins_over_the_provider_name(
    tmp_path, make_client
) -> None:
    from app.settings import Settings
    from app.settings.targets import OpenAITarget

    target = OpenAITarget(name="openai", provider="openai", model="gpt-4o-mini")
    body = {
        "input_messages": [{"role": "user", "content": "Hi"}],
        "providers": ["openai", "anthropic"],
    }
    async with make_client(Settings(data_dir=tmp_path / "data", targets=[target])) as http:
        previews = (await post(http, body)).json()["provider_requests"]
    assert previews["openai"]["body"]["model"] == "gpt-4o-mini"
    assert "note" not in previews["openai"]
    assert previews["anthropic"]["body"]["model"] == "<model>"
    assert "provider 'anthropic'" in previews["anthropic"]["note"]


async def test_provider_preview_shows_a_targets_response_format_natively(
    tmp_path, make_client
) -> None:
    from app.settings import Settings
    from app.settings.targets import AnthropicTarget, OpenAITarget

    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    shape = {"type": "json_schema", "json_schema": {"name": "city", "schema": schema}}
    targets = [
        OpenAITarget.model_validate(
            {"name": "gpt", "provider": "openai", "model": "m", "response_format": shape}
        ),
        AnthropicTarget.model_validate(
            {
                "name": "claude",
                "provider": "anthropic",
                "model": "m",
                "api_key": "k",
                "response_format": schema,
            }
        ),
    ]
    body = {"input_messages": [{"role": "user", "content": "Hi"}], "providers": ["gpt", "claude"]}
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as http:
        previews = (await post(http, body)).json()["provider_requests"]
    chat = previews["gpt"]["body"]["response_format"]
    assert (chat["type"], chat["json_schema"]["name"]) == ("json_schema", "city")
    claude = previews["claude"]["body"]
    assert claude["tool_choice"] == {"type": "tool", "name": "response"}
    assert claude["tools"][0]["input_schema"]["properties"] == schema["properties"]


async def test_provider_preview_of_unknown_target_is_422(client) -> None:
    response = await post(
        client, {"input_messages": [{"role": "user", "content": "x"}], "providers": ["nope"]}
    )
    assert response.status_code == 422
    assert "unknown target 'nope'" in response.json()["detail"]
    assert "providers previewed without a target: openai" in response.json()["detail"]


async def test_files_are_read_from_workspace_roots(tmp_path, make_client) -> None:
    from app.settings import Settings

    root = tmp_path / "workspace"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.md").write_text("From the workspace.\n", encoding="utf-8")
    async with make_client(Settings(data_dir=tmp_path / "data", workspace_roots=[root])) as http:
        ok = await post(
            http,
            {
                "input_messages": [
                    {"role": "user", "content": [{"type": "file", "value": "docs/notes.md"}]}
                ]
            },
        )
        escape = await post(
            http,
            {
                "input_messages": [
                    {"role": "user", "content": [{"type": "file", "value": "../secret.txt"}]}
                ]
            },
        )
    assert ok.json()["question"] == '<file path="docs/notes.md">\nFrom the workspace.\n</file>'
    assert escape.status_code == 422
    assert escape.json()["errors"][0]["path"] == "input_messages[0].content[0].value"


async def test_provider_preview_shows_the_tools_in_each_apis_own_form(client) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": schema}}
    body = {
        "input_messages": [{"role": "user", "content": "Weather in Paris?"}],
        "providers": ["openai", "openai-responses", "azure", "anthropic", "gemini"],
        "tools": [weather],
        "tool_choice": {"type": "tool", "name": "get_weather"},
    }
    response = await post(client, body)
    assert response.status_code == 200, response.text
    previews = {name: p["body"] for name, p in response.json()["provider_requests"].items()}
    for chat in ("openai", "azure"):
        assert previews[chat]["tools"] == [weather]
        assert previews[chat]["tool_choice"] == {
            "type": "function", "function": {"name": "get_weather"},
        }  # fmt: skip
    assert previews["openai-responses"]["tools"] == [
        {"type": "function", "name": "get_weather", "parameters": schema, "strict": False}
    ]
    assert previews["openai-responses"]["tool_choice"] == {
        "type": "function",
        "name": "get_weather",
    }
    assert previews["anthropic"]["tools"] == [{"name": "get_weather", "input_schema": schema}]
    assert previews["anthropic"]["tool_choice"] == {"type": "tool", "name": "get_weather"}
    gemini = previews["gemini"]
    assert [d["name"] for d in gemini["tools"][0]["functionDeclarations"]] == ["get_weather"]
    assert gemini["toolConfig"] == {
        "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}
    }


async def test_a_tool_of_a_kind_that_is_not_sent_is_a_422_naming_it(client) -> None:
    body = {
        "input_messages": [{"role": "user", "content": "x"}],
        "providers": ["openai"],
        "tools": [{"type": "web_search_preview"}],
    }
    response = await post(client, body)
    assert response.status_code == 422
    assert "tool type 'web_search_preview' is not supported" in response.text
