"""Content parts in OpenAI's form: ``{type: text, text}`` is a text part (promptfoo's chat
prompt files write them so); other OpenAI part types stay refused by their type."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.formatting.messages import Message, TextPart


def test_an_openai_text_part_is_a_text_part() -> None:
    message = Message.model_validate({"role": "user", "content": [{"type": "text", "text": "Hi"}]})
    assert message.content == [TextPart(value="Hi")]


def test_an_image_url_part_is_refused_by_its_type() -> None:
    with pytest.raises(ValidationError, match="unsupported content part type 'image_url'"):
        Message.model_validate(
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
        )
