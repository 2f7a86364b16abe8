"""Cases that read earlier cases (promptfoo's ``storeOutputAs`` and ``_conversation``).

A suite whose cases carry a ``SequenceStep`` runs as promptfoo 0.123.1 runs it (measured:
``app.suites.prompts_vars.sequential``): one cell at a time, test by test and, within a test,
arm by arm in the arms' order (provider, then prompt: promptfoo's order), whatever the
concurrency asked for. ``Sequence`` is what the earlier cells left: the stored outputs (one
value per name for the whole run: the last cell that stored it wins) and each conversation's
turns, keyed by (arm, prompt, ``conversationId``). Before a case runs, its input is rendered
again from its step with them (``ready``); once it has its record, ``note`` adds what it
leaves. ``/evaluate`` keeps one ``Sequence`` as it runs the cases in order
(``PreparedRun.run``); a durable run replays the stored records of the cases before it
(``replayed``), so a case run by another worker, or after a restart, sees the same.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.evaluation.plan import RunPlan, format_options
from app.evaluation.records import ResultRecord
from app.evaluators.code.javascript import call_source
from app.evaluators.code.js_engine import JsError, run_in_thread, run_script
from app.formatting import format_prompt
from app.suites.model import FormattedCase
from app.suites.prompts_vars.sequential import (
    Turn,
    conversation_turn,
    render_step,
    step_prompt,
)

logger = logging.getLogger("app.evaluation")
ConversationKey = tuple[int | None, str, str | None]


@dataclass
class Sequence:
    """What the cells run so far leave to the next: stored outputs and conversations."""

    stored: dict[str, Any] = field(default_factory=dict)
    turns: dict[ConversationKey, list[Turn]] = field(default_factory=dict)

    def ready(
        self, formatted: FormattedCase, plan: RunPlan, files: Mapping[str, str]
    ) -> FormattedCase:
        """The case with its input rendered from what the earlier cells left.

        A case that reads no earlier one, or could not be read, is returned as it is; one
        whose input cannot be made now runs as that error (promptfoo's test error).
        """
        case = formatted.case
        step = case.sequence
        if step is None or case.error is not None or case.missing_files:
            return formatted
        prompt = step_prompt(step, _prompt_of(plan))
        key = (_arm_of(plan), prompt.id, step.conversation)
        made = render_step(step, prompt, self.stored, self.turns.get(key, []))
        if isinstance(made, str):
            return formatted.model_copy(update={"case": case.model_copy(update={"error": made})})
        return FormattedCase(
            case=case.model_copy(update={"input_messages": made}),
            prompt=format_prompt(made, files, format_options(plan)),
        )

    async def note(self, ready: FormattedCase, plan: RunPlan, record: ResultRecord) -> None:
        """What the cell leaves: its conversation turn and its stored output."""
        case = ready.case
        step = case.sequence
        if step is None or case.error is not None or case.missing_files:
            return  # its input was never made: the target was not called
        prompt = step_prompt(step, _prompt_of(plan))
        key = (_arm_of(plan), prompt.id, step.conversation)
        answer = record.candidate_answer
        turn = conversation_turn(prompt, case.input_messages, answer or "")
        self.turns.setdefault(key, []).append(turn)
        if step.store_as is None or not answer:
            return
        value: Any = answer
        if step.transform is not None:
            value = await _transformed(step.transform, answer, step.variables)
        if value is not None and value != "":
            self.stored[step.store_as] = value


def _arm_of(plan: RunPlan) -> int | None:
    return plan.arm.index if plan.arm is not None else None


def _prompt_of(plan: RunPlan) -> str | None:
    return plan.arm.prompt if plan.arm is not None else None


async def _transformed(transform: str, answer: str, variables: Mapping[str, Any]) -> Any:
    """The stored value: the output as the test's inline transform makes it (None: it threw)."""
    source = call_source(
        transform.rstrip(), {"output": answer, "context": {"vars": dict(variables)}}
    )
    try:
        result = await run_in_thread(run_script, source)
    except JsError as exc:
        logger.info("a stored output's transform failed: %s", exc)
        return None
    if not isinstance(result, dict) or "value" not in result:
        return None  # it threw: promptfoo's cell errs and stores nothing
    return result["value"]


async def replayed(
    earlier: Iterable[tuple[FormattedCase, RunPlan, ResultRecord]], files: Mapping[str, str]
) -> Sequence:
    """The sequence as the earlier cells left it, from their cases and records in run order."""
    sequence = Sequence()
    for formatted, plan, record in earlier:
        ready = sequence.ready(formatted, plan, files)
        await sequence.note(ready, plan, record)
    return sequence
