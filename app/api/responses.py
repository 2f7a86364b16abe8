"""Large JSON replies serialised off the event loop."""

from __future__ import annotations

from typing import TypeVar

import anyio
from fastapi import Response
from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)

LOOP_REPLY_CHARS = 64 * 1024
"""Replies whose main text is longer than this are serialised in a worker thread."""


async def json_reply(model: ModelT, size_hint: int) -> ModelT | Response:
    """``model`` for FastAPI to serialise, or, when large, its JSON made in a worker thread.

    FastAPI validates and serialises an ``async`` route's return value on the event loop;
    for a reply of megabytes that is a second no other request gets.

    Args:
        model: The reply (serialised by alias, ``None`` fields left out).
        size_hint: The length of its largest text, to choose where to serialise it.
    """
    if size_hint <= LOOP_REPLY_CHARS:
        return model
    body = await anyio.to_thread.run_sync(
        lambda: model.model_dump_json(by_alias=True, exclude_none=True)
    )
    return Response(content=body, media_type="application/json")
