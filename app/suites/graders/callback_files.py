"""The folders ``functionToolCallbacks`` files run from (``app.suites.tool_callbacks``).

A callback naming a file runs in the program sandbox, from the suite file's folder: only with
code graders enabled and a suite read from a workspace root, refused by name otherwise.
"""

from __future__ import annotations

from app.evaluators.code.code_judge import DISABLED
from app.suites.documents.findings import Findings
from app.suites.graders.programs import INLINE, CodePolicy, folder_inside
from app.suites.model import EvalSuite
from app.suites.tool_callbacks import CALLBACKS_KEY, ToolCallback
from app.suites.tool_use import ToolUse

WHERE = ("providers", CALLBACKS_KEY)


def placed_callbacks(
    callbacks: tuple[ToolCallback, ...], policy: CodePolicy, findings: Findings, reported: set[str]
) -> tuple[ToolCallback, ...]:
    """``callbacks`` with each file's folder made absolute.

    A file that cannot run is refused by name, once (``reported``), and dropped.
    """
    placed: list[ToolCallback] = []
    for callback in callbacks:
        if callback.file is None or callback.folder is not None:
            placed.append(callback)
            continue
        problem = DISABLED if not policy.enabled else INLINE if policy.folder is None else None
        folder = folder_inside(policy.folder, ".") if policy.folder is not None else None
        if problem is None and folder is None:
            problem = "the suite's folder is outside the workspace roots"
        if problem is not None:
            if callback.file not in reported:
                reported.add(callback.file)
                why = f"the callback file {callback.file!r} of tool {callback.tool!r} cannot run"
                findings.error(WHERE, f"{why}: {problem}")
            continue
        placed.append(callback.model_copy(update={"folder": folder}))
    return tuple(placed)


def _placed(
    tool_use: ToolUse, policy: CodePolicy, findings: Findings, reported: set[str]
) -> ToolUse:
    callbacks = placed_callbacks(tool_use.callbacks, policy, findings, reported)
    return tool_use.model_copy(update={"callbacks": callbacks})


def with_placed_callbacks(suite: EvalSuite, policy: CodePolicy, findings: Findings) -> EvalSuite:
    """The suite with the callbacks of its targets' and its cases' tools placed."""
    reported: set[str] = set()
    targets = {
        target: _placed(tool_use, policy, findings, reported) if tool_use.callbacks else tool_use
        for target, tool_use in suite.target_tools.items()
    }
    cases = tuple(
        case.model_copy(update={"tool_use": _placed(case.tool_use, policy, findings, reported)})
        if case.tool_use is not None and case.tool_use.callbacks
        else case
        for case in suite.cases
    )
    return suite.model_copy(update={"target_tools": targets, "cases": cases})
