"""What every test of the prompts/providers/vars layout inherits, and a test's ``options``.

``defaultTest`` gives variables (the suite's ``vars`` under them), graders (appended to each
test's), a pass mark, metadata and ``options``; it may be a file. Of ``options`` (the
default's or a test's own) the grading ``provider`` is read: the judge target of model
graders that name none (``{text, embedding}`` reads ``text``); and ``transform``, the output
transform every grader of the test applies first (``evaluators.transforms``); its other keys
are refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.errors import DocumentError
from app.evaluators.config import EvaluatorConfig
from app.suites.agentv.layout import evaluate_options
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, pick
from app.suites.documents.parsing import parse_yaml
from app.suites.files.sources import Sources, strip_file_prefix
from app.suites.graders.lists import provider_name, read_transform
from app.suites.prompts_vars.embedding import options_embedding
from app.suites.prompts_vars.provider_config import grading_settings
from app.suites.prompts_vars.rubric_prompt import grader_family, read_rubric_prompt
from app.suites.prompts_vars.scoring import KEY as SCORING
from app.suites.prompts_vars.scoring import read_scoring_function
from app.suites.prompts_vars.sequential import store_name
from app.suites.prompts_vars.test_providers import ProviderName
from app.suites.prompts_vars.variables import VarFiles, loaded_variables, read_transform_vars
from app.suites.reading import refuse
from app.suites.tool_use import ToolUse

DEFAULT_TEST_KEYS = ("defaultTest", "default_test")
DEFAULT_TEST_READ = frozenset(
    {"vars", "assert", "threshold", "metadata", "options", "assertScoringFunction"}
)
OPTIONS_REFUSED: dict[str, str] = {}


OPTIONS_READ = frozenset(
    {"provider", "transform", "rubricPrompt", "rubric_prompt", "transformVars"}
    | {"storeOutputAs"}  # the sequential module's
)
OPTIONS_UNREAD_BY_PROMPTFOO = {
    "providers": "promptfoo 0.123.1 does not read it either (grading providers are "
    "'options.provider': a target, or {text, embedding}); the grading defaults apply",
    "delay": "promptfoo 0.123.1 does not wait for a test's options.delay either (measured: "
    "only its command line's --delay and evaluateOptions.delay wait)",
}
"""Keys promptfoo's own examples write that promptfoo accepts and never reads: warned about."""


@dataclass(frozen=True)
class Judge:
    """The grading ``provider`` of ``options``: its target, and its config's settings."""

    target: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class DefaultTest:
    """What every test inherits: variables, graders (appended), pass mark, metadata."""

    path: DocumentPath = ()
    variables: dict[str, Any] = field(default_factory=dict)
    graders: Any = None
    threshold: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    tool_use: ToolUse | None = None
    judge: Judge | None = None
    """The judge ``options.provider`` names for model graders without their own."""
    embedding: str | None = None
    """The embeddings target ``options.provider.embedding`` names (``similar`` graders)."""
    transform: str | None = None
    """``options.transform``: the output transform of every test's graders (a test's own
    ``options.transform`` replaces it)."""
    rubric_prompt: str | None = None
    """``options.rubricPrompt``: the judge prompt of every test's ``llm-rubric`` graders."""
    transform_vars: str | None = None
    """``options.transformVars``: makes every test's variables (a test's own replaces it)."""
    texts: Mapping[str, str] = field(default_factory=dict)
    globs: Mapping[str, list[str]] = field(default_factory=dict)
    missing_vars: frozenset[str] = frozenset()
    """``file://`` variable files found nowhere (``Sources.missing_vars``)."""
    providers: list[ProviderName] = field(default_factory=list)
    """The suite's providers, which a test's own ``providers`` names."""
    suite_graders: Any = None
    """AgentV's top-level ``assert``: every test's, unless it skips defaults."""
    scoring: str | None = None
    """``assertScoringFunction``: the program making each test's result (a test's own wins)."""
    store_as: str | None = None
    """``options.storeOutputAs``: every test's output is stored as this variable."""
    sequential: bool = False
    """The suite's tests run in order (``sequential``): each case carries its step."""


