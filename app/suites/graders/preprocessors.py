"""AgentV's ``preprocessors``: programs that turn files in an answer into text for a judge.

Written on a judge (``llm-grader``) or at the top of an AgentV 2026 suite, as a list of
``{type, command}``: ``type`` a media type or a file extension (``xlsx``), ``command`` the
program (argv, or one string split as a shell would, never run by a shell). Every judge of
the suite gets the suite's list, its own entries replacing those of the same type (AgentV
4.42.4's merge, measured); the default judge of a case without graders too. They run like
code graders (``graders.programs`` places them and checks their script exists;
``evaluators.preprocess`` runs them in the sandbox).
"""

from __future__ import annotations

import shlex
from typing import Any

from app.evaluators.code.preprocess import media_type
from app.evaluators.config import EvaluatorConfig, Preprocessor
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe


def read_preprocessors(
    raw: Any, path: DocumentPath, findings: Findings
) -> tuple[Preprocessor, ...] | None:
    """Each ``{type, command}`` of a list; None when something is wrong (errors recorded)."""
    if not isinstance(raw, list):
        findings.error(path, f"must be a list of {{type, command}}, not {describe(raw)}")
        return None
    before = len(findings.errors)
    read: list[Preprocessor] = []
    for index, item in enumerate(raw):
        where = (*path, index)
        if not isinstance(item, dict):
            findings.error(where, f"a preprocessor must be a mapping, not {describe(item)}")
            continue
        for key in set(item) - {"type", "command"}:
            findings.error((*where, key), "unknown key: a preprocessor has type and command")
        kind, command = item.get("type"), _argv(item.get("command"))
        if not isinstance(kind, str) or not kind.strip():
            findings.error((*where, "type"), f"is required: a media type, not {describe(kind)}")
        elif command is None:
            findings.error(
                (*where, "command"),
                f"is required: the program, a list of strings, not {describe(item.get('command'))}",
            )
        else:
            read.append(Preprocessor(type=media_type(kind), command=command))
    return tuple(read) if len(findings.errors) == before else None


def _argv(raw: Any) -> tuple[str, ...] | None:
    if isinstance(raw, str):
        try:
            raw = shlex.split(raw)
        except ValueError:
            return None
    if isinstance(raw, list) and raw and all(isinstance(item, str) and item for item in raw):
        return tuple(raw)
    return None


def merged(
    suite: tuple[Preprocessor, ...], own: tuple[Preprocessor, ...]
) -> tuple[Preprocessor, ...]:
    """The suite's preprocessors, those of the same type replaced by the judge's own."""
    by_type = {entry.type: entry for entry in suite}
    by_type.update({entry.type: entry for entry in own})
    return tuple(by_type.values())


def with_suite_preprocessors(
    grader: EvaluatorConfig, suite: tuple[Preprocessor, ...]
) -> EvaluatorConfig:
    """``grader`` (and its children) with the suite's preprocessors under each judge's own."""
    update: dict[str, Any] = {}
    if grader.evaluators:
        children = tuple(with_suite_preprocessors(child, suite) for child in grader.evaluators)
        update["evaluators"] = children
    if grader.type == "llm_judge" and suite:
        update["preprocessors"] = merged(suite, grader.preprocessors)
    return grader.model_copy(update=update) if update else grader
