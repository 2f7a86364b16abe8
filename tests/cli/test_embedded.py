"""``evalx run --embedded``: the service in the command's own process, no server to start."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.cli.problems import EXIT_GATE_FAILED, EXIT_PASSED
from tests.cli.conftest import Evalx, SuiteFile
from tests.cli.test_reports import validated
from tests.cli.test_run import progress

pytestmark = pytest.mark.slow
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_200_case_run_embedded(suite_file: SuiteFile, evalx: Evalx, tmp_path: Path) -> None:
    path = suite_file("big.yaml", cases=200)
    outputs = ("--junit", "junit.xml", "--html", "report.html", "--json", "run.json")
    result = evalx("run", str(path), "--embedded", "--target", "mixed", "--min-pass-rate", "0.6",
                   *outputs)  # fmt: skip
    assert result.returncode == EXIT_PASSED, result.stderr
    shown = progress(result.stderr)
    assert len(shown) >= 10
    assert shown[-1][:2] == (200, 200)
    # Stored where the service's settings say (EVAL_DATA_DIR), like any run.
    assert (tmp_path / "data" / "eval.db").is_file()
    run = json.loads((tmp_path / "run.json").read_text())["run"]
    assert run["progress"] == {"done": 200, "total": 200}
    assert (
        len(validated((tmp_path / "junit.xml").read_bytes()).findall("testsuite/testcase")) == 200
    )
    html = (tmp_path / "report.html").read_text()
    assert html.count('<section class="case"') == 200
    # No server outlives the command: no link to its viewer.
    assert "Open in the viewer" not in html
    assert "http://" not in html


def test_an_example_suite_runs_in_place(evalx: Evalx, tmp_path: Path) -> None:
    # The example reads its policy file next to it: embedded, the suite's folder is a root.
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLES / "customer-support", folder / "evals")
    result = evalx("run", str(folder / "evals" / "customer-support.yaml"), "--embedded",
                   "--target", "default", "--junit", "junit.xml")  # fmt: skip
    assert result.returncode == EXIT_GATE_FAILED, result.stderr
    assert "FAIL 1 of 2 cases did not pass" in result.stdout
    root = validated((tmp_path / "junit.xml").read_bytes())
    failed = [
        case.get("name") for case in root.iter("testcase") if case.find("failure") is not None
    ]
    assert failed == ["refund-outside-window"]
