"""Image content parts (OpenAI's ``{type: image_url, image_url: {url, detail?}}``).

An image is carried as written to the chatPrompt's ``parts`` of its user turn; in text
(``question``, the turn's ``content``) it shows as ``<image: URL>``, a ``data:`` URI by its
media type and size. Turns without images format exactly as before (the seeds' rules).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.formatting import ImagePart, Message
from app.formatting.messages import ChatText
from tests.formatting.builders import file, fmt, msg

PNG = "data:image/png;base64,iVBORw0KGgo="
URL = "https://example.com/cat.png"


def image(url: str, detail: str | None = None) -> dict[str, Any]:
    inner = {"url": url} | ({"detail": detail} if detail else {})
    return {"type": "image_url", "image_url": inner}


def test_a_remote_image_shows_its_url_in_the_question_and_is_kept_in_the_turn() -> None:
    out = fmt([msg("user", [{"type": "text", "text": "What is it?"}, image(URL, "low")])])
    assert out.question == f"What is it?\n\n<image: {URL}>"
    (turn,) = [m for m in out.chat_prompt if m.role == "user"]
    assert turn.content == f"What is it?\n<image: {URL}>"
    expected = ImagePart.model_validate(image(URL, "low"))
    assert turn.parts == (ChatText(text="What is it?"), expected)
    assert turn.images[0].image_url.detail == "low"


def test_a_data_uri_shows_its_media_type_and_size_never_its_bytes() -> None:
    out = fmt([msg("user", [image(PNG)])])
    assert out.question == "<image: data:image/png, 8 bytes>"
    assert "iVBOR" not in out.question
    assert out.chat_prompt[-1].images[0].url == PNG


def test_an_image_only_turn_is_visible_and_marked_among_others() -> None:
    out = fmt([msg("user", "Look."), msg("assistant", "At what?"), msg("user", [image(URL)])])
    assert out.question.endswith(f"@[User]:\n<image: {URL}>")
    assert out.chat_prompt[-1].parts == (ImagePart.model_validate(image(URL)),)


def test_parts_keep_files_and_guideline_markers_in_order_with_images() -> None:
    content = [image(URL), file("a.txt"), file("x.instructions.md"), "after"]
    out = fmt([msg("user", content)], {"a.txt": "A", "x.instructions.md": "rule"})
    turn = out.chat_prompt[-1]
    texts = [p.text if isinstance(p, ChatText) else "IMAGE" for p in turn.parts]
    assert texts == ["IMAGE", '<file path="a.txt">\nA\n</file>', "<Attached: x.instructions.md>",
                     "after"]  # fmt: skip
    assert turn.content == "\n".join(t if t != "IMAGE" else f"<image: {URL}>" for t in texts)
    assert out.file_paths == ("a.txt", "x.instructions.md")


def test_a_turn_without_images_has_no_parts_and_dumps_as_before() -> None:
    out = fmt([msg("user", "Hi")])
    assert out.chat_prompt[-1].parts == ()
    assert out.chat_prompt[-1].model_dump() == {"role": "user", "content": "Hi"}


def test_an_image_part_survives_a_round_trip_through_json() -> None:
    message = msg("user", [image(PNG, "high")])
    assert Message.model_validate_json(message.model_dump_json()) == message
    turn = fmt([message]).chat_prompt[-1]
    assert type(turn).model_validate_json(turn.model_dump_json()) == turn


@pytest.mark.parametrize(
    ("part", "fragment"),
    [
        (image("ftp://example.com/a.png"), "http(s) URL or a data:image URI"),
        (image("file:///etc/passwd"), "http(s) URL or a data:image URI"),
        (image("data:text/plain;base64,aGk="), "data:image/<type>;base64"),
        (image("data:image/png,rawbytes"), "data:image/<type>;base64"),
        (image(URL, "huge"), "image_url.detail is one of"),
        ({"type": "image_url", "image_url": URL}, "needs 'image_url: {url, detail?}'"),
        ({"type": "image_url", "image_url": {"url": URL, "size": 1}}, "not 'size'"),
        ({"type": "image_url", "image_url": {"url": URL}, "extra": 1}, "not 'extra'"),
    ],
)
def test_a_malformed_image_part_is_refused_naming_the_fault(
    part: dict[str, Any], fragment: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        msg("user", [part])
    assert fragment in str(caught.value)


@pytest.mark.parametrize("role", ["system", "assistant", "tool"])
def test_an_image_outside_a_user_turn_is_refused(role: str) -> None:
    with pytest.raises(ValidationError, match=f"not a {role} turn"):
        msg(role, [image(URL)])


@given(st.binary(max_size=64))
def test_a_data_uri_marker_gives_the_decoded_size(data: bytes) -> None:
    uri = "data:image/webp;base64," + base64.b64encode(data).decode()
    assert fmt([msg("user", [image(uri)])]).question == (
        f"<image: data:image/webp, {len(data)} bytes>"
    )
