"""promptfoo's ``rubricPrompt``: the judge prompt of a test's ``llm-rubric`` graders.

``options.rubricPrompt`` (of ``defaultTest`` or a test) is text or chat messages (their
contents, joined by blank lines), rendered with the test's variables, ``{{ output }}`` (the
answer, filled when the case runs) and ``{{ rubric }}`` (also ``{{ value }}``: the grader's
rubric). AgentV's July files spell it ``rubric_prompt`` and name the rubric ``{{ rubrics }}``
(its README quickstart), with AgentV's judge names (``{{ input }}`` the question, ``{{ output
}}`` the answer). It becomes each ``llm-rubric``'s ``prompt`` (one that has its own keeps it); the
judge still answers in this service's form, the rubric listed after the prompt. promptfoo's
other model graders use it in place of their own prompts, which they are not here: a test
with both is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.evaluators.catalog import find_type
from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick
from app.suites.graders.context import JUDGE_NAMES
from app.suites.reading import Renderer

RUBRIC_PROMPT_KEYS = ("rubricPrompt", "rubric_prompt")
"""promptfoo's spelling, and AgentV's July one (its README quickstart's ``default_test``)."""


def read_rubric_prompt(options: Any, path: DocumentPath, findings: Findings) -> str | None:
    """``options.rubricPrompt`` (AgentV's July files: ``rubric_prompt``) as one text, or None.

    Problems are recorded.
    """
    if not isinstance(options, dict):
        return None
    key, raw = pick(options, RUBRIC_PROMPT_KEYS, path, findings)
    if raw is MISSING or raw is None:
        return None
    where = (*path, key)
    if isinstance(raw, str) and raw.strip().startswith("file://"):
        findings.error(where, f"{raw.strip()!r}: a rubricPrompt file is not supported yet")
        return None
    if isinstance(raw, str) and raw.strip():
        return raw
    if (
        isinstance(raw, list)
        and raw
        and all(isinstance(item, dict) and isinstance(item.get("content"), str) for item in raw)
    ):
        return "\n\n".join(item["content"] for item in raw)
    findings.error(where, f"must be a prompt or a list of {{role, content}}, not {describe(raw)}")
    return None


def prompted_by(
    graders: tuple[EvaluatorConfig, ...],
    rubric_prompt: str | None,
    variables: Mapping[str, Any],
    path: DocumentPath,
    findings: Findings,
) -> tuple[EvaluatorConfig, ...]:
    """The test's ``llm-rubric`` graders with ``rubric_prompt`` as their judge prompt."""
    if rubric_prompt is None:
        return graders
    prompted: list[EvaluatorConfig] = []
    for grader in graders:
        own = grader.prompt or grader.prompt_path or grader.prompt_program
        if grader.type == "llm_judge" and not own:
            rubric = "\n".join(item.description for item in grader.rubrics)
            scope = {**variables, **JUDGE_NAMES, "rubric": rubric, "value": rubric}
            scope["rubrics"] = rubric  # AgentV's July name for it
            text = Renderer(scope, findings, "empty").text(rubric_prompt, path)
            grader = grader.model_copy(update={"prompt": text})
        elif grader.type != "llm_judge" and grader_family(grader) == "model":
            findings.error(
                path,
                f"rubricPrompt with grader {grader.name!r} ({grader.type}) is not supported: "
                "promptfoo uses it in place of that grader's own prompt, which is this "
                "service's here",
            )
        prompted.append(grader)
    return tuple(prompted)


def grader_family(grader: EvaluatorConfig) -> str | None:
    """The catalog family of a grader's type (``model``, ``deterministic``...)."""
    entry, _ = find_type(grader.type)
    return entry.family if entry is not None else None
