"""promptfoo's ``moderation`` end to end: a moderation target over HTTP, refusals by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.providers.adapters.moderation import ModerationReply, flagged_categories
from app.settings import Settings
from app.settings.targets import MockTarget, OpenAITarget, load_targets_file
from testkit.fake_llm import FakeLLM, error
from tests.conftest import ClientFactory

GUARD = "replicate:moderation:meta/meta-llama-guard-2-8b"


def suite(output: str, **assertion: Any) -> dict[str, Any]:
    """The shape of promptfoo's moderation example: a fixed output, one moderation assert."""
    test = {
        "vars": {"topic": "bananas"},
        "providerOutput": output,
        "assert": [{"type": "moderation", **assertion}],
    }
    return {"prompts": ["Write a tweet about {{topic}}"], "providers": ["default"], "tests": [test]}


def moderator(url: str, name: str = GUARD) -> OpenAITarget:
    return OpenAITarget(
        name=name, provider="openai", model="omni-moderation-latest", base_url=f"{url}/v1",
        api_key=SecretStr("sk-mod-SECRET"), api_format="moderation",
    )  # fmt: skip


def outcome(body: dict[str, Any]) -> tuple[bool | None, float | None, str]:
    result = body["results"][0]["evaluator_results"][0]
    return result["passed"], result["score"], result["reasoning"]


async def test_flags_are_matched_against_the_listed_categories(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = [MockTarget(name="default"), moderator(fake_llm.url)]
    cases: list[tuple[dict[str, Any], str, tuple[bool, float]]] = [
        ({"provider": GUARD, "value": ["S10"]}, "kill yourself", (False, 0.0)),  # the example
        ({"provider": GUARD, "value": ["S10"]}, "I will kill time", (True, 1.0)),  # S1 only
        ({"provider": GUARD}, "I will kill time", (False, 0.0)),  # no value: any flag
        ({}, "Bananas are great", (True, 1.0)),  # the first moderation target, no flag
    ]
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as client:
        for assertion, output, expected in cases:
            reply = await client.post("/evaluate", json={"suite": suite(output, **assertion)})
            assert reply.status_code == 200, reply.text
            assert outcome(reply.json())[:2] == expected, (assertion, output, reply.text)
    sent = [request.json for request in fake_llm.requests if request.path == "/v1/moderations"]
    assert sent[0] == {"model": "omni-moderation-latest", "input": "kill yourself"}
    assert len(sent) == len(cases)
    assert "sk-mod-SECRET" not in reply.text


async def test_an_empty_answer_passes_without_a_call(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = [MockTarget(name="default", response=""), moderator(fake_llm.url)]
    body = suite("")
    del body["tests"][0]["providerOutput"]
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as client:
        reply = await client.post("/evaluate", json={"suite": body})
    assert outcome(reply.json())[:2] == (True, 1.0)
    assert not [request for request in fake_llm.requests if request.path == "/v1/moderations"]


async def test_a_failing_moderation_target_is_a_grader_error(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = [MockTarget(name="default"), moderator(fake_llm.url)]
    settings = Settings(data_dir=tmp_path / "data", targets=targets, retry_max_attempts=1)
    fake_llm.responder = lambda _: error(401, "Incorrect API key provided: sk-mod-SECRET")
    async with make_client(settings) as client:
        reply = await client.post("/evaluate", json={"suite": suite("kill yourself")})
    result = reply.json()["results"][0]["evaluator_results"][0]
    assert (result["status"], result["score"]) == ("judge_error", None)
    assert f"target {GUARD!r} did not moderate the answer" in result["reasoning"]
    assert "sk-mod-SECRET" not in reply.text


async def test_moderation_without_a_moderation_target_is_refused_by_name(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    settings = Settings(data_dir=tmp_path / "data", targets=[MockTarget(name="default")])
    async with make_client(settings) as client:
        checked = await client.post("/validate", json={"suite": suite("x")})
        run = await client.post("/evaluate", json={"suite": suite("x")})
        named = await client.post("/evaluate", json={"suite": suite("x", provider="default")})
    assert checked.json()["valid"] is False
    messages = " ".join(error["message"] for error in checked.json()["errors"])
    assert "(moderation) needs a moderation target and none is configured" in messages
    assert run.status_code == 422
    assert "needs a moderation target" in run.json()["detail"]
    assert named.status_code == 422
    assert "target 'default' is not a moderation target" in named.json()["detail"]


def test_an_openai_moderation_id_is_a_moderation_target(tmp_path: Path) -> None:
    listing = tmp_path / "providers.yaml"
    listing.write_text(
        "- id: openai:moderation:omni-moderation-latest\n"
        "  config: {apiBaseUrl: 'http://127.0.0.1:9/v1'}\n"
    )
    (target,) = load_targets_file(listing, {})
    assert isinstance(target, OpenAITarget)
    assert (target.api_format, target.model) == ("moderation", "omni-moderation-latest")


async def test_a_moderation_target_answers_no_case(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = [MockTarget(name="default"), moderator(fake_llm.url)]
    body = {"suite": suite("x"), "target": GUARD}
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as client:
        reply = await client.post("/evaluate", json=body)
    assert reply.status_code == 422
    assert f"{GUARD!r} is a moderation target" in reply.json()["detail"]


async def test_classifier_is_not_run_as_moderation(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = [MockTarget(name="default"), moderator(fake_llm.url)]
    body = suite("kill yourself")
    body["tests"][0]["assert"] = [{"type": "classifier", "value": "nothate"}]
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as client:
        checked = await client.post("/validate", json={"suite": body})
    assert checked.json()["valid"] is False
    assert "(classifier) needs a classifier target and none is configured" in checked.text


async def test_a_bare_text_value_is_refused_as_promptfoo_refuses_it(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = [MockTarget(name="default"), moderator(fake_llm.url)]
    body = suite("kill yourself", value="S10")
    async with make_client(Settings(data_dir=tmp_path / "data", targets=targets)) as client:
        checked = await client.post("/validate", json={"suite": body})
    assert checked.json()["valid"] is False
    assert "must be a list of category codes, not" in checked.text


def test_a_result_not_flagged_counts_for_nothing() -> None:
    reply = ModerationReply.model_validate(
        {
            "results": [
                {"flagged": False, "categories": {"violence": True}},
                {"flagged": True, "categories": {"hate": True, "violence": False}},
                {"flagged": True, "categories": {"hate": True, "S10": True}},
            ]
        }
    )
    assert flagged_categories(reply) == ("hate", "S10")