def default_test(document: Mapping[str, Any], sources: Sources, findings: Findings) -> DefaultTest:
    """The suite's ``defaultTest`` (inline or a file) over its ``vars``; problems recorded."""
    suite_vars = document.get("vars") or {}
    if not isinstance(suite_vars, dict):
        findings.error(("vars",), f"must be a mapping of variables, not {describe(suite_vars)}")
        suite_vars = {}
    files = VarFiles(sources.texts, sources.globs)
    suite_vars = loaded_variables(suite_vars, ("vars",), files, findings)
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
    own_vars = loaded_variables(own_vars, (key, "vars"), files, findings)
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
        transform=options_transform(raw.get("options"), (key, "options"), findings),
        rubric_prompt=read_rubric_prompt(
            raw.get("options"), (key, "options"), findings, sources.texts
        ),
        transform_vars=read_transform_vars(raw.get("options"), (key, "options"), findings),
        store_as=store_name(raw.get("options"), (key, "options"), findings),
        scoring=(
            read_scoring_function(raw[SCORING], (key, SCORING), findings)
            if SCORING in raw
            else None
        ),
    )


def options_judge(raw: Any, path: DocumentPath, findings: Findings) -> Judge | None:
    """The judge of ``options`` (its ``provider``); keys not read refused by name."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        findings.error(path, f"must be a mapping (provider...), not {describe(raw)}")
        return None
    for key in raw:
        if key in OPTIONS_UNREAD_BY_PROMPTFOO:
            findings.warn((*path, key), f"not read: {OPTIONS_UNREAD_BY_PROMPTFOO[key]}")
        elif key not in OPTIONS_READ:
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
    if name is None:
        return None
    return Judge(name, grading_settings(raw["provider"], (*path, "provider"), findings))


def options_transform(raw: Any, path: DocumentPath, findings: Findings) -> str | None:
    """``options.transform`` (checked as an assert's ``transform``), or None."""
    if not isinstance(raw, dict) or "transform" not in raw:
        return None
    transforms = read_transform(raw["transform"], (*path, "transform"), findings)
    return transforms[0] if transforms else None


def transformed_by(
    graders: tuple[EvaluatorConfig, ...], transform: str | None, variables: Mapping[str, Any]
) -> tuple[EvaluatorConfig, ...]:
    """Graders with the test's output transform first (before each one's own).

    Its script sees the test's ``variables``, as an assert's does.
    """
    if transform is None:
        return graders
    return tuple(
        grader.model_copy(
            update={"transforms": (transform, *grader.transforms), "test_vars": dict(variables)}
        )
        for grader in graders
    )


def judged_by(
    graders: tuple[EvaluatorConfig, ...], judge: Judge | None
) -> tuple[EvaluatorConfig, ...]:
    """Model graders without a judge target of their own get the test's (``options``).

    With it, the settings of its config (their judge calls' options).
    """
    if judge is None:
        return graders
    settings = {"judge_options": dict(judge.options)} if judge.options else {}
    return tuple(
        grader.model_copy(update={"target": judge.target, **settings})
        if grader.target is None and grader_family(grader) == "model"
        else grader
        for grader in graders
    )


PROMPTFOO_EVALUATE_OPTIONS = {"maxConcurrency": "max_concurrency"}
"""promptfoo's ``evaluateOptions`` this service reads, as AgentV's ``evaluate_options``."""


def promptfoo_options(raw: Any, findings: Findings) -> dict[str, Any]:
    """Promptfoo's ``evaluateOptions``: ``maxConcurrency`` and ``repeat``; others refused."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        findings.error(("evaluateOptions",), f"must be a mapping, not {describe(raw)}")
        return {}
    for key in raw:
        if key not in PROMPTFOO_EVALUATE_OPTIONS:
            why = "only maxConcurrency is read (repetitions, delays, caching, display are not)"
            refuse(findings, ("evaluateOptions", key), f"'evaluateOptions.{key}'", why)
    known = {
        PROMPTFOO_EVALUATE_OPTIONS[key]: raw[key]
        for key in raw
        if key in PROMPTFOO_EVALUATE_OPTIONS
    }
    return evaluate_options(known, findings)
