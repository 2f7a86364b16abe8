"""Serve a ``POST /validate`` request: the checks a run makes, no provider call."""

from __future__ import annotations

from collections.abc import Sequence

from app.errors import FieldError
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.judges.classifier import classifier_problems
from app.evaluators.judges.embedding_similarity import embedding_problems
from app.evaluators.judges.moderation import moderation_problems
from app.schemas.suites import CaseCheck, ValidateRequest, ValidateResponse
from app.settings import Settings
from app.suites.documents.document import render_path
from app.suites.files.resolve import FileSource
from app.suites.loader import SuiteReport, check_suite
from app.suites.model import FormattedCase
from app.suites.workspaces.git_sources import GitSources


async def validate_suite(
    request: ValidateRequest,
    settings: Settings,
    *,
    prompts: bool = False,
    targets: Sequence[str] | None = None,
    embedding_targets: Sequence[str] = (),
    moderation_targets: Sequence[str] = (),
    classifier_targets: Sequence[str] = (),
) -> ValidateResponse:
    """Check a suite and every file it references; report instead of raising.

    With ``prompts``, each case also carries its formatted question, guidelines and
    chatPrompt, so one call shows what every candidate of the suite would be sent. With
    ``targets`` (the configured ones), a suite naming a provider that is not one of them is
    invalid, the error naming it, and so is a grader naming such a judge target (as
    ``/evaluate`` refuses both), and a ``similar`` grader with no embeddings target
    (``embedding_targets``: the configured ones) to embed with, and a ``moderation`` grader
    with no moderation target (``moderation_targets``), and a ``classifier`` grader with no
    classifier target (``classifier_targets``).
    """
    report = await check_suite(
        request.suite,
        file_source=FileSource.from_settings(settings, request.files),
        case_ids=request.case_ids,
        allow_missing_files=request.allow_missing_files,
        code_graders=settings.code_graders,
        hosted_tools=settings.hosted_tools,
        image_urls=settings.image_urls,
        env=request.env,
        git=GitSources.from_settings(settings),
        programs=ProgramRunner.from_settings(settings),
    )
    errors = list(report.errors)
    target = report.suite.target if report.suite is not None else None
    if target is not None and targets is not None and target not in targets:
        where = "providers" if report.dialect == "prompts-providers-vars" else "target"
        known = ", ".join(sorted(targets)) or "(none)"
        message = f"provider {target!r} is not a target of this service (targets: {known})"
        errors.append(FieldError(path=where, message=message))
    if targets is not None:
        errors.extend(_unknown_grader_targets(report, set(targets)))
        kinds = (embedding_targets, moderation_targets, classifier_targets)
        errors.extend(_target_problems(report, *kinds))
    return ValidateResponse(
        valid=report.valid and not errors,
        dialect=report.dialect,
        errors=errors,
        warnings=report.warnings,
        cases=[_case_check(case, with_prompt=prompts) for case in report.cases],
    )


def _case_check(formatted: FormattedCase, *, with_prompt: bool) -> CaseCheck:
    prompt = formatted.prompt
    check = CaseCheck(
        id=formatted.case.id,
        role_markers=prompt.role_markers,
        guideline_paths=list(prompt.guideline_paths),
        files=list(prompt.file_paths),
    )
    if not with_prompt:
        return check
    return check.model_copy(
        update={
            "question": prompt.question,
            "guidelines": prompt.guidelines,
            "chat_prompt": list(prompt.chat_prompt),
        }
    )


def _target_problems(
    report: SuiteReport,
    embedding_targets: Sequence[str],
    moderation_targets: Sequence[str],
    classifier_targets: Sequence[str],
) -> list[FieldError]:
    """An error per grader calling a target of its own kind (of its first case) with none.

    ``similar`` needs an embeddings target, ``moderation`` a moderation target,
    ``classifier`` a classifier target.
    """
    if report.suite is None:
        return []
    errors: dict[str, FieldError] = {}
    for case in report.suite.cases:
        origin = report.origins.get(case.id)
        where = render_path(origin.path if origin is not None else ())
        graders = case.all_graders()
        problems = embedding_problems(graders, embedding_targets)
        problems += moderation_problems(graders, moderation_targets)
        for problem in problems + classifier_problems(graders, classifier_targets):
            errors.setdefault(problem, FieldError(path=where, message=problem))
    return list(errors.values())


def _unknown_grader_targets(report: SuiteReport, known: set[str]) -> list[FieldError]:
    """An error per case grader naming a judge target that is not configured."""
    if report.suite is None:
        return []
    listed = ", ".join(sorted(known)) or "(none)"
    errors: list[FieldError] = []
    for case in report.suite.cases:
        origin = report.origins.get(case.id)
        where = origin.path if origin is not None else ()
        pending = list(case.all_graders())
        while pending:
            grader = pending.pop(0)
            pending.extend(grader.evaluators)
            if grader.target and grader.target not in known:
                message = (
                    f"grader {grader.name!r} names target {grader.target!r}, which is not "
                    f"configured here ({listed})"
                )
                errors.append(FieldError(path=render_path(where), message=message))
    return errors
