"""``code_judge``: a program reads the case and the answer as JSON on stdin and prints a result.

It runs through ``programs.ProgramRunner`` (in the sandbox: no shell, time limit, scratch
folder, capped output, the case's workspace writable), only when the operator enables code
graders and only for graders read from a suite under a workspace root (their ``cwd`` is then
that folder). The payload follows AgentV's
code-grader wire format (snake_case):

``question``, ``criteria`` (the expected outcome), ``expected_output`` (expected messages,
else the reference answer as one assistant message), ``output`` and ``answer`` (the
candidate's answer), ``messages`` (the answer as an assistant message with its tool calls),
``input`` (the input messages), ``input_files``, ``trace`` / ``trace_summary`` (tool calls),
``token_usage``, ``cost_usd``, ``duration_ms``, ``config`` (the grader's own keys),
``workspace_path`` and ``file_changes`` (the case's workspace and what the candidate changed
in it, a unified diff; null without a workspace), and ``output_path``, ``metadata`` as null.

With ``target: {max_calls}`` the program may call targets while it runs
(``target_proxy``); the record's ``details.target_proxy`` counts its calls.

The program prints one JSON object: ``score`` (0..1), or ``pass`` (true/false), or
``assertions: [{text, passed}]`` (score: the share passed); optional ``hits``, ``misses``,
``reasoning``, ``details``. As in AgentV, a program that exits 0 printing something that is
not a JSON object scores 1 (what it printed is the reasoning), and one that exits non-zero
scores 0 (the tail of its stderr is the miss); a JSON object without a usable score, or a
program that could not run, is an ``error`` result saying why.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.code.programs import ProgramError, ProgramExitError, ProgramRunner
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult
from app.evaluators.verdicts import verdict_for
from app.sandbox import PROXY_URL

DISABLED = (
    "code graders are not enabled on this service: the operator turns them on with "
    "EVAL_CODE_GRADERS=true"
)
NOT_FROM_ROOT = "a code grader runs only in a suite read from a workspace root"


def _dump(value: Any) -> Any:
    return (
        value.model_dump(mode="json", exclude_none=True) if hasattr(value, "model_dump") else value
    )


def payload(config: EvaluatorConfig, context: EvaluationContext) -> dict[str, Any]:
    """The JSON a code grader reads on stdin (AgentV's wire names)."""
    extra = dict(config.model_extra or {})
    own = extra.pop("config", None)
    return case_payload(context, own if own is not None else (extra or None))


def case_payload(context: EvaluationContext, own_config: Any) -> dict[str, Any]:
    """The case and answer as a program reads them on stdin; ``config`` is ``own_config``."""
    case, run = context.case, context.candidate
    expected = [_dump(message) for message in case.expected_messages]
    if not expected and context.reference_answer:
        expected = [{"role": "assistant", "content": context.reference_answer}]
    calls = [_dump(call) for call in run.tool_calls]
    return {
        "question": context.question,
        "criteria": context.expected_outcome,
        "expected_output": expected,
        "output": context.candidate_answer,
        "answer": context.candidate_answer,
        "messages": [
            {"role": "assistant", "content": context.candidate_answer, "tool_calls": calls}
        ],
        "input": [_dump(message) for message in case.input_messages],
        "input_files": [],
        "trace": {"tool_calls": calls},
        "trace_summary": {
            "event_count": len(calls),
            "tool_names": sorted({call.tool for call in run.tool_calls}),
            "tool_calls_by_name": dict(Counter(call.tool for call in run.tool_calls)),
        },
        "token_usage": {"input": run.input_tokens, "output": run.output_tokens},
        "cost_usd": run.cost_usd,
        "duration_ms": run.duration_ms if run.duration_ms is not None else run.latency_ms,
        "config": own_config,
        "output_path": None,
        "file_changes": context.file_changes,
        "workspace_path": context.workspace_path,
        "metadata": None,
    }


def _strings(value: Any) -> list[str]:
    return (
        [item for item in value if isinstance(item, str) and item.strip()]
        if isinstance(value, list)
        else []
    )


def _json_object(text: str) -> dict[str, Any] | None:
    """The printed JSON object: the whole output, else its last line (after log lines)."""
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            document = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(document, dict):
            return document
    return None


def read_result(stdout: str) -> dict[str, Any]:
    """The program's JSON object: its score, hits, misses, reasoning and details.

    Raises:
        ProgramError: The program printed no JSON object with a usable score.
    """
    text = stdout.strip()
    document = _json_object(text)
    if document is None:  # AgentV's contract: a clean exit without a result passes
        shown = text[:200] or "(nothing)"
        return {
            "score": 1.0,
            "hits": ["the grader program exited 0"],
            "misses": [],
            "reasoning": f"the grader program exited 0 and printed no JSON object: {shown}",
            "details": None,
        }
    assertions = [a for a in document.get("assertions") or [] if isinstance(a, dict)]
    hits = _strings(document.get("hits")) + [
        str(a.get("text")) for a in assertions if a.get("passed")
    ]
    misses = _strings(document.get("misses")) + [
        str(a.get("text")) for a in assertions if not a.get("passed")
    ]
    score = document.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        if isinstance(document.get("pass"), bool):
            score = 1.0 if document["pass"] else 0.0
        elif assertions:
            score = sum(bool(a.get("passed")) for a in assertions) / len(assertions)
        else:
            raise ProgramError(f"the grader program's result has no score: {text[:200]}")
    reasoning = document.get("reasoning")
    details = document.get("details")
    return {
        "score": min(max(float(score), 0.0), 1.0),
        "hits": hits,
        "misses": misses,
        "reasoning": reasoning if isinstance(reasoning, str) else None,
        "details": details if isinstance(details, dict) else None,
    }


def placed_program(
    config: EvaluatorConfig, context: EvaluationContext
) -> tuple[ProgramRunner, Path]:
    """The runner and folder of a grader's program; ``ProgramError`` when it may not run."""
    if context.programs is None:
        raise ProgramError(DISABLED)
    if config.cwd is None:
        raise ProgramError(NOT_FROM_ROOT)
    return context.programs, Path(config.cwd)


def _workspace(context: EvaluationContext) -> Path | None:
    """The case's workspace folder, which the program may read and change."""
    return Path(context.workspace_path) if context.workspace_path else None


async def program_prompt(config: EvaluatorConfig, context: EvaluationContext) -> str:
    """The judge prompt a grader's ``prompt_program`` prints for this case and answer."""
    assert config.prompt_program is not None
    programs, folder = placed_program(config, context)
    stdin = json.dumps(case_payload(context, config.prompt_program.config), ensure_ascii=False)
    ran = await programs.run(
        config.prompt_program.command,
        stdin.encode(),
        folder=folder,
        workspace=_workspace(context),
    )
    prompt = ran.stdout.strip()
    if not prompt:
        raise ProgramError("the judge prompt program printed no prompt")
    return prompt


class CodeJudgeEvaluator:
    """Runs the grader's program on the case and answer, and reads its score."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """Grade with the program; a refusal or a broken result is an ``error`` result.

        A program that exits non-zero scores 0 (AgentV's contract), its stderr the miss.
        """
        try:
            return await self._graded(config, context)
        except ProgramExitError as exited:
            reason = f"the grader program exited with code {exited.code}: {exited.tail}"
            result = EvaluatorResult(
                name=config.name,
                type=config.type,
                score=0.0,
                verdict=verdict_for(0.0, context.thresholds),
                misses=[reason],
                reasoning=reason,
                weight=config.weight,
                details={"command": list(config.command), "exit_code": exited.code},
            )
            return EvaluatorOutcome(result)

    async def _graded(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        programs, folder = placed_program(config, context)
        stdin = json.dumps(payload(config, context), ensure_ascii=False).encode()
        run = partial(programs.run, folder=folder, workspace=_workspace(context))
        proxy = None
        if config.target_access is None:
            ran = await run(config.command, stdin)
        elif context.program_targets is None:
            raise ProgramError("a code grader's program cannot call targets here ('target')")
        else:
            proxy = context.program_targets(
                context.judge_for(config),
                max_calls=config.target_access.max_calls,
                case_id=context.case.id,
                resolve=context.resolve_judge,
                target_names=context.target_names,
            )
            async with proxy.serving(PROXY_URL) as (env, socket):
                ran = await run(config.command, stdin, env=env, proxy_socket=socket)
        found = read_result(ran.stdout)
        score = found["score"]
        return EvaluatorOutcome(
            EvaluatorResult(
                name=config.name,
                type=config.type,
                score=score,
                verdict=verdict_for(score, context.thresholds),
                hits=found["hits"],
                misses=found["misses"],
                reasoning=found["reasoning"] or "; ".join(found["hits"] + found["misses"]) or None,
                weight=config.weight,
                details={
                    "command": list(config.command),
                    "elapsed_ms": round(ran.elapsed_ms, 3),
                    **({"target_proxy": proxy.facts()} if proxy else {}),
                    **({"program": found["details"]} if found["details"] else {}),
                },
            )
        )
