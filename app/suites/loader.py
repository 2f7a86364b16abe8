"""Load a suite for a request: parse, read its dialect, resolve every file, format once.

``read_suite`` parses the document, reads the files it needs first (case files, prompt
files, ``.agentv/config.yaml``), reads it with its dialect's reader into the one suite
model, then reads every file the selected cases reference; ``format_cases`` formats each
selected case once (the prompt a run sends is the one ``/validate`` shows); ``check_suite``
does both for ``POST /validate`` and reports instead of raising. Nothing here calls a
provider.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from app.errors import DocumentError, FieldError, InvalidRequest
from app.evaluators.code.programs import ProgramRunner
from app.formatting import DEFAULT_SYSTEM_PROMPT, FormatOptions, format_prompt
from app.suites import image_policy
from app.suites.dialects import as_suite, detect_dialect, read_document
from app.suites.documents.document import SuiteDocument, parse_suite_text
from app.suites.documents.environment import interpolate, interpolate_cases
from app.suites.documents.findings import Findings
from app.suites.documents.parsing import MAX_DEPTH, non_finite_numbers
from app.suites.files.references import fill_from_files, role_marker_warnings
from app.suites.files.resolve import FileSource, LoadedFiles
from app.suites.files.sources import Sources, load_sources
from app.suites.graders.callback_files import with_placed_callbacks
from app.suites.graders.programs import (
    CodePolicy,
    folder_inside,
    place_code_graders,
    place_workspace,
)
from app.suites.hosted_policy import refuse_unallowed
from app.suites.model import MAX_CASE_ID_LENGTH, EvalCase, EvalSuite, FormattedCase
from app.suites.prompts_vars.program_vars import VarCalls, run_calls, var_programs
from app.suites.reading import CaseOrigin, Dialect, References, SuiteCheck, add_reference
from app.suites.workspaces.git_sources import NO_REPOSITORIES, GitSources

__all__ = [
    "SuiteDocument",
    "SuiteReport",
    "check_suite",
    "format_cases",
    "is_suite_path",
    "parse_suite_text",
    "read_suite",
    "suite_error",
]

_SUITE_PATH = re.compile(r"[^\n{}]*\.(ya?ml|jsonl?)")


@dataclass
class SuiteReport:
    """Everything found while reading a suite; ``format_cases`` then adds the prompts.

    Attributes:
        suite: The suite with only the selected cases, judge prompt files filled in; None
            when it has errors.
        files: Text of every referenced file, keyed by the path as the case wrote it.
        cases: Each selected case with its formatted prompt (after ``format_cases``).
        findings: Every problem, each located by document path (and line, column for YAML).
        dialect: The eval file dialect the suite was read as.
        origins: Where each case sits and what it references, by case id.
    """

    suite: EvalSuite | None = None
    files: dict[str, str] = field(default_factory=dict)
    cases: tuple[FormattedCase, ...] = ()
    findings: Findings = field(default_factory=Findings)
    dialect: Dialect = "unknown"
    origins: dict[str, CaseOrigin] = field(default_factory=dict)

    @property
    def errors(self) -> list[FieldError]:
        """Problems that stop the suite from running."""
        return self.findings.errors

    @property
    def warnings(self) -> list[str]:
        """Things that run but deserve a look."""
        return self.findings.warnings

    @property
    def valid(self) -> bool:
        """Whether the suite can run as given."""
        return not self.errors and self.suite is not None


def is_suite_path(suite: str) -> bool:
    """Whether a ``suite`` string names a suite file (``.yaml``, ``.json``, ``.jsonl``)."""
    return _SUITE_PATH.fullmatch(suite.strip()) is not None and ": " not in suite


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


async def read_suite(
    suite: Mapping[str, Any] | str,
    *,
    file_source: FileSource,
    case_ids: Sequence[str] | None = None,
    allow_missing_files: bool = False,
    code_graders: bool = False,
    env: Mapping[str, str] | None = None,
    git: GitSources = NO_REPOSITORIES,
    hosted_tools: bool = False,
    programs: ProgramRunner | None = None,
    image_urls: bool = False,
) -> SuiteReport:
    """Parse and check a suite, select its cases and read every file they reference.

    No provider is called and no case is formatted yet (``format_cases`` does that, once
    the mode and guideline patterns are known).

    Args:
        suite: The suite as an object, as YAML or JSON text, or as the path of a suite
            file inside a workspace root (``evals/review.yaml``).
        file_source: Resolves referenced files (inline ``files``, then workspace roots).
        case_ids: Only these cases (all when None); an unknown id is an error.
        allow_missing_files: Report files found nowhere as warnings instead of errors.
        code_graders: The operator enables code graders (they still run only for a suite
            file read from a workspace root).
        env: Values of the ``${{ NAME }}`` references of an AgentV 2026 or
            prompts/providers/vars suite (the request's ``env``).
        git: Where a workspace's repositories may be cloned from (none by default).
        hosted_tools: The operator allows tools the provider runs (web search, MCP...).
        image_urls: The operator allows images by ``http(s)`` URL (the provider fetches them).
        programs: Runs promptfoo's variables made by programs while the suite is read (the
            operator's runner when code graders are enabled; None: such variables refused).
    """
    try:
        document, file_source, source_dir = await _read(suite, file_source)
    except (DocumentError, InvalidRequest) as exc:
        report = SuiteReport()
        report.errors.extend(exc.errors or [FieldError(path="", message=exc.detail)])
        return report
    findings = Findings(document.positions)
    data = as_suite(document.data)
    _refuse_non_finite(data, findings)
    report = SuiteReport(findings=findings, dialect=detect_dialect(data))
    if report.dialect != "agentv-2025":
        data = interpolate(data, env or {}, findings)
    sources = await load_sources(data, file_source, findings, source_name=document.source_name)
    if report.dialect != "agentv-2025":  # cases read from other files are filled in too
        sources.cases = interpolate_cases(sources.cases, env or {}, findings)
    # Templates render here (CPU, bounded per template): in a worker thread, off the loop.
    check, findings = await _read_cases(data, sources, findings, env, programs, file_source)
    report.findings = findings
    report.origins = check.origins
    if check.suite is not None:
        _check_case_ids(check.suite, check.origins, findings)
    if check.suite is None or findings.errors:
        return report
    refuse_unallowed(check.suite, check.origins, findings, allowed=hosted_tools)
    image_policy.refuse_unallowed(check.suite, check.origins, findings, allowed=image_urls)
    policy = CodePolicy(enabled=code_graders, folder=file_source.suite_folder, git=git)
    placed = place_code_graders(check.suite, check.origins, policy, findings)
    placed = with_placed_callbacks(placed, policy, findings)
    placed = place_workspace(placed, policy, findings)
    if report.errors:
        return report
    selected = _select(placed, case_ids, report)
    if report.errors:
        return report
    files, missing = await _load_files(
        selected, check.origins, file_source, findings, allow_missing_files
    )
    if report.errors:
        return report
    report.files = files
    selected = [_with_missing(case, check.origins[case.id], missing) for case in selected]
    filled = fill_from_files(
        placed,
        selected,
        check.origins,
        files,
        findings,
        templates=report.dialect != "agentv-2025",
    )
    if not report.errors:
        report.suite = filled.model_copy(update={"source_dir": source_dir})
    return report


async def _read_cases(
    data: Any,
    sources: Sources,
    findings: Findings,
    env: Mapping[str, str] | None,
    programs: ProgramRunner | None,
    file_source: FileSource,
) -> tuple[SuiteCheck, Findings]:
    """The document read (in a worker thread), and what reading it found.

    Variables made by programs (``program_vars``) need two readings: the first finds the
    calls the prompts need, they run in the sandbox, the second reads their outputs.
    """
    place = file_source.suite_folder
    calls = VarCalls() if programs is not None and place is not None else None
    before = findings.snapshot()
    check = await anyio.to_thread.run_sync(_read_with, data, sources, findings, env, calls)
    if calls is None or not calls.pending or programs is None or place is None:
        return check, findings
    folder = folder_inside(place, ".")
    if folder is not None:
        await run_calls(calls, programs, Path(folder))
    check = await anyio.to_thread.run_sync(_read_with, data, sources, before, env, calls)
    return check, before


def _read_with(
    data: Any,
    sources: Sources,
    findings: Findings,
    env: Mapping[str, str] | None,
    calls: VarCalls | None,
) -> SuiteCheck:
    """``read_document`` with program variables recorded in (or read from) ``calls``."""
    with var_programs(calls):
        return read_document(data, sources, findings, env)


def _check_case_ids(
    suite: EvalSuite, origins: Mapping[str, CaseOrigin], findings: Findings
) -> None:
    """Refuse case ids longer than the runs database stores (each named, with its start)."""
    for case in suite.cases:
        if len(case.id) > MAX_CASE_ID_LENGTH:
            origin = origins.get(case.id)
            path = (*origin.path, "id") if origin is not None else ("id",)
            findings.error(
                path,
                f"case id {case.id[:40]!r}... is {len(case.id)} characters long; "
                f"at most {MAX_CASE_ID_LENGTH}",
            )


def format_cases(
    report: SuiteReport, options: FormatOptions, prompt: str | None = None
) -> tuple[FormattedCase, ...]:
    """Format every case of a valid report once; warnings go into the report.

    With ``prompt`` (an arm's prompt), the cases that use it, each with that prompt's input.

    Raises:
        InvalidRequest: The report has errors (``suite_error`` lists them).
    """
    if report.suite is None or report.errors:
        raise suite_error(report.errors)
    cases = report.suite.cases
    if prompt is not None:
        cases = tuple(c for case in cases if (c := case.for_prompt(prompt)) is not None)
    report.cases = tuple(_format_case(case, report.files, options, report) for case in cases)
    return report.cases


async def check_suite(
    suite: Mapping[str, Any] | str,
    *,
    file_source: FileSource,
    case_ids: Sequence[str] | None = None,
    allow_missing_files: bool = False,
    code_graders: bool = False,
    env: Mapping[str, str] | None = None,
    git: GitSources = NO_REPOSITORIES,
    hosted_tools: bool = False,
    programs: ProgramRunner | None = None,
    image_urls: bool = False,
) -> SuiteReport:
    """Check a suite as a run would and format its cases for an LM target: nothing raised.

    The suite's own ``guideline_patterns`` apply (``POST /validate``).
    """
    report = await read_suite(
        suite,
        file_source=file_source,
        case_ids=case_ids,
        allow_missing_files=allow_missing_files,
        code_graders=code_graders,
        env=env,
        git=git,
        hosted_tools=hosted_tools,
        programs=programs,
        image_urls=image_urls,
    )
    if report.valid and report.suite is not None:
        options = FormatOptions(
            guideline_patterns=report.suite.guideline_patterns,
            default_system_prompt=(
                DEFAULT_SYSTEM_PROMPT
                if report.suite.system_prompt is None
                else report.suite.system_prompt
            ),
        )
        await anyio.to_thread.run_sync(format_cases, report, options)
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


def _refuse_non_finite(data: Any, findings: Findings) -> None:
    """YAML's ``.nan`` and ``.inf`` are errors wherever they are (times, weights, counts)."""
    for path, number in non_finite_numbers(data):
        findings.error(path, f"must be a finite number, not {number}")


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
    suite: EvalSuite, case_ids: Sequence[str] | None, report: SuiteReport
) -> list[EvalCase]:
    if case_ids is None:
        return list(suite.cases)
    by_id = {case.id: case for case in suite.cases}
    for index, case_id in enumerate(case_ids):
        if case_id not in by_id:
            report.errors.append(
                FieldError(path=f"case_ids[{index}]", message=f"no case has the id {case_id!r}")
            )
    return [by_id[case_id] for case_id in dict.fromkeys(case_ids) if case_id in by_id]


async def _load_files(
    selected: Sequence[EvalCase],
    origins: Mapping[str, CaseOrigin],
    file_source: FileSource,
    findings: Findings,
    allow_missing: bool,
) -> tuple[dict[str, str], set[str]]:
    """Read every file the selected cases and their judges reference; locate each problem.

    Returns the files read, and the input files found nowhere (unless allowed missing).
    """
    locations: References = {}
    for case in selected:
        origin = origins[case.id]
        for references in (origin.files, origin.prompts):
            for path, places in references.items():
                for place in places:
                    add_reference(locations, path, place)
    loaded = await file_source.collect(list(locations))
    prompts = {path for case in selected for path in origins[case.id].prompts}
    _report_file_problems(loaded, locations, findings, allow_missing, prompts)
    return loaded.files, set() if allow_missing else set(loaded.missing) - prompts


def _with_missing(case: EvalCase, origin: CaseOrigin, missing: set[str]) -> EvalCase:
    """The case marked with the input files it references that were found nowhere."""
    absent = tuple(path for path in origin.files if path in missing)
    if not absent:
        return case
    return case.model_copy(update={"missing_files": (*case.missing_files, *absent)})


def _report_file_problems(
    loaded: LoadedFiles,
    locations: References,
    findings: Findings,
    allow_missing: bool,
    prompts: set[str],
) -> None:
    """An error per refused file, and per missing judge prompt; a warning per missing input.

    A missing input file makes the cases that use it errors when they run (AgentV); with
    ``allow_missing`` it is left out of them instead.
    """
    for path, reason in loaded.refused.items():
        for where in locations[path]:
            findings.error(where, f"file {path!r} refused: {reason}")
    for path in loaded.missing:
        for where in locations[path]:
            if allow_missing:
                findings.warn(where, f"file not found: {path} (left out)")
            elif path in prompts:
                findings.error(
                    where,
                    f"file not found: {path} (send it in `files` or put it under a workspace root)",
                )
            else:
                findings.warn(
                    where,
                    f"file not found: {path}: the cases that use it are errors (send it in "
                    "`files` or put it under a workspace root)",
                )


def _format_case(
    case: EvalCase, files: Mapping[str, str], options: FormatOptions, report: SuiteReport
) -> FormattedCase:
    messages = case.opening_messages()
    prompt = format_prompt(messages, files, options)
    path = report.origins[case.id].path
    if not prompt.question.strip():
        report.findings.warn(
            path, "the case has no visible input: the candidate gets an empty question"
        )
    turns = case.conversation.turns[1:] if case.conversation else ()
    for message in role_marker_warnings(
        (*messages, *(m for turn in turns for m in turn.input_messages))
    ):
        report.findings.warn(path, message)
    return FormattedCase(case=case, prompt=prompt)
