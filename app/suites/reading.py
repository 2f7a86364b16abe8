"""What every dialect reader produces, and the suite-level fields the dialects share.

A reader turns one parsed document into an ``EvalSuite`` (or errors), and records for each
case where it sits and which files it references, so files are read and problems located
without walking the document again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import ValidationError

from app.evaluators.verdicts import Thresholds
from app.suites.documents.document import DocumentPath, render_path
from app.suites.documents.findings import (
    MISSING,
    Findings,
    describe,
    number_field,
    warn_unknown_keys,
)
from app.suites.model import EvalSuite, Trials
from app.suites.templates import (
    TemplateProblem,
    TemplateSyntaxProblem,
    UndefinedVariable,
    namespace,
    render,
)

Dialect = Literal["agentv-2025", "agentv-2026", "prompts-providers-vars", "unknown"]
References = dict[str, list[DocumentPath]]
"""Referenced file paths (as written), each with every place that names it."""


def add_reference(references: References, path: str, where: DocumentPath) -> None:
    """Record that ``where`` references file ``path``."""
    references.setdefault(path, []).append(where)


@dataclass
class CaseOrigin:
    """Where a case came from and what it references.

    Attributes:
        path: The case's location (a document path; cases read from other files carry the
            file's name as a path part: ``tests[0].cases/more.yaml[2]``).
        files: Files its messages reference (input and expected).
        prompts: Judge prompt files its graders reference.
        variables: Its template variables; None when its fields are not templates.
    """

    path: DocumentPath
    files: References = field(default_factory=dict)
    prompts: References = field(default_factory=dict)
    variables: dict[str, Any] | None = None


@dataclass
class SuiteCheck:
    """The outcome of reading a suite document.

    Problems go into the reader's ``Findings``.

    Attributes:
        suite: The typed suite, or None when there are errors.
        dialect: Which eval file dialect the document was read as.
        origins: Each case's origin, by case id.
    """

    suite: EvalSuite | None
    dialect: Dialect = "unknown"
    origins: dict[str, CaseOrigin] = field(default_factory=dict)


Undefined = Literal["error", "empty", "keep"]
"""What an undefined template variable does (``Renderer``)."""


class Renderer:
    """Renders a case's template fields with its variables, reporting problems by path."""

    def __init__(
        self,
        variables: Mapping[str, Any] | None,
        findings: Findings,
        undefined: Undefined = "error",
    ) -> None:
        """``variables`` None: fields are not templates and come back as written.

        ``undefined``: what an undefined variable does: an ``error``, render ``empty``
        (promptfoo's prompts and assert values), or ``keep`` the field as written
        (promptfoo's variables); the last two are warned about.
        """
        self.variables = dict(variables) if variables is not None else None
        self._scope = namespace(variables) if variables is not None else None
        self._findings = findings
        self.undefined = undefined

    def text(self, value: str, path: DocumentPath) -> str:
        """``value`` rendered (an error at ``path`` leaves it as written)."""
        if self._scope is None:
            return value
        try:
            return render(value, self._scope)
        except UndefinedVariable as exc:
            if self.undefined == "error":
                self._findings.error(path, str(exc))
                return value
            keep = self.undefined == "keep"
            if keep:
                self._findings.warn(path, f"{exc}: kept as written, as promptfoo keeps it")
            else:
                self._findings.warn(path, f"{exc}: rendered empty, as promptfoo renders it")
            try:
                return render(value, self._scope, lenient=True, kept=keep)
            except TemplateProblem as problem:
                if not keep:  # a variable that cannot render so stays as written
                    self._findings.error(path, str(problem))
                return value
        except TemplateSyntaxProblem as exc:
            if self.undefined != "keep":
                self._findings.error(path, str(exc))
                return value
            # promptfoo's variables: one that does not parse as a template is its text
            self._findings.warn(path, f"{exc}: kept as written, as promptfoo keeps it")
            return value
        except TemplateProblem as exc:
            self._findings.error(path, str(exc))
            return value

    def value(self, value: Any, path: DocumentPath) -> Any:
        """Every string inside ``value`` (lists, mappings) rendered."""
        if isinstance(value, str):
            return self.text(value, path)
        if isinstance(value, list):
            return [self.value(item, (*path, index)) for index, item in enumerate(value)]
        if isinstance(value, dict):
            return {key: self.value(item, (*path, str(key))) for key, item in value.items()}
        return value


