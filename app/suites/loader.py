"""Load a suite for a request: parse, check, resolve every file, format every case.

``check_suite`` reports every problem (``POST /validate`` answers with it);
``load_suite`` makes the very same checks and raises ``InvalidRequest`` listing them all
(``/evaluate`` and ``/runs``). Neither calls a provider.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.documents import MAX_DEPTH, DocumentError
from app.errors import FieldError, InvalidRequest
from app.formatting import FormatOptions, FormattedPrompt, format_prompt
from app.suites.document import DocumentPath, SuiteDocument, parse_suite_text
from app.suites.evaluators import BLIND_JUDGE_WARNING, shows_candidate_answer
from app.suites.files import FileSource, LoadedFiles
from app.suites.findings import Findings
from app.suites.model import EvalCase, EvalSuite
from app.suites.references import (
    case_references,
    evaluator_prompt_paths,
    fill_judge_prompts,
    role_marker_warnings,
)
from app.suites.validation import SuiteCheck, validate_suite

__all__ = [
    "CaseSummary",
    "LoadedSuite",
    "SuiteCheck",
    "SuiteDocument",
    "SuiteReport",
    "check_suite",
    "is_suite_path",
    "load_suite",
    "parse_suite_text",
    "suite_error",
    "validate_suite",
]

_SUITE_PATH = re.compile(r"[^\n{}]*\.(ya?ml|json)")


@dataclass(frozen=True)
class CaseSummary:
    """What ``/validate`` shows of one formatted case."""

    id: str
    role_markers: bool
    guideline_paths: tuple[str, ...]
    files: tuple[str, ...]


@dataclass
class SuiteReport:
    """Everything found while loading a suite.

    Attributes:
        suite: The suite, judge prompt files filled in; None when it has errors.
        errors: Every problem, each located by document path (and line, column for YAML).
        warnings: Things that run but deserve a look.
        cases: One summary per selected case, formatted in LM mode.
        files: Text of every referenced file, keyed by the path as the case wrote it.
        prompts: Each selected case formatted in LM mode, by case id.
    """

    suite: EvalSuite | None = None
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    cases: list[CaseSummary] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, FormattedPrompt] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        """Whether the suite can run as given."""
        return not self.errors and self.suite is not None


@dataclass(frozen=True)
class LoadedSuite:
    """A suite ready to run: the suite (with only the selected cases) and its files."""

    suite: EvalSuite
    files: dict[str, str]
    prompts: dict[str, FormattedPrompt]
    warnings: list[str]


def is_suite_path(suite: str) -> bool:
    """Whether a ``suite`` string names a suite file (one line ending ``.yaml``/``.json``)."""
    return _SUITE_PATH.fullmatch(suite.strip()) is not None and ": " not in suite


async def load_suite(
    suite: Mapping[str, Any] | str,
    *,
    file_source: FileSource,
    case_ids: Sequence[str] | None = None,
    allow_missing_files: bool = False,
    options: FormatOptions | None = None,
) -> LoadedSuite:
    """Load a suite for a run, refusing it when anything is wrong.

    Raises:
        InvalidRequest: Listing every problem ``check_suite`` finds.
    """
    report = await check_suite(
        suite,
        file_source=file_source,
        case_ids=case_ids,
        allow_missing_files=allow_missing_files,
        options=options,
    )
    if report.suite is None or report.errors:
        raise suite_error(report.errors)
    return LoadedSuite(
        suite=report.suite, files=report.files, prompts=report.prompts, warnings=report.warnings
    )


def suite_error(errors: Sequence[FieldError]) -> InvalidRequest:
    """An ``InvalidRequest`` listing every problem of a suite."""
    shown = [
        f"{error.path}: {error.message}" if error.path else error.message for error in errors[:5]
    ]
    more = f"; and {len(errors) - 5} more" if len(errors) > 5 else ""
    return InvalidRequest(
        "the suite is not valid: " + "; ".join(shown) + more,
        errors=list(errors),
        title="Suite is not valid",
    )


async def check_suite(
    suite: Mapping[str, Any] | str,
    *,
    file_source: FileSource,
    case_ids: Sequence[str] | None = None,
    allow_missing_files: bool = False,
    options: FormatOptions | None = None,
) -> SuiteReport:
    """Check a suite as ``/evaluate`` would, without calling any provider.

    Args:
        suite: The suite as an object, as YAML or JSON text, or as the path of a suite
            file inside a workspace root (``evals/review.yaml``).
        file_source: Resolves referenced files (inline ``files``, then workspace roots).
        case_ids: Only these cases (all when None); an unknown id is an error.
        allow_missing_files: Report files found nowhere as warnings instead of errors.
        options: Formatting options; the suite's ``guideline_patterns`` replace theirs.
    """
    try:
        document, file_source, source_dir = await _read(suite, file_source)
    except (DocumentError, InvalidRequest) as exc:
        return SuiteReport(errors=exc.errors or [FieldError(path="", message=exc.detail)])
    check = validate_suite(document.data, document.positions, source_name=document.source_name)
    report = SuiteReport(errors=check.errors, warnings=check.warnings)
    if check.suite is None:
        return report
    selected = _select(check, case_ids, report)
    if report.errors:
        return report
    findings = Findings(document.positions)
    files = await _load_files(document, check, selected, file_source, findings, allow_missing_files)
    base = options or FormatOptions()
    options = base.model_copy(update={"guideline_patterns": check.suite.guideline_patterns})
    for case in selected:
        _format_case(case, files, options, report, findings, check)
    report.errors.extend(findings.errors)
    report.warnings.extend(findings.warnings)
    if not report.errors:
        report.files = files
        suite_with_prompts = fill_judge_prompts(check.suite, selected, files)
        report.suite = suite_with_prompts.model_copy(update={"source_dir": source_dir})
    return report


async def _read(
    suite: Mapping[str, Any] | str, file_source: FileSource
) -> tuple[SuiteDocument, FileSource, str | None]:
    """The parsed document, the file source for its cases, and its folder (if read by path)."""
    if isinstance(suite, str):
        if is_suite_path(suite):
            suite_file = await file_source.open_suite(suite.strip())
            document = parse_suite_text(suite_file.text, source_name=suite_file.name)
            return document, file_source.for_suite(suite_file), str(suite_file.folder)
        return parse_suite_text(suite), file_source, None
    _check_depth(suite)
    return SuiteDocument(data=dict(suite)), file_source, None


def _check_depth(document: Any) -> None:
    """Refuse an object nested deeper than YAML documents may be (it came as JSON)."""
    level: list[Any] = [document]
    for _ in range(MAX_DEPTH):
        children: list[Any] = []
        for item in level:
            values = item.values() if isinstance(item, dict) else item
            children.extend(value for value in values if isinstance(value, dict | list))
        if not children:
            return
        level = children
    raise DocumentError(f"the suite is nested deeper than {MAX_DEPTH} levels")


def _select(
    check: SuiteCheck, case_ids: Sequence[str] | None, report: SuiteReport
) -> list[EvalCase]:
    assert check.suite is not None
    if case_ids is None:
        return list(check.suite.cases)
    by_id = {case.id: case for case in check.suite.cases}
    for index, case_id in enumerate(case_ids):
        if case_id not in by_id:
            report.errors.append(
                FieldError(path=f"case_ids[{index}]", message=f"no case has the id {case_id!r}")
            )
    return [by_id[case_id] for case_id in dict.fromkeys(case_ids) if case_id in by_id]


async def _load_files(
    document: SuiteDocument,
    check: SuiteCheck,
    selected: Sequence[EvalCase],
    file_source: FileSource,
    findings: Findings,
    allow_missing: bool,
) -> dict[str, str]:
    """Read every file the selected cases and their judges reference; locate each problem."""
    case_paths = [check.case_paths[case.id] for case in selected]
    prompt_paths = evaluator_prompt_paths(document.data, case_paths)
    locations: dict[str, list[DocumentPath]] = {}
    for refs in (*(case_references(document.data, path) for path in case_paths), prompt_paths):
        for path, places in refs.items():
            locations.setdefault(path, []).extend(places)
    loaded = await file_source.collect(list(locations))
    _report_file_problems(loaded, locations, findings, allow_missing)
    for path, places in prompt_paths.items():
        template = loaded.files.get(path)
        if template is not None and not shows_candidate_answer(template):
            for where in places:
                findings.warn(where, BLIND_JUDGE_WARNING)
    return loaded.files


def _report_file_problems(
    loaded: LoadedFiles,
    locations: Mapping[str, Sequence[DocumentPath]],
    findings: Findings,
    allow_missing: bool,
) -> None:
    """An error per refused file, and per missing one (a warning when allowed)."""
    for path, reason in loaded.refused.items():
        for where in locations[path]:
            findings.error(where, f"file {path!r} refused: {reason}")
    for path in loaded.missing:
        for where in locations[path]:
            if allow_missing:
                findings.warn(where, f"file not found: {path} (left out)")
            else:
                findings.error(
                    where,
                    f"file not found: {path} (send it in `files` or put it under a workspace root)",
                )


def _format_case(
    case: EvalCase,
    files: Mapping[str, str],
    options: FormatOptions,
    report: SuiteReport,
    findings: Findings,
    check: SuiteCheck,
) -> None:
    formatted = format_prompt(case.input_messages, files, options)
    report.prompts[case.id] = formatted
    report.cases.append(
        CaseSummary(
            id=case.id,
            role_markers=formatted.role_markers,
            guideline_paths=formatted.guideline_paths,
            files=formatted.file_paths,
        )
    )
    path = check.case_paths[case.id]
    if not formatted.question.strip():
        findings.warn(path, "the case has no visible input: the candidate gets an empty question")
    for message in role_marker_warnings(case.input_messages):
        findings.warn(path, message)
