"""promptfoo's output transforms: the answer a grader reads, made by code from the answer.

A grader's ``transforms`` (the test's ``options.transform``, then the assert's own
``transform``) run in order, each given the previous one's value as ``output`` and the
script ``context`` (``vars``, ``prompt``, ``test``) as promptfoo gives them. Inline code
runs in the embedded JavaScript engine (one line is an expression, more lines a function
body, as a ``javascript`` assert's code); ``file://x.js[:name]`` and
``file://x.py[:name]`` run in the sandbox like those asserts' files (a Python file's
default function is ``get_transform``, a JavaScript file's what the module exports). The
grader then reads the last value: text as it is, anything else as its JSON (what promptfoo's
text checks compare), while ``javascript`` and ``python`` asserts get the value itself. A
transform that throws makes the grader an error naming it, as promptfoo reports the test.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from app.errors import EvaluatorConfigError
from app.evaluators.base import EvaluationContext
from app.evaluators.code.javascript import call_source, script_context, script_output
from app.evaluators.code.js_engine import JsError, run_in_thread, run_script
from app.evaluators.code.program_asserts import PYTHON, file_reference, language_of, run_function
from app.evaluators.config import EvaluatorConfig

PYTHON_DEFAULT = "get_transform"


def transform_file(transform: str) -> bool:
    """Whether a transform names a program file (which runs in the sandbox)."""
    return file_reference(transform) is not None


async def transformed(config: EvaluatorConfig, context: EvaluationContext) -> EvaluationContext:
    """The context with the answer as ``config.transforms`` make it.

    Raises:
        EvaluatorConfigError: A transform threw, passed its limits or could not run.
    """
    value: Any = script_output(config, context)  # a reply of calls: the calls, as promptfoo
    variables = script_context(config, context)
    for transform in config.transforms:
        value = await _apply(config, context, transform, value, variables)
    if isinstance(value, str):
        return replace(context, candidate_answer=value, answer_value=None)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return replace(context, candidate_answer=text, answer_value=value)


async def _apply(
    config: EvaluatorConfig,
    context: EvaluationContext,
    transform: str,
    value: Any,
    variables: dict[str, Any],
) -> Any:
    shown = transform.strip().splitlines()[0][:80] if transform.strip() else transform
    reference = file_reference(transform)
    if reference is None:
        source = call_source(transform.rstrip(), {"output": value, "context": variables})
        try:
            result = await run_in_thread(run_script, source)
        except JsError as exc:
            raise EvaluatorConfigError(f"the transform {shown!r} failed: {exc}") from None
    else:
        file, function = reference
        language = language_of(file)
        if not function and language is PYTHON:
            function = PYTHON_DEFAULT
        ran = await run_function(config, context, language, (file, function), value)
        result = {"threw": ran["__threw"]} if isinstance(ran, dict) and "__threw" in ran else None
        if result is None:
            undefined = isinstance(ran, dict) and "__undefined" in ran
            result = {"value": None if undefined else ran}
    if not isinstance(result, dict) or "value" not in result:
        threw = result.get("threw") if isinstance(result, dict) else result
        raise EvaluatorConfigError(f"the transform {shown!r} threw: {threw}")
    return result["value"]
