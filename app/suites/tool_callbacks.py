"""promptfoo's ``functionToolCallbacks``: code run when the model calls a tool, its result output.

A provider's ``config.functionToolCallbacks`` maps a tool's name to a callback: inline
JavaScript (a function expression, ``async (args) => {...}``), run in the embedded V8 engine,
or ``file://callbacks.js:addNumbers`` (also ``.ts`` under bun, ``.py`` with a function
named), run in the program sandbox from the suite file's folder (code graders on, a suite
named by path: refused by name otherwise). A callback gets the call's arguments as the model
wrote them (text). When the reply a case is graded on calls tools that all have callbacks,
each callback runs and the answer is their results (text as it is, anything else as its
compact JSON), one per line; a call without a callback, or a callback that throws, leaves the
reply's calls as the answer. promptfoo 0.123.1 does the same on its Chat and Responses
providers and does not send the result back to the model (measured:
``tests/conformance/promptfoo/function_callbacks.yaml``). ``app.suites.graders.callback_files``
places the files' folders, ``app.evaluation.tool_callbacks`` runs them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe

CALLBACKS_KEY = "functionToolCallbacks"
READ_BY = frozenset({"chat", "responses", None})
"""promptfoo's provider families that run callbacks (its OpenAI Chat and Responses ones)."""
FILE_PREFIX = "file://"


class ToolCallback(BaseModel):
    """The callback of one tool: inline JavaScript, or a function of a program file."""

    model_config = ConfigDict(frozen=True)
    tool: str
    code: str | None = None
    file: str | None = None
    function: str = ""
    folder: str | None = None
    """The absolute folder a file's callback runs from (placed after reading)."""


def callback_keys(family: str | None) -> frozenset[str]:
    """The callbacks key, when a provider of ``family`` reads it."""
    return frozenset({CALLBACKS_KEY}) if family in READ_BY else frozenset()


def read_callbacks(value: Any, where: DocumentPath, findings: Findings) -> tuple[ToolCallback, ...]:
    """``functionToolCallbacks``: a mapping of tool names to callbacks."""
    if not isinstance(value, dict):
        findings.error(where, f"must map tool names to callbacks, not {describe(value)}")
        return ()
    callbacks: list[ToolCallback] = []
    for tool, callback in value.items():
        if not isinstance(callback, str) or not callback.strip():
            findings.error(
                (*where, str(tool)),
                f"must be JavaScript code or a file://path:function, not {describe(callback)}",
            )
            continue
        text = callback.strip()
        if not text.startswith(FILE_PREFIX):
            callbacks.append(ToolCallback(tool=str(tool), code=text))
            continue
        file, _, function = text[len(FILE_PREFIX) :].partition(":")
        if file.endswith(".py") and not function:
            findings.error((*where, str(tool)), f"{text!r}: name the Python function (x.py:fn)")
            continue
        callbacks.append(ToolCallback(tool=str(tool), file=file, function=function))
    return tuple(callbacks)
