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

import json
from collections.abc import Mapping
from typing import Any

from app.errors import DocumentError
from app.evaluators.catalog import find_type
from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick
from app.suites.documents.parsing import parse_core_yaml
from app.suites.files.sources import FILE_PREFIX, strip_file_prefix
from app.suites.graders.context import JUDGE_NAMES
from app.suites.reading import Renderer

RUBRIC_PROMPT_KEYS = ("rubricPrompt", "rubric_prompt")
"""promptfoo's spelling, and AgentV's July one (its README quickstart's ``default_test``)."""


def read_rubric_prompt(
    options: Any, path: DocumentPath, findings: Findings, texts: Mapping[str, str]
) -> str | None:
    """``options.rubricPrompt`` (AgentV's July ``rubric_prompt``; or an assert's) as a text.

    None when there is none (problems recorded). A ``file://`` one is the file's text, or
    its messages for a YAML or JSON file.
    """
    if not isinstance(options, dict):
        return None
    key, raw = pick(options, RUBRIC_PROMPT_KEYS, path, findings)
    if raw is MISSING or raw is None:
        return None
    where = (*path, key)
    if isinstance(raw, str) and raw.strip().startswith(FILE_PREFIX):
        name = strip_file_prefix(raw)
        if name not in texts:
            return None  # not read: the loader said why, at this place
        raw = _file_prompt(name, texts[name], where, findings)
        if raw is None:
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


def _file_prompt(name: str, text: str, where: DocumentPath, findings: Findings) -> Any:
    """A rubricPrompt file: messages (YAML, JSON) or text."""
    if not name.lower().endswith((".yaml", ".yml", ".json")):
        return text
    try:
        return json.loads(text) if name.lower().endswith(".json") else parse_core_yaml(text)[1]
    except (ValueError, DocumentError) as exc:
        findings.error(where, f"file {name!r} is not a prompt or a list of messages: {exc}")
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
    return tuple(
        prompted_one(grader, rubric_prompt, variables, path, findings) for grader in graders
    )


def prompted_one(
    grader: EvaluatorConfig,
    rubric_prompt: str,
    variables: Mapping[str, Any],
    path: DocumentPath,
    findings: Findings,
) -> EvaluatorConfig:
    """An ``llm-rubric`` grader with ``rubric_prompt`` as its judge prompt.

    One that has its own prompt keeps it; another model grader is refused by name.
    """
    own = grader.prompt or grader.prompt_path or grader.prompt_program
    if grader.type == "llm_judge" and not own:
        rubric = "\n".join(item.description for item in grader.rubrics)
        scope = {**variables, **JUDGE_NAMES, "rubric": rubric, "value": rubric}
        scope["rubrics"] = rubric  # AgentV's July name for it
        text = Renderer(scope, findings, "empty").text(rubric_prompt, path)
        return grader.model_copy(update={"prompt": text})
    if grader.type != "llm_judge" and grader_family(grader) == "model":
        findings.error(
            path,
            f"rubricPrompt with grader {grader.name!r} ({grader.type}) is not supported: "
            "promptfoo uses it in place of that grader's own prompt, which is this "
            "service's here",
        )
    return grader


def grader_family(grader: EvaluatorConfig) -> str | None:
    """The catalog family of a grader's type (``model``, ``deterministic``...)."""
    entry, _ = find_type(grader.type)
    return entry.family if entry is not None else None
