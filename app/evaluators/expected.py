"""Expected reply messages of a case: content, tool calls, or both."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from app.formatting.messages import Content, Role


class ExpectedMessage(BaseModel):
    """One expected message: ``{role, content?, tool_calls?}``.

    ``content`` is already checked (the same shapes as an input message's); a message may
    carry only ``tool_calls`` (each kept as written: ``{tool, input?, output?, ...}``).
    """

    model_config = ConfigDict(frozen=True)
    role: Role
    content: Content | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
