"""The provider preview: what each adapter would send for a formatted case.

``POST /format`` with ``providers: [name...]`` shows, per target, the exact JSON body (no
secrets, no URL credentials) and every rewrite the adapter applied to the chatPrompt, such as
"tool turn 3 sent as user with @[Tool]: marker" or "turns 2 and 3 merged: consecutive user".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ProviderPreview(BaseModel):
    """The exact JSON body an adapter would send, and every rewrite applied to get it."""

    model_config = ConfigDict(frozen=True)
    body: dict[str, Any] = Field(
        examples=[{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}]
    )
    rewrites: list[str] = Field(examples=[["tool turn 3 sent as user with @[Tool]: marker"]])
    note: str | None = Field(
        None,
        description="Set when the name is no target's but a provider's: the preview is of a "
        "stand-in target of that provider, with a placeholder model.",
    )
