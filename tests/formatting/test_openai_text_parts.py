"""Content parts in OpenAI's form: ``{type: text, text}`` is a text part (promptfoo's chat
prompt files write them so); image parts are read (test_image_parts.py); other OpenAI part
types stay refused by their type."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.formatting.messages import Message, TextPart


def test_an_openai_text_part_is_a_text_part() -> None:
    message = Message.model_validate({"role": "user", "content": [{"type": "text", "text": "Hi"}]})
    assert message.content == [TextPart(value="Hi")]


def test_an_input_audio_part_is_refused_by_its_type() -> None:
    with pytest.raises(ValidationError, match="unsupported content part type 'input_audio'"):
        Message.model_validate(
            {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "x"}}]}
        )
