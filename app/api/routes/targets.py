"""``GET /targets``: the configured targets, without secrets, with live limiter state."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from app.api.dependencies import ServicesDep
from app.providers.access.reachability import TargetCheck, check_targets
from app.providers.registry import TargetDescription

router = APIRouter(tags=["targets"])

TARGETS_EXAMPLE = {
    "targets": [
        {
            "name": "default",
            "provider": "mock",
            "kind": "api",
            "model": None,
            "base_url": None,
            "judge_target": None,
            "max_concurrency": 8,
            "limits": {
                "candidate": {
                    "limit": 8,
                    "max_limit": 8,
                    "in_flight": 0,
                    "waiting": 0,
                    "recent_429s": 0,
                },
                "judge": {
                    "limit": 8,
                    "max_limit": 8,
                    "in_flight": 0,
                    "waiting": 0,
                    "recent_429s": 0,
                },
            },
        }
    ],
    "warnings": [
        "target 'claude' skipped: provider 'claude-cli' is an agent this service does not run"
    ],
}


class TargetList(BaseModel):
    """Every configured target, and why any target of the targets file is not served."""

    targets: list[TargetDescription] = Field(examples=[TARGETS_EXAMPLE["targets"]])
    warnings: list[str] = Field(
        default_factory=list,
        description="Targets of the targets file that were skipped at start-up, and why.",
    )
    checks: dict[str, TargetCheck] | None = Field(
        None,
        description=(
            "With `check=true`: per target, whether it answered one small request (no retries, "
            "at most 15 s; agent targets are not run)."
        ),
        examples=[{"default": {"status": "ok", "detail": None, "latency_ms": 0.4}}],
    )


@router.get(
    "/targets",
    operation_id="list_targets",
    summary="List the configured targets and their live concurrency limits",
    responses={200: {"content": {"application/json": {"example": TARGETS_EXAMPLE}}}},
)
async def list_targets(
    services: ServicesDep,
    check: Annotated[
        bool, Query(description="Also send each target one small request and say how it went.")
    ] = False,
) -> TargetList:
    """Targets from the server's targets file, never with keys.

    Each shows, per role (candidate, judge), its current limit, calls in flight and waiting,
    and the 429s seen in the last minute. ``warnings`` names every target of the file that was
    skipped (a provider this service does not run) and why. ``check=true`` spends a few
    tokens of each API target to say whether it answers.
    """
    providers = services.providers
    checks = await check_targets(providers.runtimes()) if check else None
    return TargetList(
        targets=providers.describe(), warnings=list(providers.warnings), checks=checks
    )
