"""What every test of the prompts/providers/vars layout inherits, and a test's ``options``.

``defaultTest`` gives variables (the suite's ``vars`` under them), graders (appended to each
test's), a pass mark, metadata and ``options``; it may be a file. Of ``options`` (the
default's or a test's own) the grading ``provider`` is read: the judge target of model
graders that name none (``{text, embedding}`` reads ``text``); its other keys are refused
by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.errors import DocumentError
from app.evaluators.catalog import find_type
from app.evaluators.config import EvaluatorConfig
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick
from app.suites.documents.parsing import parse_yaml
from app.suites.files.sources import Sources, strip_file_prefix
from app.suites.graders.lists import provider_name
from app.suites.prompts_vars.embedding import options_embedding
from app.suites.reading import refuse
from app.suites.tool_use import ToolUse

DEFAULT_TEST_KEYS = ("defaultTest", "default_test")
DEFAULT_TEST_READ = frozenset({"vars", "assert", "threshold", "metadata", "options"})
OPTIONS_REFUSED = {
    "transform": "transforming the output before the asserts is not supported yet",
    "transformVars": "transforming the variables is not supported yet",
    "rubricPrompt": "a grading prompt of the test's own is not supported yet: write it in "
    "each llm-rubric's 'prompt'",
    "storeOutputAs": "storing an output for later tests is not supported yet",
}


@dataclass
class DefaultTest:
    """What every test inherits: variables, graders (appended), pass mark, metadata."""

    path: DocumentPath = ()
    variables: dict[str, Any] = field(default_factory=dict)
    graders: Any = None
    threshold: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tool_use: ToolUse | None = None
    judge: str | None = None
    """The judge target ``options.provider`` names for model graders without their own."""
    embedding: str | None = None
    """The embeddings target ``options.provider.embedding`` names (``similar`` graders)."""
    texts: Mapping[str, str] = field(default_factory=dict)
    suite_graders: Any = None
    """AgentV's top-level ``assert``: every test's, unless it skips defaults."""


def default_test(document: Mapping[str, Any], sources: Sources, findings: Findings) -> DefaultTest:
    """The suite's ``defaultTest`` (inline or a file) over its ``vars``; problems recorded."""
    suite_vars = document.get("vars") or {}
    if not isinstance(suite_vars, dict):
        findings.error(("vars",), f"must be a mapping of variables, not {describe(suite_vars)}")
        suite_vars = {}
    key, raw = pick(document, DEFAULT_TEST_KEYS, (), findings)
    if raw is MISSING or raw is None:
        return DefaultTest(variables=dict(suite_vars))
    if isinstance(raw, str):  # a defaultTest file (YAML or JSON), read with the sources
        try:
            raw = parse_yaml(sources.texts.get(strip_file_prefix(raw), "{}"))
        except DocumentError as exc:
            findings.error((key,), f"file {raw!r}: {exc.detail}")
            return DefaultTest()
    if not isinstance(raw, dict):
        findings.error(
            (key,), f"must be a mapping (vars, assert, threshold...), not {describe(raw)}"
        )
        return DefaultTest()
    for name in raw:
        if name not in DEFAULT_TEST_READ:
            refuse(
                findings,
                (key, name),
                f"'{key}.{name}'",
                "only vars, assert, threshold, metadata and options are read",
            )
    own_vars = raw.get("vars") or {}
    if not isinstance(own_vars, dict):
        findings.error((key, "vars"), f"must be a mapping of variables, not {describe(own_vars)}")
        own_vars = {}
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        findings.error((key, "metadata"), f"must be a mapping, not {describe(metadata)}")
        metadata = {}
    return DefaultTest(
        path=(key,),
        variables={**suite_vars, **own_vars},
        graders=raw.get("assert"),
        threshold=raw.get("threshold"),
        metadata=metadata,
        judge=options_judge(raw.get("options"), (key, "options"), findings),
        embedding=options_embedding(raw.get("options"), (key, "options"), findings),
    )


def options_judge(raw: Any, path: DocumentPath, findings: Findings) -> str | None:
    """The judge target of ``options`` (its ``provider``); its other keys refused by name."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        findings.error(path, f"must be a mapping (provider...), not {describe(raw)}")
        return None
    for key in raw:
        if key != "provider":
            why = OPTIONS_REFUSED.get(key, "only 'provider' (the grading judge) is read")
            refuse(findings, (*path, key), f"'{key}' in options", why)
    if "provider" not in raw:
        return None
    name = provider_name(raw["provider"])
    if name is None and not (isinstance(raw["provider"], dict) and "embedding" in raw["provider"]):
        findings.error(
            (*path, "provider"),
            f"must name a judge target (a string or {{id}}), not {describe(raw['provider'])}",
        )
    return name


def judged_by(
    graders: tuple[EvaluatorConfig, ...], judge: str | None
) -> tuple[EvaluatorConfig, ...]:
    """Model graders without a judge target of their own get the test's (``options``)."""
    if judge is None:
        return graders
    return tuple(
        grader.model_copy(update={"target": judge})
        if grader.target is None and _family(grader) == "model"
        else grader
        for grader in graders
    )


def _family(grader: EvaluatorConfig) -> str | None:
    entry, _ = find_type(grader.type)
    return entry.family if entry is not None else None
