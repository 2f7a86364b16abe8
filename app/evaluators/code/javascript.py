"""promptfoo's ``javascript`` assert, run in the embedded JavaScript engine (``js_engine``).

The code sees ``output`` (the answer) and ``context`` (``vars``, ``prompt``, ``test``,
``config``), as in promptfoo. One line is an expression (``output.length > 10``; leading
``const``/``let``/``var`` statements end at their last ``;`` and the rest is returned); more
lines are a function body that ``return``s. The result is a boolean (pass or fail), a number
(the score: it passes above 0, or from ``threshold`` when the grader gives one) or a
grading result ``{pass, score, reason}``; anything else, a throw, or a script over its time
or memory limit fails the grader with the error as its reason (as promptfoo reports it).
``negate`` (``not-javascript``) inverts the verdict. In promptfoo files, an answer made only
of tool calls is ``output`` as the calls (``output[0].function.name``), as promptfoo gives it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.evaluators.base import EvaluationContext, EvaluatorOutcome
from app.evaluators.code.js_engine import JsError, literal, run_in_thread, run_script
from app.evaluators.config import EvaluatorConfig
from app.evaluators.results import EvaluatorResult

_DECLARATION = re.compile(r"^(const|let|var)\s")

_HARNESS = """
const __run = new Function("output", "context", __body);
let __result;
try {
  __result = __run(__output, __context);
} catch (error) {
  __result = {__threw: String(error && error.message !== undefined ? error.message : error)};
}
JSON.stringify(
  __result !== null && typeof __result === "object" && typeof __result.then === "function"
    ? {__threw: "the script returned a Promise: asynchronous code cannot run here"}
    : __result === undefined ? {__undefined: true} : __result
);
"""


def function_body(code: str) -> str:
    """The body of the function promptfoo makes of an assert's code (see the module)."""
    if "\n" in code:
        return code
    trimmed = code.strip().rstrip(";").rstrip()
    if _DECLARATION.match(trimmed) and ";" in trimmed:
        statements, _, expression = trimmed.rpartition(";")
        return f"{statements}; return {expression.strip()}" if expression.strip() else trimmed
    return f"return {trimmed}"


_CALL = """
const __function = new Function(...__parameters, __body);
const __value = __function(...__arguments);
JSON.stringify(
  __value !== null && typeof __value === "object" && typeof __value.then === "function"
    ? {threw: "it returned a Promise: asynchronous code cannot run here"}
    : {value: __value === undefined ? null : __value}
);
"""


def call_source(body: str, parameters: dict[str, Any]) -> str:
    """A script calling ``body`` as a function of ``parameters`` (names and values).

    Its value is ``{value}`` as JSON (``null`` for ``undefined``), or ``{threw}`` for a
    Promise; ``body`` is made a function as promptfoo makes transforms (``function_body``).
    """
    return (
        f"const __body = {literal(function_body(body))};\n"
        f"const __parameters = {literal(list(parameters))};\n"
        f"const __arguments = {literal(list(parameters.values()))};\n" + _CALL
    )


def script_source(code: str, output: Any, context: dict[str, Any]) -> str:
    """The whole script: the assert's code as a function, called, its result as JSON."""
    preamble = (
        f"const __body = {literal(function_body(code.rstrip()))};\n"
        f"const __output = {literal(output)};\n"
        f"const __context = {literal(context)};\n"
    )
    return preamble + _HARNESS


def _verdict(config: EvaluatorConfig, result: Any, what: str) -> tuple[bool, float, str]:
    """``(passed, score, reason)`` of what the script returned (before ``negate``)."""
    if isinstance(result, dict) and "__threw" in result:
        return False, 0.0, f"{what} threw: {result['__threw']}"
    if isinstance(result, bool):
        return result, 1.0 if result else 0.0, f"{what} returned {str(result).lower()}"
    if isinstance(result, int | float):
        mark = config.threshold
        held = result > 0 if mark is None else result >= mark
        return held, float(result), f"{what} returned {result:g}"
    if isinstance(result, dict) and isinstance(result.get("pass"), bool):
        score = result.get("score")
        number = float(score) if isinstance(score, int | float) else float(result["pass"])
        reason = result.get("reason")
        return result["pass"], number, str(reason) if reason else f"{what}'s grading result"
    shown = "undefined" if isinstance(result, dict) and "__undefined" in result else result
    return (
        False,
        0.0,
        (f"{what} must return a boolean, a number or {{pass, score, reason}}, not {shown!r}"),
    )


def script_context(config: EvaluatorConfig, context: EvaluationContext) -> dict[str, Any]:
    """A promptfoo script's ``context``: ``vars``, ``prompt``, ``test`` and ``config``."""
    extra = config.model_extra or {}
    variables = extra.get("test_vars") or {}
    return {
        "vars": variables,
        "prompt": context.question,
        "test": {"vars": variables, "metadata": dict(context.case.metadata)},
        "config": extra.get("config") or {},
    }


def script_output(config: EvaluatorConfig, context: EvaluationContext) -> Any:
    """A script's ``output``: the answer (as transforms made it), or tool calls as the calls.

    The value a transform returned, when it is not text. promptfoo gives scripts a reply
    made only of tool calls as OpenAI's ``{id, type, function}`` objects, not as their JSON
    text (a reply to legacy ``functions`` as its ``{name, arguments}``); so do promptfoo
    files here.
    """
    if context.answer_value is not None:  # a transform made it (``evaluators.transforms``)
        return context.answer_value
    answer = context.candidate_answer
    if config.semantics != "promptfoo" or not context.candidate.tool_calls:
        return answer
    try:
        calls = json.loads(answer) if answer.startswith(("[", "{")) else None
    except ValueError:
        return answer
    if isinstance(calls, dict) and set(calls) == {"name", "arguments"}:
        return calls  # a legacy ``function_call`` (``app.suites.prompts_vars.legacy_functions``)
    return calls if isinstance(calls, list) else answer


def scored_outcome(config: EvaluatorConfig, result: Any, what: str) -> EvaluatorOutcome:
    """The grader's result for what a script returned (``negate`` applied)."""
    return verdict_outcome(config, *_verdict(config, result, what))


def verdict_outcome(
    config: EvaluatorConfig, held: bool, score: float, reason: str
) -> EvaluatorOutcome:
    """The grader's result for a script's ``(held, score, reason)``, ``negate`` applied."""
    passed = held != config.negate
    if config.negate:
        score = 1.0 - score if 0 <= score <= 1 else score
    return EvaluatorOutcome(
        EvaluatorResult(
            name=config.name,
            type=config.type,
            score=max(0.0, min(1.0, score)),
            verdict="pass" if passed else "fail",
            passed=passed,
            hits=[reason] if passed else [],
            misses=[] if passed else [reason],
            reasoning=reason,
            weight=config.weight,
        )
    )


class JavascriptEvaluator:
    """Runs a ``javascript`` assert's code in V8, off the event loop."""

    async def evaluate(
        self, config: EvaluatorConfig, context: EvaluationContext
    ) -> EvaluatorOutcome:
        """The script's verdict on the answer (its errors fail the grader, as in promptfoo)."""
        code = config.value if isinstance(config.value, str) else ""
        source = script_source(
            code, script_output(config, context), script_context(config, context)
        )
        try:
            result = await run_in_thread(run_script, source)
        except JsError as exc:
            result = {"__threw": str(exc)}
        return scored_outcome(config, result, "the script")
