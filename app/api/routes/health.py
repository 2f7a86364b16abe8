"""Liveness."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel

router = APIRouter(tags=["health"])


class Health(BaseModel):
    """Liveness answer."""

    status: str = "ok"


@router.get("/healthz", operation_id="healthz", summary="The process is alive")
async def healthz() -> Health:
    """Answer 200 while the process serves requests."""
    return Health()
