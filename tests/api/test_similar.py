"""promptfoo's ``similar`` end to end: embeddings targets, the defaults' mock, refusals by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.settings import Settings
from app.settings.targets import MockTarget, OpenAITarget
from testkit.fake_llm import FakeLLM, error
from tests.conftest import ClientFactory

OUT = "The quick brown fox jumps over the lazy dog"


def suite(options: dict[str, Any] | None = None, **assertion: Any) -> dict[str, Any]:
    test: dict[str, Any] = {
        "vars": {"out": OUT},
        "assert": [
            {"type": "similar", "value": "the quick brown fox", **assertion},
            {"type": "not-similar", "value": "a slow green turtle crawls", **assertion},
            {"type": "similar:euclidean", "value": "a slow green turtle crawls", **assertion},
        ],
    }
    if options is not None:
        test["options"] = options
    return {"prompts": ["{{out}}"], "providers": ["default"], "tests": [test]}


def verdicts(body: dict[str, Any]) -> list[tuple[str, bool | None, float | None]]:
    results = body["results"][0]["evaluator_results"]
    return [(result["type"], result["passed"], result["score"]) for result in results]


async def test_a_fresh_server_grades_similar_on_its_mock_embeddings_target(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        reply = await client.post("/evaluate", json={"suite": suite()})
    assert reply.status_code == 200, reply.text
    found = verdicts(reply.json())
    # cosine 0.7926 >= 0.75; -0.124 <= 0.75 (score 1 - s); distance 1.4994 > 0.75
    assert found == [
        ("similar", True, 0.792594),
        ("similar", True, 1.0),
        ("similar", False, 0.400103),
    ]
    assert reply.json()["results"][0]["status"] == "failed"


async def test_embeds_over_http_with_the_target_options_name(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    embedder = OpenAITarget(
        name="openai:embedding:small", provider="openai", model="text-embedding-3-small",
        base_url=f"{fake_llm.url}/v1", api_key=SecretStr("sk-embed-SECRET"),
        api_format="embeddings",
    )  # fmt: skip
    targets = [embedder, MockTarget(name="other", api_format="embeddings")]
    options = {"provider": {"embedding": {"id": "openai:embedding:small"}}}
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as client:
        reply = await client.post("/evaluate", json={"suite": suite(options)})
    assert reply.status_code == 200, reply.text
    assert [passed for _, passed, _ in verdicts(reply.json())] == [True, True, False]
    sent = [request for request in fake_llm.requests if request.path == "/v1/embeddings"]
    assert {request.json["input"] for request in sent} == {
        OUT,
        "the quick brown fox",
        "a slow green turtle crawls",
    }
    assert "sk-embed-SECRET" not in reply.text


async def test_similar_without_an_embeddings_target_is_refused_by_name(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", targets=[MockTarget(name="default")])
    async with make_client(settings) as client:
        checked = await client.post("/validate", json={"suite": suite()})
        run = await client.post("/evaluate", json={"suite": suite()})
        named = await client.post("/evaluate", json={"suite": suite(provider="default")})
    assert checked.json()["valid"] is False
    messages = " ".join(error["message"] for error in checked.json()["errors"])
    assert "'similar'" in messages
    assert "needs an embeddings target" in messages
    assert run.status_code == 422
    assert "needs an embeddings target and none is configured" in run.json()["detail"]
    assert named.status_code == 422
    assert "target 'default' is not an embeddings target" in named.json()["detail"]


async def test_an_embeddings_target_answers_no_case(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    body = {"suite": suite(), "target": "embeddings"}
    async with make_client(Settings(data_dir=tmp_path / "data")) as client:
        reply = await client.post("/evaluate", json=body)
    assert reply.status_code == 422
    assert "'embeddings' is an embeddings target" in reply.json()["detail"]


async def test_a_failing_embeddings_target_is_a_judge_error_without_its_key(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    embedder = OpenAITarget(
        name="embed", provider="openai", model="m", base_url=f"{fake_llm.url}/v1",
        api_key=SecretStr("sk-embed-SECRET"), api_format="embeddings",
    )  # fmt: skip
    settings = Settings(data_dir=tmp_path / "data", targets=[embedder], retry_max_attempts=1)
    fake_llm.responder = lambda _: error(401, "Incorrect API key provided: sk-embed-SECRET")
    async with make_client(settings) as client:
        reply = await client.post("/evaluate", json={"suite": suite()})
    assert reply.status_code == 200, reply.text
    record = reply.json()["results"][0]
    for result in record["evaluator_results"]:
        assert (result["status"], result["score"]) == ("judge_error", None)
        assert "target 'embed' gave no embedding" in result["reasoning"]
    assert record["status"] == "judge_error"
    assert "sk-embed-SECRET" not in reply.text
