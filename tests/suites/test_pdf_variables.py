"""promptfoo's PDF variables (``file://paper.pdf``): the PDF's text, laid out as promptfoo 0.123.1
lays it out (measured: tests/conformance/promptfoo/pdf_vars.yaml runs both tools on it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from app.suites.loader import SuiteReport, check_suite
from tests.suites.helpers import errors_by_path, source

PAPER = Path(__file__).resolve().parents[1] / "conformance/promptfoo/vars_files/paper.pdf"
TEXT = (
    "Attention is all you need.\nTransformers use attention.\n\n-- 1 of 2 --\n\n"
    "Page two: results table.\n\n-- 2 of 2 --"
)


async def read(root: Path, *tests: dict[str, Any]) -> SuiteReport:
    folder = root / "evals"
    (folder / "pdfs").mkdir(parents=True, exist_ok=True)
    shutil.copy(PAPER, folder / "pdfs" / "paper.pdf")
    (folder / "pdfs" / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a pdf\n")
    suite = {"prompts": ["Summarize: {{paper}}"], "providers": ["t"], "tests": list(tests)}
    (folder / "promptfooconfig.yaml").write_text(json.dumps(suite))
    return await check_suite("evals/promptfooconfig.yaml", file_source=source(roots=[root]))


async def test_a_pdf_variable_is_its_text_with_promptfoos_page_marks(tmp_path: Path) -> None:
    report = await read(
        tmp_path,
        {"vars": {"paper": "file://pdfs/paper.pdf"}},
        {"vars": {"paper": "file://pdfs/*.pdf"}, "description": "a glob of PDFs"},
    )
    errors = errors_by_path(report)
    assert "not a readable PDF" in errors["tests[1].vars.paper[0]"], errors
    del errors["tests[1].vars.paper[0]"]
    assert not errors, errors
    report = await read(tmp_path, {"vars": {"paper": "file://pdfs/paper.pdf"}})
    assert report.suite is not None, report.errors
    [case] = report.suite.cases
    assert case.input_messages[-1].content == f"Summarize: {TEXT}"


async def test_an_audio_variable_is_still_refused_by_name(tmp_path: Path) -> None:
    report = await read(tmp_path, {"vars": {"paper": "file://pdfs/talk.mp3"}})
    errors = errors_by_path(report)
    assert "'file://pdfs/talk.mp3' is not supported" in errors["tests[0].vars.paper"]
