"""promptfoo's ``assertScoringFunction`` (a test's or ``defaultTest``'s), read as a program.

``file://x.js[:name]`` (``.cjs``, ``.mjs``, TypeScript under ``bun`` too) or
``file://x.py[:name]``: the program that makes the test's result from its asserts'
(``evaluators.code.scoring_function`` runs it in the sandbox). A test's own replaces the
default's. Anything else
(inline code, another kind of file) is an error naming the key; like every program, it runs
only with code graders enabled, for a suite read from a workspace root
(``graders.programs`` places it).
"""

from __future__ import annotations

from typing import Any

from app.evaluators.code.program_asserts import TYPESCRIPT, file_reference
from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import Findings, describe

KEY = "assertScoringFunction"
SUFFIXES = {
    **dict.fromkeys((".js", ".cjs", ".mjs", *TYPESCRIPT), "javascript"),
    ".py": "python",
}


def read_scoring_function(raw: Any, path: DocumentPath, findings: Findings) -> str | None:
    """The ``file://`` reference ``raw`` gives, checked; None (error recorded) otherwise."""
    reference = file_reference(raw) if isinstance(raw, str) else None
    suffix = next((s for s in SUFFIXES if reference and reference[0].endswith(s)), None)
    if reference is None or suffix is None:
        findings.error(
            path,
            "must name a scoring function file, 'file://x.js[:function]' or "
            f"'file://x.py[:function]', not {describe(raw)}",
        )
        return None
    return str(raw).strip()


def scoring_grader(reference: str | None) -> EvaluatorConfig | None:
    """The scoring function as a program config (placed like a ``python`` assert's file)."""
    if reference is None:
        return None
    file, _ = file_reference(reference) or ("", "")
    kind = next(kind for suffix, kind in SUFFIXES.items() if file.endswith(suffix))
    return EvaluatorConfig(name=KEY, type=kind, value=reference)
