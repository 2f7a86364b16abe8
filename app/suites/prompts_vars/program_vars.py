"""promptfoo's variables made by programs: ``vars: {system_prompt: file://load_prompt.py}``.

promptfoo 0.123.1 (measured) calls, for each test and each prompt it runs with,
``get_var(var_name, prompt, other_vars)`` of a Python file (a JavaScript file's exported
function, with the same arguments), ``prompt`` being the prompt as written and
``other_vars`` the test's variables (the program's own ``file://`` among them). It uses the
``output`` of the ``{output}`` it returns as the value; ``{error}`` or anything else makes
the test an error. Here the programs run in the sandbox (``ProgramRunner``, code graders
on, a suite file under a workspace root) while the suite is read, in two passes of the
reader: the first records each call the prompts need (``VarCalls``), the calls run, and the
second reads the suite with their outputs. A test whose call fails runs as an error naming
the program and why (``EvalCase.error``), the other tests run, as in promptfoo. Without a
runner such a variable is refused by name.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.evaluators.code.program_asserts import (
    TYPESCRIPT,
    call_function,
    file_reference,
    language_of,
)
from app.evaluators.code.programs import ProgramError, ProgramRunner

PROGRAM_SUFFIXES = (".py", ".js", ".cjs", ".mjs", *TYPESCRIPT)
DEFAULT_FUNCTION = "get_var"
CONCURRENCY = 4
"""Programs run at once while one suite is read."""


@dataclass(frozen=True)
class VarCall:
    """One call a prompt needs: the program, the variable, the prompt, the test's variables.

    A prompt made by a program is a call with ``name`` empty (its ``prompt``: the provider).
    """

    file: str
    name: str
    prompt: str
    variables: str
    """The test's variables as JSON (sorted keys), so equal calls are made once."""


@dataclass
class VarCalls:
    """The calls one suite's prompts need, and what each gave (a value, or an error)."""

    values: dict[VarCall, str] = field(default_factory=dict)
    errors: dict[VarCall, str] = field(default_factory=dict)
    pending: set[VarCall] = field(default_factory=set)
    provider: str = ""
    """The target a prompt program is told it is for (the suite's first: docs/design.md)."""
    failed: dict[tuple[tuple[str | int, ...], str], str] = field(default_factory=dict)
    """Tests (document path, variables) whose program failed: they run as errors, saying
    why."""

    def value(self, call: VarCall) -> str | None:
        """The call's output: ``''`` while it has not run (recorded), None when it failed."""
        if call in self.errors:
            return None
        if call not in self.values:
            self.pending.add(call)
        return self.values.get(call, "")


_CALLS: ContextVar[VarCalls | None] = ContextVar("program_vars", default=None)


@contextmanager
def var_programs(calls: VarCalls | None) -> Iterator[None]:
    """Make ``calls`` the program variables' record while one suite is read."""
    token = _CALLS.set(calls)
    try:
        yield
    finally:
        _CALLS.reset(token)


def program_file(value: Any) -> str | None:
    """The program a ``file://`` variable names (``x.py``, ``x.js:fn``), or None."""
    if not isinstance(value, str):
        return None
    reference = file_reference(value)
    if reference is None or not reference[0].lower().endswith(PROGRAM_SUFFIXES):
        return None
    return value.strip()


def programs_allowed() -> bool:
    """Whether program variables may run for the suite being read."""
    return _CALLS.get() is not None


def program_values(
    prompt: str, variables: Mapping[str, Any], test: tuple[str | int, ...]
) -> dict[str, Any]:
    """``variables`` with each program's output for ``prompt``.

    A program that failed gives ``''`` and marks ``test`` failed (``VarCalls.failed``): it
    runs as an error naming the program, as promptfoo reports it, the other tests run.
    """
    calls = _CALLS.get()
    programs = {name: ref for name, value in variables.items() if (ref := program_file(value))}
    if calls is None or not programs:
        return dict(variables)
    shown = _shown(variables)
    filled = dict(variables)
    for name, reference in programs.items():
        call = VarCall(reference, name, prompt, shown)
        value = calls.value(call)
        if value is None:
            calls.failed.setdefault((test, shown), f"vars.{name}: {calls.errors[call]}")
        filled[name] = value or ""
    return filled


