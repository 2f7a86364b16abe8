"""How graders of a case are read: which strings are templates, what judge prompts may name.

AgentV 2025 files have no templates. In AgentV 2026 and prompts/providers/vars files, a
judge prompt is always a template: besides the case's variables it may name the values the
judge is given at run time, in either generation's words (``{{ output }}`` is AgentV 2026's
``{{ candidate_answer }}``); those are left in place for the judge, spelled canonically.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.formatting import EVALUATOR_VARIABLES
from app.suites.documents.findings import Findings
from app.suites.graders.lists import GraderContext, PromptFiles
from app.suites.reading import Renderer

JUDGE_NAMES: dict[str, str] = {name: f"{{{{ {name} }}}}" for name in EVALUATOR_VARIABLES} | {
    "output": "{{ candidate_answer }}",
    "answer": "{{ candidate_answer }}",
    "input": "{{ question }}",
    "expected_output": "{{ reference_answer }}",
    "criteria": "{{ expected_outcome }}",
}
"""What a judge prompt template may name besides variables: each becomes the judge's own
placeholder, filled when the case runs."""


def judge_prompt_renderer(
    variables: Mapping[str, Any] | None, findings: Findings, *, templates: bool
) -> Renderer:
    """The renderer of judge prompts: none for AgentV 2025, else variables + judge names."""
    if not templates:
        return Renderer(None, findings)
    return Renderer({**(variables or {}), **JUDGE_NAMES}, findings)


def grader_context(
    findings: Findings,
    variables: Mapping[str, Any] | None,
    *,
    templates: bool,
    prompt_files: PromptFiles = "heuristic",
    promptfoo: bool = False,
) -> GraderContext:
    """A context for reading one case's graders (``templates``: a 2026 dialect)."""
    return GraderContext(
        findings=findings,
        render=Renderer(variables, findings, "empty" if promptfoo else "error"),
        render_prompt=judge_prompt_renderer(variables, findings, templates=templates),
        strings=templates,
        prompt_files=prompt_files,
        promptfoo=promptfoo,
    )
