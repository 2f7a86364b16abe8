"""Serve a ``POST /validate`` request: the checks ``/evaluate`` makes, no provider call."""

from __future__ import annotations

from app.schemas.suites import CaseCheck, ValidateRequest, ValidateResponse
from app.settings import Settings
from app.suites.files import FileSource
from app.suites.loader import check_suite


async def validate_suite_request(request: ValidateRequest, settings: Settings) -> ValidateResponse:
    """Check a suite and every file it references; report instead of raising."""
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
            CaseCheck(
                id=case.id,
                role_markers=case.role_markers,
                guideline_paths=list(case.guideline_paths),
                files=list(case.files),
            )
            for case in report.cases
        ],
    )