def test_failure(test: tuple[str | int, ...], variables: Mapping[str, Any]) -> str | None:
    """Why a test cannot run with a prompt (its program failed), or None.

    ``test``: the test's document path and the prompt's id; ``variables``: the test's.
    """
    calls = _CALLS.get()
    return calls.failed.get((test, _shown(variables))) if calls is not None else None


def _shown(variables: Mapping[str, Any]) -> str:
    return json.dumps(dict(variables), sort_keys=True, default=str, ensure_ascii=False)


async def run_calls(calls: VarCalls, programs: ProgramRunner, folder: Path) -> None:
    """Run every pending call in the sandbox; each gives a value or an error."""
    slots = asyncio.Semaphore(CONCURRENCY)

    async def run(call: VarCall) -> None:
        async with slots:
            outcome = await _call(call, programs, folder)
        if isinstance(outcome, str):
            calls.values[call] = outcome
        else:
            calls.errors[call] = outcome[0]

    pending, calls.pending = sorted(calls.pending, key=repr), set()
    await asyncio.gather(*(run(call) for call in pending))


async def _call(call: VarCall, programs: ProgramRunner, folder: Path) -> str | tuple[str]:
    file, function = file_reference(call.file) or ("", "")
    python = file.endswith(".py")
    variables = json.loads(call.variables)
    if call.name:
        args: tuple[Any, ...] = (call.name, call.prompt, variables)
    else:  # a prompt function: promptfoo's context (Python's has its config too)
        provider = {"id": call.prompt, "label": call.prompt}
        args = ({"vars": variables, "provider": provider, **({"config": {}} if python else {})},)
    if python and not function and not call.name:  # a script: its output is the prompt
        return await _script_prompt(call.file, file, args[0], programs, folder)
    function = function or (DEFAULT_FUNCTION if python and call.name else "")
    reference = (file, function)
    result = await call_function(programs, folder, language_of(file), reference, args)
    if isinstance(result, dict) and "__threw" in result:
        return (f"{call.file} threw: {result['__threw']}",)
    if not call.name:
        return _prompt_result(call.file, result)
    if isinstance(result, dict) and result.get("error"):
        return (f"{call.file} returned an error: {result['error']}",)
    output = result.get("output") if isinstance(result, dict) else None
    if output is None:
        return (f"{call.file} did not return any output (promptfoo reads {{output: ...}})",)
    return output if isinstance(output, str) else str(json.dumps(output, ensure_ascii=False))


async def _script_prompt(
    reference: str, file: str, context: Any, programs: ProgramRunner, folder: Path
) -> str | tuple[str]:
    """A Python prompt file named without a function: what it prints is the prompt.

    It runs as a script with the context's JSON as its argument (promptfoo 0.123.1, measured).
    """
    try:
        ran = await programs.run(
            ["python3", "-I", file, json.dumps(context, ensure_ascii=False)], b"", folder=folder
        )
    except ProgramError as exc:
        return (f"{reference}: {exc}",)
    return json.dumps(ran.stdout.rstrip("\n"), ensure_ascii=False)


def _prompt_result(file: str, result: Any) -> str | tuple[str]:
    """A prompt function's result as JSON: a text, or a list of chat messages."""
    if isinstance(result, dict) and "prompt" in result:
        if result.get("config"):
            return (f"{file} returned a prompt with a 'config': not supported (the target's own "
                    "settings apply)",)  # fmt: skip
        result = result["prompt"]
    if isinstance(result, str) or (
        isinstance(result, list) and all(isinstance(item, dict) for item in result)
    ):
        return json.dumps(result, ensure_ascii=False)
    return (f"{file} returned neither a prompt text nor a list of chat messages",)


def program_prompt(file: str, variables: Mapping[str, Any], test: tuple[str | int, ...]) -> Any:
    """What a prompt program gives for a test's variables: a text or messages.

    None while it has not run, or when it failed (the test then runs as an error).
    """
    calls = _CALLS.get()
    if calls is None:
        return None
    shown = _shown(variables)
    call = VarCall(file, "", calls.provider, shown)
    value = calls.value(call)
    if value is None:
        calls.failed.setdefault((test, shown), f"prompt {file}: {calls.errors[call]}")
        return None
    return json.loads(value) if value else None


def set_provider(name: str) -> None:
    """The target prompt programs are told they are for (the suite's first)."""
    calls = _CALLS.get()
    if calls is not None:
        calls.provider = name
