"""Builders shared by the suite tests."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from app.suites.files.resolve import FileSource
from app.suites.loader import SuiteReport, check_suite

CLASSIC = """\
$schema: agentv-eval-v2
description: Arithmetic
evalcases:
  - id: add
    outcome: Says 4
    input_messages:
      - role: user
        content: What is 2+2?
    expected_messages:
      - role: assistant
        content: "4"
"""


def source(files: dict[str, str] | None = None, roots: list[Path] | None = None) -> FileSource:
    return FileSource(
        inline=files, roots=roots or [], max_file_bytes=10_000, max_request_file_bytes=100_000
    )


async def check(
    suite: str | dict[str, Any], files: dict[str, str] | None = None, **options: Any
) -> SuiteReport:
    text = textwrap.dedent(suite) if isinstance(suite, str) else suite
    return await check_suite(text, file_source=source(files), **options)


def errors_by_path(report: SuiteReport) -> dict[str, str]:
    return {error.path: error.message for error in report.errors}
