"""Image content parts reach each API target natively, over real HTTP on the fake LLM.

A user turn's ``image_url`` parts are sent as Chat Completions / Azure ``image_url`` parts,
Responses ``input_image``, Anthropic ``image`` blocks and Gemini ``inlineData``/``fileData``,
as written (the fake refuses any body its API would: ``shape_errors`` stays empty). The
service never fetches an image: a URL goes to the provider only with ``EVAL_IMAGE_URLS``;
an agent target, given the question as text, errs the case naming the image.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from testkit.fake_llm import FakeLLM
from tests.api.test_tool_loops import TARGETS, settings_for
from tests.conftest import ClientFactory

PNG_DATA = "iVBORw0KGgo="
PNG = f"data:image/png;base64,{PNG_DATA}"
URL = "https://images.example/cat.jpg"


def vision_suite(*urls: str, detail: str | None = None) -> dict[str, Any]:
    images = [
        {"type": "image_url", "image_url": {"url": url} | ({"detail": detail} if detail else {})}
        for url in urls
    ]
    return {
        "name": "vision",
        "tests": [{
            "id": "look",
            "input": [{"role": "user", "content": [
                {"type": "text", "text": "What is in the picture?"}, *images]}],
            "assertions": [{"name": "answer", "type": "contains", "value": "picture"}],
        }],
    }  # fmt: skip


def native_images(wire: str, body: dict[str, Any]) -> list[Any]:
    """The images of a body's last user turn, in the wire's own form."""
    if wire == "gemini":
        parts = body["contents"][-1]["parts"]
        return [p for p in parts if "text" not in p]
    turns = body["input"] if wire == "responses" else body["messages"]
    content = [t for t in turns if t.get("role") == "user"][-1]["content"]
    kinds = {"openai": "image_url", "azure": "image_url", "responses": "input_image"}
    return [part for part in content if part["type"] == kinds.get(wire, "image")]


EXPECTED: dict[str, list[Any]] = {
    "openai": [
        {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
        {"type": "image_url", "image_url": {"url": URL, "detail": "low"}},
    ],
    "responses": [
        {"type": "input_image", "image_url": PNG, "detail": "low"},
        {"type": "input_image", "image_url": URL, "detail": "low"},
    ],
    "anthropic": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": PNG_DATA}},
        {"type": "image", "source": {"type": "url", "url": URL}},
    ],
    "gemini": [
        {"inlineData": {"mimeType": "image/png", "data": PNG_DATA}},
        {"fileData": {"fileUri": URL, "mimeType": "image/jpeg"}},
    ],
}  # fmt: skip
EXPECTED["azure"] = EXPECTED["openai"]


@pytest.mark.parametrize("target", list(TARGETS))
async def test_images_reach_every_api_target_in_its_own_form(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory, target: str
) -> None:
    settings = settings_for(tmp_path, fake_llm).model_copy(update={"image_urls": True})
    async with make_client(settings) as client:
        response = await client.post(
            "/evaluate", json={"suite": vision_suite(PNG, URL, detail="low"), "target": target}
        )
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    (record,) = response.json()["results"]
    assert record["status"] == "passed", record
    (sent,) = fake_llm.requests
    assert native_images(sent.wire, sent.json) == EXPECTED[sent.wire]
    question = record["raw_request"]["question"]
    assert question == (
        f"What is in the picture?\n\n<image: data:image/png, 8 bytes>\n\n<image: {URL}>"
    )
    assert PNG_DATA not in question


async def test_without_a_detail_the_responses_api_gets_its_default(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        response = await client.post(
            "/evaluate", json={"suite": vision_suite(PNG), "target": "responses"}
        )
    assert response.status_code == 200, response.text
    assert fake_llm.shape_errors == []
    assert native_images("responses", fake_llm.requests[0].json) == [
        {"type": "input_image", "image_url": PNG, "detail": "auto"}
    ]


async def test_an_image_by_url_is_refused_unless_the_operator_allows_it(
    tmp_path: Path, fake_llm: FakeLLM, make_client: ClientFactory
) -> None:
    async with make_client(settings_for(tmp_path, fake_llm)) as client:
        suite = vision_suite(URL)
        response = await client.post("/evaluate", json={"suite": suite, "target": "gpt"})
        validated = await client.post("/validate", json={"suite": vision_suite(URL)})
    assert response.status_code == 422
    assert "EVAL_IMAGE_URLS=true" in response.text
    assert URL in response.text
    assert validated.json()["valid"] is False
    assert fake_llm.requests == []


async def test_an_agent_target_given_an_image_is_a_case_error_naming_it(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    agent = {"name": "agent", "provider": "cli", "command": "echo picture"}
    settings = Settings.model_validate({"data_dir": tmp_path / "data", "targets": [agent]})
    async with make_client(settings) as client:
        response = await client.post(
            "/evaluate", json={"suite": vision_suite(PNG), "target": "agent"}
        )
    (record,) = response.json()["results"]
    assert record["status"] == "error"
    assert "is an agent" in record["error"]
    assert "image_url" in record["error"]
