"""Serve a ``POST /validate`` request: the checks ``/evaluate`` makes, no provider call."""

from __future__ import annotations

from app.formatting import FormattedPrompt
from app.schemas.suites import CaseCheck, ValidateRequest, ValidateResponse
from app.settings import Settings
from app.suites.files import FileSource
from app.suites.loader import CaseSummary, check_suite


async def validate_suite_request(
    request: ValidateRequest, settings: Settings, *, prompts: bool = False
) -> ValidateResponse:
    """Check a suite and every file it references; report instead of raising.

    With ``prompts``, each case also carries its formatted question, guidelines and
    chatPrompt, so one call shows what every candidate of the suite would be sent.
    """
    report = await check_suite(
        request.suite,
        file_source=FileSource.from_settings(settings, request.files),
        case_ids=request.case_ids,
        allow_missing_files=request.allow_missing_files,
    )
    return ValidateResponse(
        valid=report.valid,
        errors=report.errors,
        warnings=report.warnings,
        cases=[
            _case_check(case, report.prompts.get(case.id) if prompts else None)
            for case in report.cases
        ],
    )


def _case_check(case: CaseSummary, formatted: FormattedPrompt | None) -> CaseCheck:
    check = CaseCheck(
        id=case.id,
        role_markers=case.role_markers,
        guideline_paths=list(case.guideline_paths),
        files=list(case.files),
    )
    if formatted is None:
        return check
    return check.model_copy(
        update={
            "question": formatted.question,
            "guidelines": formatted.guidelines,
            "chat_prompt": list(formatted.chat_prompt),
        }
    )
