"""AgentV eval files, late 2025 (``evalcases``) and 2026 (``tests``), into an ``EvalSuite``.

One reader serves both generations because real files mix them (a 2026 ``tests`` list with
2025 ``evaluators``); the dialect reported is the generation of the case list. 2026 adds
``name``/``tags``/``metadata`` (kept as metadata), suite-level ``assertions`` (appended
to every case's graders), suite ``input``/``input_files`` (prepended to every case),
``vars`` and case sources (``tests: path``, ``file://`` items, ``imports``); its
``${{ VAR }}`` references are filled before (``environment``). ``workspace`` is read by
``workspaces``. Constructs of features not built yet are refused, one error each, naming
them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import partial
from typing import Any

from app.suites.agentv.case import SuiteDefaults, check_suite_lists, read_case
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import (
    MISSING,
    Findings,
    describe,
    pick,
    text_field,
    warn_unknown_keys,
)
from app.suites.files.sources import Sources
from app.suites.graders.preprocessors import read_preprocessors, with_suite_preprocessors
from app.suites.model import EvalCase, EvalSuite
from app.suites.reading import (
    CaseOrigin,
    Dialect,
    SuiteCheck,
    dataset_name,
    duplicate_id_error,
    guideline_patterns,
    metadata_of,
    read_budget,
    read_trials,
    refuse,
    thresholds,
)
from app.suites.target_lists import read_target_list
from app.suites.tool_use import TOOL_USE_KEYS, read_tool_use
from app.suites.workspaces.workspace import read_workspace

SCHEMA_NAME = "agentv-eval-v2"
CASE_LIST_KEYS = ("evalcases", "eval_cases", "tests")
METADATA_KEYS = frozenset({"name", "tags", "version", "metadata", "governance"})
SUITE_KEYS = frozenset(
    {"$schema", "description", "dataset", "target", "targets", "evaluator", "execution"}
    | {"thresholds"}
    | {"repeat", "trials"}
    | {"guideline_patterns", "assertions", "assert", "input", "input_files", "vars", "imports"}
    | {"workspace", "budget_usd", "system_prompt", "preprocessors", "environment", "extensions"}
    | {*CASE_LIST_KEYS, *METADATA_KEYS}
    | TOOL_USE_KEYS
)
SUITE_REFUSED = {
    "docker": "it needs a Docker workspace, which this service does not set up",
    "experiment": "experiment settings are not supported yet",
    "prompts": "it belongs to the prompts/providers/vars layout, not read with an evalcases list",
    "providers": "it belongs to the prompts/providers/vars layout: name the target with 'target'",
    "defaultTest": "it belongs to the prompts/providers/vars layout, not read with evalcases",
    "default_test": "it belongs to the prompts/providers/vars layout, not read with evalcases",
}


def dialect_of(document: Mapping[str, Any]) -> Dialect:
    """``agentv-2025`` for an ``evalcases`` list, else ``agentv-2026``."""
    return "agentv-2025" if "evalcases" in document or "eval_cases" in document else "agentv-2026"


def read_agentv(document: Mapping[str, Any], sources: Sources, findings: Findings) -> SuiteCheck:
    """Read an AgentV suite; every problem goes into ``findings``."""
    dialect = dialect_of(document)
    templates = dialect == "agentv-2026"
    marker = document.get("$schema", MISSING)
    if marker is not MISSING and marker != SCHEMA_NAME:
        findings.warn(("$schema",), f"expected {SCHEMA_NAME!r}, found {marker!r}; read anyway")
    warn_unknown_keys(document, SUITE_KEYS | frozenset(SUITE_REFUSED), (), findings)
    for key, why in SUITE_REFUSED.items():
        if key in document:
            refuse(findings, (key,), f"'{key}'", why)
    fields = _suite_fields(document, sources, findings)
    defaults = _defaults(document, fields.get("target"), templates, findings)
    defaults.texts, defaults.sibling_prompt = sources.texts, sources.sibling_prompt
    defaults.tool_use = read_tool_use(document, (), findings, sources.texts)
    check_suite_lists(defaults, findings)
    cases, origins = _cases(document, sources, defaults, findings)
    preprocessors = document.get("preprocessors")
    if preprocessors is not None:
        read = read_preprocessors(preprocessors, ("preprocessors",), findings) or ()
        apply = partial(with_suite_preprocessors, suite=read)
        cases = [case.with_graders(apply) for case in cases]
    if findings.errors:
        return SuiteCheck(suite=None, dialect=dialect)
    if len(fields["targets"]) == 1:  # one target listed: the suite's target
        fields["target"] = fields["target"] or fields["targets"][0]
        fields["targets"] = ()
    suite = EvalSuite(cases=tuple(cases), **fields)
    return SuiteCheck(suite=suite, dialect=dialect, origins=origins)


def _suite_fields(
    document: Mapping[str, Any], sources: Sources, findings: Findings
) -> dict[str, Any]:
    name = text_field(document, ("name",), (), findings)
    fields: dict[str, Any] = {
        "description": text_field(document, ("description",), (), findings),
        "dataset": dataset_name(
            text_field(document, ("dataset",), (), findings), name, sources.source_name
        ),
        "metadata": metadata_of(document, METADATA_KEYS),
        "target": _target(document, findings),
        "targets": read_target_list(document, findings),
        "workspace": read_workspace(document, sources.texts, findings),
        "system_prompt": text_field(document, ("system_prompt",), (), findings),
    }
    if document.get("evaluator") not in (None, "llm_judge"):
        findings.error(
            ("evaluator",),
            f"evaluator kind {document['evaluator']!r} is not supported yet "
            "(only llm_judge runs here)",
        )
    patterns = guideline_patterns(document, findings)
    if patterns is not None or sources.config_patterns is not None:
        fields["guideline_patterns"] = patterns if patterns is not None else sources.config_patterns
    key = "repeat" if "repeat" in document else "trials"
    trials = read_trials(document.get(key), (key,), findings)
    if trials is not None:
        fields["trials"] = trials
    budget = read_budget(document.get("budget_usd"), ("budget_usd",), findings)
    if budget is not None:
        fields["budget_usd"] = budget
    verdicts = thresholds(document.get("thresholds"), ("thresholds",), findings)
    if verdicts is not None:
        fields["thresholds"] = verdicts
    return fields


def _target(document: Mapping[str, Any], findings: Findings) -> str | None:
    execution = document.get("execution")
    if execution is not None and not isinstance(execution, dict):
        findings.error(("execution",), f"must be a mapping, not {describe(execution)}")
        execution = None
    target: str | None = None
    if isinstance(execution, dict):
        known = frozenset({"target", "evaluators", "threshold", "skip_defaults"})
        warn_unknown_keys(execution, known, ("execution",), findings)
        target = text_field(execution, ("target",), ("execution",), findings)
    raw_target = document.get("target")
    if isinstance(raw_target, dict):
        refuse(
            findings,
            ("target",),
            "an inline target definition",
            "name a target of the service's targets file",
        )
        return target
    return target or text_field(document, ("target",), (), findings)


def _defaults(
    document: Mapping[str, Any], target: str | None, templates: bool, findings: Findings
) -> SuiteDefaults:
    defaults = SuiteDefaults(templates=templates, target=target)
    execution = document.get("execution")
    if isinstance(execution, dict) and execution.get("evaluators") is not None:
        defaults.fallback = (execution["evaluators"], ("execution", "evaluators"))
    key, appended = pick(document, ("assertions", "assert"), (), findings)
    if appended is not MISSING and appended is not None:
        defaults.appended = (appended, (key,))
    if document.get("input") is not None:
        defaults.input = (document["input"], ("input",))
    if document.get("input_files") is not None:
        defaults.input_files = (document["input_files"], ("input_files",))
    variables = document.get("vars")
    if variables is not None and not isinstance(variables, dict):
        findings.error(("vars",), f"must be a mapping of variables, not {describe(variables)}")
    elif variables is not None:
        defaults.variables = dict(variables)
    return defaults


def _cases(
    document: Mapping[str, Any], sources: Sources, defaults: SuiteDefaults, findings: Findings
) -> tuple[list[EvalCase], dict[str, CaseOrigin]]:
    cases: list[EvalCase] = []
    origins: dict[str, CaseOrigin] = {}
    first_seen: dict[str, DocumentPath] = {}
    raw_cases = list(_raw_cases(document, sources, findings))
    for path, raw in raw_cases:
        case_id = raw.get("id") if isinstance(raw, dict) else None
        if isinstance(case_id, str) and case_id in first_seen:
            findings.error((*path, "id"), duplicate_id_error(case_id, first_seen[case_id]))
            continue
        if isinstance(case_id, str):
            first_seen[case_id] = path
        read = read_case(raw, path, defaults, findings)
        if read is not None:
            cases.append(read[0])
            origins[read[0].id] = read[1]
    if not raw_cases and not findings.errors:
        findings.warn((), "the suite has no cases")
    return cases, origins


def _raw_cases(
    document: Mapping[str, Any], sources: Sources, findings: Findings
) -> Iterator[tuple[DocumentPath, Any]]:
    """Every case with its location: inline items, then cases read from files."""
    key, listed = pick(document, CASE_LIST_KEYS, (), findings)
    imports = document.get("imports")
    if listed is MISSING and imports is None:
        findings.error((key,), "is required: the list of eval cases (or 'eval_cases', 'tests')")
        return
    if isinstance(listed, str):
        yield from sources.cases.get((key,), [])
    elif isinstance(listed, list):
        for index, item in enumerate(listed):
            if isinstance(item, str) and (key, index) in sources.cases:
                yield from sources.cases[(key, index)]
            else:
                yield (key, index), item
    elif listed is not MISSING:
        findings.error((key,), f"must be a list of eval cases or a path, not {describe(listed)}")
    if imports is not None:
        yield from _imported(imports, sources, findings)


def _imported(
    imports: Any, sources: Sources, findings: Findings
) -> Iterator[tuple[DocumentPath, Any]]:
    tests = imports.get("tests") if isinstance(imports, dict) else None
    if not isinstance(tests, list):
        findings.error(("imports",), "must be {tests: [{path: ...}, ...]}")
        return
    for index in range(len(tests)):
        yield from sources.cases.get(("imports", "tests", index), [])