def case_variables(
    inherited: Mapping[str, Any] | None,
    raw: Mapping[str, Any],
    path: DocumentPath,
    findings: Findings,
    *,
    undefined: Undefined = "error",
) -> dict[str, Any] | None:
    """A case's variables: the inherited ones with its own ``vars`` over them.

    Variables may use other variables (``{{ vars.person.name }}``): each is rendered once, in
    order. None when there are neither (the case's fields are then not templates).
    """
    own = raw.get("vars")
    if own is not None and not isinstance(own, dict):
        findings.error((*path, "vars"), f"must be a mapping of variables, not {describe(own)}")
        own = None
    if own is None and inherited is None:
        return None
    merged = {**(inherited or {}), **(own or {})}
    render = Renderer(merged, findings, undefined)
    return {key: render.value(value, (*path, "vars", key)) for key, value in merged.items()}


def guideline_patterns(document: Mapping[str, Any], findings: Findings) -> tuple[str, ...] | None:
    """The suite's own ``guideline_patterns`` (None when it gives none)."""
    patterns = document.get("guideline_patterns")
    if patterns is None:
        return None
    if not isinstance(patterns, list) or not all(
        isinstance(pattern, str) and pattern.strip() for pattern in patterns
    ):
        findings.error(("guideline_patterns",), "must be a list of glob patterns (strings)")
        return None
    return tuple(patterns)


def thresholds(raw: Any, path: DocumentPath, findings: Findings) -> Thresholds | None:
    """``{pass, borderline}`` verdict thresholds, checked (None when absent or wrong)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        findings.error(path, "must be a mapping: {pass: 0.8, borderline: 0.6}")
        return None
    warn_unknown_keys(raw, frozenset({"pass", "borderline"}), path, findings)
    default = Thresholds()
    passing = number_field(raw, "pass", path, findings)
    borderline = number_field(raw, "borderline", path, findings)
    passing = default.pass_ if passing is None else passing
    borderline = default.borderline if borderline is None else borderline
    if borderline > passing:
        findings.error((*path, "borderline"), "must not be above the pass threshold")
        return None
    return Thresholds.model_validate({"pass": passing, "borderline": borderline})


def pass_threshold(raw: Any, path: DocumentPath, findings: Findings) -> Thresholds | None:
    """A single pass mark (a test's ``threshold``): borderline stays at or below it."""
    if raw is None or raw is MISSING:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        findings.error(path, f"must be a number from 0 to 1, not {describe(raw)}")
        return None
    borderline = min(Thresholds().borderline, float(raw))
    return Thresholds.model_validate({"pass": float(raw), "borderline": borderline})


TRIAL_KEYS = frozenset({"count", "strategy", "early_exit"})


def read_trials(raw: Any, path: DocumentPath, findings: Findings) -> Trials | None:
    """AgentV's ``repeat`` (or ``trials``): a count, or ``{count, strategy, early_exit}``."""
    if raw is None or raw is MISSING:
        return None
    fields = {"count": raw} if isinstance(raw, int) and not isinstance(raw, bool) else raw
    if not isinstance(fields, dict):
        findings.error(
            path, f"must be a count or {{count, strategy, early_exit}}, not {describe(raw)}"
        )
        return None
    warn_unknown_keys(fields, TRIAL_KEYS, path, findings)
    try:
        return Trials.model_validate({k: v for k, v in fields.items() if k in TRIAL_KEYS})
    except ValidationError as exc:
        findings.validation_error(path, exc)
        return None


def read_budget(value: Any, path: DocumentPath, findings: Findings) -> float | None:
    """A ``budget_usd``: a positive number of US dollars (None when not given or wrong)."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    findings.error(path, f"must be a positive number of US dollars, not {value!r}")
    return None


def dataset_name(explicit: str | None, name: str | None, source_name: str | None) -> str:
    """``dataset``, else the suite's ``name``, else the suite file's base name, else default."""
    if explicit:
        return explicit
    if name:
        return name
    if source_name:
        return PurePosixPath(source_name.replace("\\", "/")).stem or "default"
    return "default"


def metadata_of(mapping: Mapping[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    """The descriptive keys of ``mapping`` (tags, metadata, version...), as written."""
    return {key: mapping[key] for key in mapping if key in keys}


def duplicate_id_error(case_id: str, first: DocumentPath) -> str:
    """The message for a case id used twice."""
    return f"duplicate case id {case_id!r} (first used at {render_path(first)})"


def refuse(findings: Findings, path: DocumentPath, construct: str, why: str) -> None:
    """Record that a construct of the file is not supported, saying why."""
    findings.error(path, f"{construct} is not supported: {why}")
