"""promptfoo's ``functionToolCallbacks`` run on the reply a case is graded on.

When every call of that reply has a callback (``app.suites.tool_callbacks``), each runs with
the call's arguments text: inline JavaScript in the embedded V8 engine (awaited, within its
time limit), a file's function in the program sandbox. The answer becomes their results, one
per line (text as it is, anything else as compact JSON); the calls stay the record's. A call
without a callback, or a callback that throws or cannot run, leaves the reply as it was
(promptfoo 0.123.1 outputs the calls then, measured). Each call's ``output`` in the record
is its callback's result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.evaluators.code.js_engine import JsError, literal, run_awaited, run_in_thread
from app.evaluators.code.program_asserts import call_function, language_of
from app.evaluators.code.programs import ProgramRunner
from app.providers.base import ProviderResponse, ToolCall
from app.providers.messages.tool_calls import arguments_text
from app.suites.tool_callbacks import ToolCallback

_AWAITED = """
const __callback = ({code}
);
Promise.resolve()
  .then(() => __callback({arguments}))
  .then(
    (value) => JSON.stringify({{value: value === undefined ? null : value}}),
    (error) => JSON.stringify({{
      threw: String(error && error.message !== undefined ? error.message : error),
    }}),
  );
"""


class CallbackFailed(Exception):
    """A callback threw, or could not run."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


async def _inline(callback: ToolCallback, arguments: str) -> Any:
    assert callback.code is not None
    source = _AWAITED.format(code=callback.code, arguments=literal(arguments))
    what = f"the callback of tool {callback.tool!r}"
    try:
        result = await run_in_thread(lambda: run_awaited(source, what=what))
    except JsError as exc:
        raise CallbackFailed(str(exc)) from None
    if not isinstance(result, dict) or "value" not in result:
        threw = result.get("threw") if isinstance(result, dict) else result
        raise CallbackFailed(f"{what} threw: {threw}")
    return result["value"]


async def _from_file(callback: ToolCallback, arguments: str, programs: ProgramRunner | None) -> Any:
    assert callback.file is not None
    if programs is None or callback.folder is None:
        raise CallbackFailed(f"the callback file {callback.file!r} cannot run here")
    reference = (callback.file, callback.function)
    ran = await call_function(
        programs, Path(callback.folder), language_of(callback.file), reference, (arguments,)
    )
    if isinstance(ran, dict) and "__threw" in ran:
        raise CallbackFailed(f"the callback of tool {callback.tool!r} threw: {ran['__threw']}")
    return None if isinstance(ran, dict) and "__undefined" in ran else ran


async def _run(callback: ToolCallback, call: ToolCall, programs: ProgramRunner | None) -> Any:
    arguments = arguments_text(call)
    if callback.code is not None:
        return await _inline(callback, arguments)
    return await _from_file(callback, arguments, programs)


async def called_back(
    response: ProviderResponse,
    callbacks: tuple[ToolCallback, ...],
    programs: ProgramRunner | None,
) -> ProviderResponse:
    """``response`` with its callbacks' results as its answer (as it was: see the module)."""
    by_tool = {callback.tool: callback for callback in callbacks}
    calls = response.tool_calls
    if not calls or any(call.tool not in by_tool for call in calls):
        return response
    answered: list[ToolCall] = []
    for call in calls:
        try:
            result = await _run(by_tool[call.tool], call, programs)
        except CallbackFailed:
            return response
        answered.append(call.model_copy(update={"output": result}))
    text = "\n".join(_text(call.output) for call in answered)
    return response.model_copy(update={"text": text, "tool_calls": tuple(answered)})
