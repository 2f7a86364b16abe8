"""``$ref`` in promptfoo files: a local JSON pointer replaced by the value it points at.

A ``{$ref: '#/assertionTemplates/name'}`` mapping is replaced before the file is read.

promptfoo dereferences its whole config this way (its ``assertionTemplates`` are the usual
target). Measured on promptfoo 0.123.1 (tests/conformance/promptfoo/assertion_templates.yaml):
keys written beside ``$ref`` are kept over the template's. A reference to another file, one
that points nowhere, or a chain of references that comes back to itself is an error at the
``$ref``.
"""

from __future__ import annotations

from typing import Any

from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe

REF = "$ref"
MAX_DEPTH = 32
"""Most references one value may follow before it is taken for a cycle."""
MAX_NODES = 200_000
"""Most values the dereferenced file may hold (references may repeat a large template)."""


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_NODES


def dereferenced(document: Any, findings: Findings) -> Any:
    """``document`` with each ``{$ref: '#/...'}`` mapping replaced by what it points at."""
    if not _has_reference(document):
        return document
    budget = _Budget()
    resolved = _resolve(document, document, (), (), findings, budget)
    if budget.left < 0:
        findings.error(
            (), f"its references expand the file past {MAX_NODES} values: use fewer of them"
        )
    return resolved


def _has_reference(value: Any) -> bool:
    if isinstance(value, dict):
        return REF in value or any(_has_reference(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_reference(item) for item in value)
    return False


def _resolve(
    value: Any,
    document: Any,
    path: DocumentPath,
    followed: tuple[str, ...],
    findings: Findings,
    budget: _Budget,
) -> Any:
    budget.left -= 1
    if budget.left < 0:
        return None
    if isinstance(value, list):
        return [
            _resolve(item, document, (*path, index), followed, findings, budget)
            for index, item in enumerate(value)
        ]
    if not isinstance(value, dict):
        return value
    if REF not in value:
        return {
            key: _resolve(item, document, (*path, key), followed, findings, budget)
            for key, item in value.items()
        }
    pointer = value[REF]
    target = _target(pointer, document, (*path, REF), followed, findings)
    if target is None:
        return {key: item for key, item in value.items() if key != REF}
    resolved = _resolve(target, document, path, (*followed, pointer), findings, budget)
    siblings = {key: item for key, item in value.items() if key != REF}
    if not siblings:
        return resolved
    if not isinstance(resolved, dict):
        findings.error((*path, REF), f"{pointer!r} is not a mapping: keys beside it cannot apply")
        return siblings
    own = _resolve(siblings, document, path, followed, findings, budget)
    return {**resolved, **own}


def _target(
    pointer: Any,
    document: Any,
    where: DocumentPath,
    followed: tuple[str, ...],
    findings: Findings,
) -> Any:
    """The value ``pointer`` names in ``document``; None (an error recorded) when it cannot."""
    if not isinstance(pointer, str) or not pointer.startswith("#"):
        findings.error(
            where,
            f"{describe(pointer) if not isinstance(pointer, str) else repr(pointer)} is not "
            "supported: only a reference inside the file ('#/assertionTemplates/name') is read",
        )
        return None
    if pointer in followed or len(followed) >= MAX_DEPTH:
        findings.error(where, f"{pointer!r} refers back to itself (a cycle of references)")
        return None
    current = document
    parts = [part for part in pointer[1:].split("/") if part] if pointer != "#" else []
    for part in parts:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and key in current:
            current = current[key]
        elif isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        else:
            findings.error(where, f"{pointer!r} points at nothing in the file")
            return None
    return current
