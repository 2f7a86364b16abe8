"""The sample run a fresh server creates, so that every ``/docs`` example has a run to act on.

The ``/runs/{run_id}`` examples name ``run_sample``: the quick suite on the mock target
``default``, created at start-up when missing (again after someone deletes it), never on a
target that would call a real provider; ``run_sample_arms``, the same suite on the three mock
targets of a fresh server (``default``, ``terse``, ``slow``: three arms), is what the
``/runs/{run_id}/compare`` examples name. With API keys on it belongs to no key, so callers
see only their own runs, as always: they create one with ``POST /runs`` first. The ``/v1``
examples name the sample eval, run and file of ``app.schemas.openai_examples``, made the same
way.
"""

from __future__ import annotations

import logging

from app.errors import ServiceError
from app.providers.registry import ProviderRegistry
from app.schemas.runs import (
    SAMPLE_ARMS_RUN_ID,
    SAMPLE_RUN_ID,
    sample_arms_request,
    sample_run_request,
)
from app.schemas.suite_examples import COMPARISON_TARGETS
from app.services.openai_evals import OpenAIEvalService
from app.services.runs import RunService
from app.settings import Settings
from app.settings.targets import DEFAULT_TARGET

logger = logging.getLogger("app.services")


async def ensure_sample_run(
    settings: Settings,
    providers: ProviderRegistry,
    runs: RunService,
    openai_evals: OpenAIEvalService,
) -> None:
    """Create the sample runs unless they exist, they are off, or ``default`` is no mock.

    The sample run of ``/runs``, and the sample eval, run and file of ``/v1``.
    """
    if not settings.sample_run:
        return
    if providers.get(DEFAULT_TARGET).config.provider != "mock":
        logger.info("no sample run: the target %r is not a mock target", DEFAULT_TARGET)
        return
    await runs.ensure_sample(SAMPLE_RUN_ID, sample_run_request())
    if all(
        name in providers.names() and providers.get(name).config.provider == "mock"
        for name in COMPARISON_TARGETS
    ):  # a fresh server: the compare examples have a run with three arms
        try:
            await runs.ensure_sample(SAMPLE_ARMS_RUN_ID, sample_arms_request())
        except ServiceError as exc:  # a limit below its 6 evaluations: no run, no failure
            logger.info("no sample run with arms: %s", exc.detail)
    await openai_evals.ensure_sample()
