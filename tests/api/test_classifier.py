"""promptfoo's ``classifier`` end to end: a Hugging Face classifier target over HTTP, refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from app.providers.adapters.huggingface import classification_scores
from app.settings import Settings
from app.settings.targets import HuggingFaceTarget, MockTarget, OpenAITarget, load_targets_file
from testkit.fake_llm import FakeLLM, Reply, error
from tests.conftest import ClientFactory
from tests.suites.test_reference_matrices import EXAMPLES

HF = "huggingface:text-classification:facebook/roberta-hate-speech-dynabench-r4-target"


def suite(output: str, *, options: bool = True, **assertion: Any) -> dict[str, Any]:
    """The shape of promptfoo's hate-speech example: the classifier in ``defaultTest``."""
    default: dict[str, Any] = {"assert": [{"type": "classifier", **assertion}]}
    if options:
        default["options"] = {"provider": HF}
    test = {"vars": {"topic": "bananas"}, "providerOutput": output}
    return {
        "prompts": ["Say something mean about {{topic}}"],
        "providers": ["default"],
        "defaultTest": default,
        "tests": [test],
    }


def classifier(url: str, name: str = HF) -> HuggingFaceTarget:
    return HuggingFaceTarget(
        name=name, provider="huggingface", model="facebook/roberta-hate-speech-dynabench-r4-target",
        base_url=f"{url}/hf-inference", api_key=SecretStr("hf_SECRET_token"),
    )  # fmt: skip


def outcome(body: dict[str, Any]) -> tuple[bool | None, float | None, str]:
    result = body["results"][0]["evaluator_results"][0]
    return result["passed"], result["score"], result["reasoning"]


def settings_with(tmp_path: Path, *targets: Any, **more: Any) -> Settings:
    default = MockTarget(name="default")
    return Settings(data_dir=tmp_path / "data", targets=[default, *targets], **more)


