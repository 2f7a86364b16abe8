"""Reachability of targets (``GET /targets?check=true``): one small real call each, no retries.

Never on the liveness or readiness path: a check spends a few tokens of each API target and
waits for its answer, which a probe run every few seconds must not do. Agent (``cli``)
targets are not called: a check would run the agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from app.formatting.messages import ChatMessage
from app.providers.base import CallRole, ModelOptions, ProviderRequest
from app.providers.errors import ProviderError
from app.providers.runtime import TargetRuntime

CHECK_TIMEOUT_SECONDS = 15.0
PROBE_TEXT = "Reply with the word OK."
PROBE = ProviderRequest(
    question=PROBE_TEXT,
    chat_prompt=(ChatMessage(role="user", content=PROBE_TEXT),),
    options=ModelOptions(max_output_tokens=16),
    role=CallRole.CANDIDATE,
    case_id="reachability-check",
)


class TargetCheck(BaseModel):
    """Whether a target answered one small request, and how fast."""

    status: Literal["ok", "failed", "not_checked"] = Field(examples=["ok"])
    detail: str | None = Field(
        None, description="Why the check failed or was not made.", examples=[None]
    )
    latency_ms: float | None = Field(None, examples=[412.5])


async def check_target(runtime: TargetRuntime) -> TargetCheck:
    """Send the target one short request straight to its adapter (no retries, no limiter)."""
    timeout = CHECK_TIMEOUT_SECONDS
    if runtime.kind == "agent":
        return TargetCheck(status="not_checked", detail="agent targets are not run by a check")
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout):
            await runtime.adapter.complete(PROBE)
    except TimeoutError:
        return TargetCheck(status="failed", detail=f"no answer within {timeout:g} s")
    except ProviderError as exc:
        return TargetCheck(status="failed", detail=runtime.scrub(exc.detail))
    latency = round((time.perf_counter() - started) * 1000, 1)
    return TargetCheck(status="ok", latency_ms=latency)


async def check_targets(runtimes: Iterable[TargetRuntime]) -> dict[str, TargetCheck]:
    """Every target checked at once, by name."""
    listed = list(runtimes)
    results = await asyncio.gather(*(check_target(runtime) for runtime in listed))
    return {runtime.name: result for runtime, result in zip(listed, results, strict=True)}
