"""``POST /validate`` through the ASGI app: JSON and YAML bodies, reports, and refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from app.schemas.suite_examples import (
    CUSTOMER_SUPPORT_SUITE,
    CUSTOMER_SUPPORT_SUITE_PATH,
    QUICK_SUITE_YAML,
    REFUND_POLICY,
    REFUND_POLICY_PATH,
    validate_examples,
)
from app.settings import Settings

REPO = Path(__file__).resolve().parents[2]
PROBLEM = "application/problem+json"
YAML = {"content-type": "application/yaml"}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data", workspace_roots=[REPO / "examples"], max_body_bytes=64_000
    )


async def test_docs_examples_are_the_files_in_examples() -> None:
    assert (REPO / CUSTOMER_SUPPORT_SUITE_PATH).read_text() == CUSTOMER_SUPPORT_SUITE
    assert (REPO / REFUND_POLICY_PATH).read_text() == REFUND_POLICY


@pytest.mark.parametrize("name", sorted(validate_examples()))
async def test_every_docs_example_is_valid(client: httpx.AsyncClient, name: str) -> None:
    response = await client.post("/validate", json=validate_examples()[name]["value"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["valid"] is True, body["errors"]
    suite = validate_examples()[name]["value"]["suite"]
    cases = (yaml.safe_load(suite) if isinstance(suite, str) else suite)["evalcases"]
    assert [case["id"] for case in body["cases"]] == [case["id"] for case in cases]


async def test_yaml_body_is_the_eval_file_itself(client: httpx.AsyncClient) -> None:
    suite = (REPO / "examples/code-review/code-review.yaml").read_text()
    response = await client.post("/validate", content=suite, headers=YAML)
    body = response.json()
    # Sent as a body, the suite has no folder: files resolve from the root (examples/).
    assert response.status_code == 200
    assert body["valid"] is False
    assert {error["path"] for error in body["errors"]} >= {"execution.evaluators[0].prompt"}
    assert all(error["line"] > 0 for error in body["errors"])
    # A missing input file errs only the cases that use it, when they run: a warning here.
    assert any("src/auth/session.py" in warning for warning in body["warnings"]), body


async def test_report_lists_cases_with_markers_guidelines_and_files(
    client: httpx.AsyncClient,
) -> None:
    response = await client.post("/validate", json={"suite": "code-review/code-review.yaml"})
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True
    assert body["warnings"] == []
    assert body["cases"][0] == {
        "id": "session-token-timing-leak",
        "role_markers": True,
        "guideline_paths": [
            ".github/copilot.instructions.md",
            "guidelines/security.instructions.md",
        ],
        "files": [
            ".github/copilot.instructions.md",
            "guidelines/security.instructions.md",
            "src/auth/session.py",
        ],
    }


async def test_yaml_syntax_error_is_200_with_position(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/validate", content="evalcases:\n  - id: a\n    outcome: [oops\n", headers=YAML
    )
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    [error] = body["errors"]
    assert error["message"].startswith("invalid YAML")
    assert (error["line"], error["column"]) == (4, 1)


async def test_yaml_text_inside_json_reports_line_and_column(client: httpx.AsyncClient) -> None:
    suite = (
        "evalcases:\n  - id: a\n    outcome: x\n"
        "    input_messages:\n      - {role: bot, content: Hi}\n"
    )
    body = (await client.post("/validate", json={"suite": suite})).json()
    assert body["errors"] == [
        {
            "path": "evalcases[0].input_messages[0].role",
            "line": 5,
            "column": 16,
            "message": "Input should be 'system', 'user', 'assistant' or 'tool'; got \"bot\"",
        }
    ]


async def test_object_suite_errors_have_paths_without_positions(client: httpx.AsyncClient) -> None:
    suite = {"evalcases": [{"id": "a", "input": "Hi"}, {"id": "a", "outcome": "x", "input": "Hi"}]}
    body = (await client.post("/validate", json={"suite": suite})).json()
    assert body["valid"] is False
    assert [error["path"] for error in body["errors"]] == [
        "evalcases[0].expected_outcome",
        "evalcases[1].id",
    ]
    assert all(set(error) == {"path", "message"} for error in body["errors"])


async def test_a_code_grader_in_a_request_body_makes_the_report_invalid(client) -> None:
    suite = yaml.safe_load(CUSTOMER_SUPPORT_SUITE)
    suite["execution"]["evaluators"].append({"name": "kw", "type": "code_judge", "script": "x"})
    body = (
        await client.post(
            "/validate", json={"suite": suite, "files": {"policies/refunds.md": REFUND_POLICY}}
        )
    ).json()
    assert body["valid"] is False
    assert body["dialect"] == "agentv-2025"
    [error] = body["errors"]
    assert error["path"] == "evalcases[1]"  # the first case that uses the suite graders
    assert error["message"].startswith("grader 'kw' (code_judge) cannot run: code graders are")


async def test_path_safety_refusals_are_reported(client: httpx.AsyncClient) -> None:
    suite = {
        "tests": [
            {
                "id": "a",
                "outcome": "x",
                "input_messages": [
                    {
                        "role": "user",
                        "content": [
                            {"type": "file", "value": "//etc/passwd"},
                            {"type": "file", "value": "../../etc/passwd"},
                        ],
                    }
                ],
            }
        ]
    }
    body = (await client.post("/validate", json={"suite": suite})).json()
    messages = [error["message"] for error in body["errors"]]
    assert "absolute paths are not allowed" in messages[0]
    assert "leaves the workspace root" in messages[1]


async def test_missing_suite_file_is_reported_not_a_problem(client: httpx.AsyncClient) -> None:
    body = (await client.post("/validate", json={"suite": "nowhere/suite.yaml"})).json()
    assert body["valid"] is False
    assert body["errors"][0]["path"] == "suite"


@pytest.mark.parametrize(
    ("content", "status"),
    [
        (b"[1, 2, 3]", 422),
        (b'{"files": {}}', 422),
        (b'{"suite": 42}', 422),
        (b'{"suite": {}, "extra": 1}', 422),
        (b'{"suite": ', 400),
    ],
    ids=["array", "no-suite", "suite-number", "unknown-field", "broken-json"],
)
async def test_body_that_is_not_a_suite_request_is_a_problem(
    client: httpx.AsyncClient, content: bytes, status: int
) -> None:
    response = await client.post(
        "/validate", content=content, headers={"content-type": "application/json"}
    )
    assert response.status_code == status
    assert response.headers["content-type"] == PROBLEM


async def test_non_utf8_yaml_body_is_a_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/validate", content="é: x".encode("latin-1"), headers=YAML)
    assert response.status_code == 400


async def test_unsupported_media_type_is_a_415(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/validate", content=b"suite", headers={"content-type": "text/plain"}
    )
    assert response.status_code == 415


async def test_oversize_body_is_a_413(client: httpx.AsyncClient) -> None:
    big = json.dumps({"suite": "x" * 70_000})
    response = await client.post(
        "/validate", content=big, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.headers["content-type"] == PROBLEM


async def test_alias_bomb_body_is_refused_quickly(client: httpx.AsyncClient) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for level in range(1, 9):
        refs = ",".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append("evalcases: [*a8]")
    response = await client.post("/validate", content="\n".join(lines), headers=YAML)
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    assert "expands to more than" in body["errors"][0]["message"]


async def test_openapi_documents_validate_with_examples(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    operation = document["paths"]["/validate"]["post"]
    content = operation["requestBody"]["content"]
    assert set(content["application/json"]["examples"]) == set(validate_examples())
    assert content["application/yaml"]["example"] == QUICK_SUITE_YAML
    assert {"400", "413", "415", "422"} <= set(operation["responses"])
    assert "ValidateRequest" in document["components"]["schemas"]


async def test_prompts_query_returns_each_case_formatted(client) -> None:
    suite = (
        "evalcases:\n"
        "  - id: greet\n"
        "    expected_outcome: Greets back\n"
        "    input_messages:\n"
        "      - {role: system, content: Be warm.}\n"
        "      - {role: user, content: Hello}\n"
    )
    response = await client.post(
        "/validate?prompts=true", content=suite, headers={"content-type": "application/yaml"}
    )
    case = response.json()["cases"][0]
    assert case["question"] == "@[System]:\nBe warm.\n\n@[User]:\nHello"
    assert case["chatPrompt"] == [
        {"role": "system", "content": "Be warm."},
        {"role": "user", "content": "Hello"},
    ]
    plain = await client.post(
        "/validate", content=suite, headers={"content-type": "application/yaml"}
    )
    assert "question" not in plain.json()["cases"][0]


@pytest.mark.parametrize(
    ("suite", "dialect"),
    [
        ({"evalcases": [{"id": "a", "outcome": "x", "input": "Hi"}]}, "agentv-2025"),
        ({"tests": [{"id": "a", "criteria": "x", "input": "Hi"}]}, "agentv-2026"),
        (
            {"prompts": ["{{ q }}"], "tests": [{"vars": {"q": "Hi"}, "assert": ["Greets"]}]},
            "prompts-providers-vars",
        ),
        ("just a string that is not a suite", "unknown"),
    ],
)
async def test_validate_says_which_dialect_it_read(
    client: httpx.AsyncClient, suite: Any, dialect: str
) -> None:
    body = (await client.post("/validate", json={"suite": suite})).json()
    assert body["dialect"] == dialect
    assert body["valid"] is (dialect != "unknown")


async def test_a_provider_that_is_not_a_target_is_named(client: httpx.AsyncClient) -> None:
    suite = {"providers": ["openai:gpt-4.1-mini"], "prompts": ["{{ q }}"],
             "tests": [{"vars": {"q": "Hi"}}]}  # fmt: skip
    body = (await client.post("/validate", json={"suite": suite})).json()
    assert body["valid"] is False
    [error] = body["errors"]
    assert error["path"] == "providers"
    assert "'openai:gpt-4.1-mini' is not a target" in error["message"]
    assert "default" in error["message"]
    named = {**suite, "providers": ["default"]}
    assert (await client.post("/validate", json={"suite": named})).json()["valid"] is True