async def test_the_classs_score_is_judged_by_the_threshold(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    cases: list[tuple[dict[str, Any], str, tuple[bool, float]]] = [
        ({"value": "nothate", "threshold": 0.5}, "Bananas are great", (True, 0.9)),  # example
        ({"value": "nothate", "threshold": 0.5}, "I hate bananas", (False, 0.1)),
        ({"value": "hate", "threshold": 0.25}, "HATE=0.25 exactly", (True, 0.25)),  # >= passes
        ({"value": "hate"}, "HATE=0.99", (False, 0.99)),  # default threshold 1
        ({}, "HATE=1", (True, 1.0)),  # no value: the highest score
        ({}, "Bananas", (False, 0.9)),
        ({"value": "offensive", "threshold": 0}, "Bananas", (True, 0.0)),  # no such class: 0
        ({"value": "hate", "threshold": 0.01}, "Bananas", (True, 0.1)),
    ]
    async with make_client(settings_with(tmp_path, classifier(fake_llm.url))) as client:
        for assertion, output, expected in cases:
            reply = await client.post("/evaluate", json={"suite": suite(output, **assertion)})
            assert reply.status_code == 200, reply.text
            passed, score, _ = outcome(reply.json())
            assert passed is expected[0], (assertion, output, reply.text)
            assert score == pytest.approx(expected[1]), (assertion, output, reply.text)
    sent = [request for request in fake_llm.requests if "/models/" in request.path]
    assert sent[0].path == "/hf-inference/models/facebook/roberta-hate-speech-dynabench-r4-target"
    assert sent[0].json == {"inputs": "Bananas are great", "parameters": {}}
    assert sent[0].headers["authorization"] == "Bearer hf_SECRET_token"
    assert len(sent) == len(cases)
    assert "hf_SECRET_token" not in reply.text


async def test_the_class_is_rendered_with_the_tests_variables(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    body = suite("Bananas", value="{{label}}", threshold=0.9)
    body["tests"][0]["vars"]["label"] = "nothate"
    async with make_client(settings_with(tmp_path, classifier(fake_llm.url))) as client:
        reply = await client.post("/evaluate", json={"suite": body})
    assert outcome(reply.json())[0] is True, reply.text


async def test_not_classifier_flips_the_pass_and_the_score(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    negated = {"type": "not-classifier", "value": "hate", "threshold": 0.5}
    async with make_client(settings_with(tmp_path, classifier(fake_llm.url))) as client:
        calm = suite("Bananas are great")
        calm["defaultTest"]["assert"] = [negated]
        hateful = suite("I hate bananas")
        hateful["defaultTest"]["assert"] = [negated]
        first = await client.post("/evaluate", json={"suite": calm})
        second = await client.post("/evaluate", json={"suite": hateful})
    for reply, passed, score in ((first, True, 0.9), (second, False, 0.1)):
        assert outcome(reply.json())[0] is passed
        assert outcome(reply.json())[1] == pytest.approx(score)


async def test_an_asserts_own_provider_and_the_first_classifier_target(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    targets = (classifier(fake_llm.url, "first"), classifier(fake_llm.url, "second"))
    async with make_client(settings_with(tmp_path, *targets)) as client:
        own = suite("Bananas", options=False, provider="second", value="nothate")
        first = suite("Bananas", options=False, value="nothate", threshold=0.5)
        assert (await client.post("/evaluate", json={"suite": own})).status_code == 200
        assert outcome((await client.post("/evaluate", json={"suite": first})).json())[0]
    assert [request.path.split("/")[1] for request in fake_llm.requests] == ["hf-inference"] * 2


async def test_a_failing_classifier_target_is_a_grader_error(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    settings = settings_with(tmp_path, classifier(fake_llm.url), retry_max_attempts=1)
    fake_llm.responder = lambda _: error(401, "Invalid credentials in Authorization header")
    async with make_client(settings) as client:
        reply = await client.post("/evaluate", json={"suite": suite("x", value="nothate")})
        negated = suite("x")
        negated["defaultTest"]["assert"] = [{"type": "not-classifier", "value": "nothate"}]
        flipped = await client.post("/evaluate", json={"suite": negated})
    for body in (reply.json(), flipped.json()):
        result = body["results"][0]["evaluator_results"][0]
        assert (result["status"], result["score"]) == ("judge_error", None)
        assert f"target {HF!r} did not classify the answer" in result["reasoning"]
        assert "Invalid credentials" in result["reasoning"]
    assert "hf_SECRET_token" not in reply.text


async def test_an_error_body_with_status_200_is_a_grader_error(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = lambda _: Reply(
        body={"error": "Model is currently loading (token hf_SECRET_token)"}
    )
    settings = settings_with(tmp_path, classifier(fake_llm.url), retry_max_attempts=1)
    async with make_client(settings) as client:
        reply = await client.post("/evaluate", json={"suite": suite("x", value="nothate")})
    result = reply.json()["results"][0]["evaluator_results"][0]
    assert result["status"] == "judge_error"
    assert "Model is currently loading" in result["reasoning"]
    assert "hf_SECRET_token" not in reply.text


async def test_classifier_without_a_classifier_target_is_refused_by_name(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(settings_with(tmp_path)) as client:
        checked = await client.post("/validate", json={"suite": suite("x", options=False)})
        run = await client.post("/evaluate", json={"suite": suite("x", options=False)})
        named = await client.post(
            "/evaluate", json={"suite": suite("x", options=False, provider="default")}
        )
    assert checked.json()["valid"] is False
    messages = " ".join(error["message"] for error in checked.json()["errors"])
    assert "(classifier) needs a classifier target and none is configured" in messages
    assert "provider: huggingface" in messages
    assert run.status_code == 422
    assert "needs a classifier target" in run.json()["detail"]
    assert named.status_code == 422
    assert "target 'default' is not a classifier target" in named.json()["detail"]


async def test_a_value_that_is_not_a_class_name_is_refused(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    async with make_client(settings_with(tmp_path, classifier(fake_llm.url))) as client:
        checked = await client.post("/validate", json={"suite": suite("x", value=["nothate"])})
    assert checked.json()["valid"] is False
    assert "must be the name of a class, not" in checked.text


async def test_a_classifier_target_answers_no_case(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    body = {"suite": suite("x"), "target": HF}
    async with make_client(settings_with(tmp_path, classifier(fake_llm.url))) as client:
        reply = await client.post("/evaluate", json=body)
        listed = (await client.get("/targets")).json()["targets"]
    assert [(t["name"], t["provider"], t["kind"]) for t in listed][-1] == (
        HF,
        "huggingface",
        "classifier",
    )
    assert "hf_SECRET_token" not in str(listed)
    assert reply.status_code == 422
    assert f"{HF!r} is a classifier target" in reply.json()["detail"]


def test_a_huggingface_text_classification_id_is_a_classifier_target(tmp_path: Path) -> None:
    listing = tmp_path / "providers.yaml"
    listing.write_text(f"- id: {HF}\n  config: {{baseUrl: 'http://127.0.0.1:9/hf'}}\n")
    (target,) = load_targets_file(listing, {})
    assert isinstance(target, HuggingFaceTarget)
    assert (target.task, target.model, target.base_url) == (
        "text-classification",
        "facebook/roberta-hate-speech-dynabench-r4-target",
        "http://127.0.0.1:9/hf",
    )


def test_another_huggingface_task_is_refused_by_name(tmp_path: Path) -> None:
    listing = tmp_path / "providers.yaml"
    listing.write_text("- id: huggingface:text-generation:gpt2\n")
    with pytest.raises(Exception, match="text-classification"):
        load_targets_file(listing, {})


@pytest.mark.parametrize(
    ("payload", "scores"),
    [
        ([[{"label": "a", "score": 0.75}, {"label": "b", "score": 0.25}]], {"a": 0.75, "b": 0.25}),
        ([{"label": "a", "score": 1}], {"a": 1.0}),
        ([{"label": "a", "score": 0.1}, {"label": "a", "score": 0.2}], {"a": 0.2}),
    ],
)
def test_classification_replies_are_read_flat_or_in_one_row(
    payload: Any, scores: dict[str, float]
) -> None:
    assert classification_scores(payload) == scores


@pytest.mark.parametrize(
    "payload",
    [[], [[]], {"label": "a", "score": 1}, [{"label": "a"}], [{"label": 1, "score": 0.5}],
     [{"label": "a", "score": float("nan")}], [[{"label": "a", "score": 1}], []]],
)  # fmt: skip
def test_a_reply_that_is_not_a_list_of_label_scores_is_refused(payload: Any) -> None:
    with pytest.raises(ValueError, match=r"validation error|finite"):
        classification_scores(payload)


async def test_promptfoos_hate_speech_example_runs_as_written(
    tmp_path: Path, make_client: ClientFactory, fake_llm: FakeLLM
) -> None:
    """The example file, read in place: each output (the fake echoes the prompt) classified."""
    folder = EXAMPLES / "huggingface-hate-speech-detection"
    if not folder.is_dir():
        pytest.skip("promptfoo's examples are not beside the checkout")
    gpt = OpenAITarget(
        name="openai:gpt-5", provider="openai", model="gpt-5", base_url=f"{fake_llm.url}/v1",
        api_key=SecretStr("sk-fake"),
    )  # fmt: skip
    settings = Settings(
        data_dir=tmp_path / "data",
        workspace_roots=[EXAMPLES],
        targets=[gpt, classifier(fake_llm.url)],
    )
    path = "huggingface-hate-speech-detection/promptfooconfig.yaml"
    async with make_client(settings) as client:
        checked = await client.post("/validate", json={"suite": path})
        reply = await client.post("/evaluate", json={"suite": path})
    assert checked.json()["valid"] is True, checked.text
    assert checked.json()["warnings"] == [], checked.text
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    assert len(results) == 6  # 3 tests x 2 prompts
    by_prompt = {
        (record["candidate_answer"], record["evaluator_results"][0]["passed"]) for record in results
    }
    # "Say something mean": nothate 0.9 passes; the prompt naming a "hate speech classifier": 0.1
    assert {passed for answer, passed in by_prompt if answer.startswith("Say")} == {True}
    assert {passed for answer, passed in by_prompt if "hate speech" in answer} == {False}
