"""promptfoo's ``python`` asserts (inline code, ``file://`` functions) and ``javascript`` files,
run in the sandbox.

The verdicts were measured against promptfoo 0.123.1 (tests/conformance/promptfoo/python.yaml
and javascript_files.yaml run both tools); these pin the contract without promptfoo.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from app.evaluators.base import EvaluationContext
from app.evaluators.code.program_asserts import inline_source
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.suites.loader import SuiteReport, check_suite
from tests.evaluators.fakes import ScriptedTarget
from tests.suites.helpers import check, errors_by_path, source

CHECKS = """\
def get_assert(output, context):
    return context["vars"]["word"] in output


def graded(output, context):
    print("noise before the result")
    return {"pass_": False, "score": 0.25, "reason": "wanted " + context["config"]["want"]}
"""


CHECKS_JS = """\
module.exports = (output, context) => output.includes(context.vars.word);
module.exports.graded = async (output, context) =>
  ({pass: false, score: 0.25, reason: `wanted ${context.config.want}`});
module.exports.broken = () => { throw new Error('broken on purpose'); };
"""


async def read(
    root: Path,
    grader: dict[str, Any],
    *,
    enabled: bool = True,
    files: Mapping[str, str] | None = None,
) -> SuiteReport:
    """The one-test suite of ``grader``, read from ``root/evals`` (``files`` written there too)."""
    suite = {
        "prompts": ["Say {{word}}"],
        "providers": ["t"],
        "tests": [{"vars": {"word": "hello"}, "assert": [grader]}],
    }
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "checks.py").write_text(CHECKS)
    (root / "evals" / "checks.js").write_text(CHECKS_JS)
    for name, text in (files or {}).items():
        (root / "evals" / name).write_text(text)
    (root / "evals" / "promptfooconfig.yaml").write_text(json.dumps(suite))
    return await check_suite(
        "evals/promptfooconfig.yaml", file_source=source(roots=[root]), code_graders=enabled
    )


async def grade(
    root: Path,
    grader: dict[str, Any],
    answer: str,
    programs: ProgramRunner | None = None,
    files: Mapping[str, str] | None = None,
) -> EvaluatorResult:
    """``grader``'s result on ``answer``, its programs run by ``programs`` (the default's)."""
    report = await read(root, grader, files=files)
    assert report.suite is not None, report.errors
    case = report.suite.cases[0]
    context = EvaluationContext(
        case=case,
        question="Say hello",
        candidate_answer=answer,
        judge=ScriptedTarget(),
        judge_attempts=1,
        programs=programs or ProgramRunner(roots=(root,)),
    )
    return (await EVALUATORS.run(case.evaluators[0], context)).result


@pytest.mark.parametrize(
    ("grader", "answer", "passed", "score", "reason"),
    [
        ({"value": "context['vars']['word'] in output"}, "hello there", True, 1.0, "returned true"),
        ({"value": "len(output) / 20"}, "0123456789", True, 0.5, "returned 0.5"),
        ({"value": "len(output) / 20", "threshold": 0.6}, "0123456789", False, 0.5, "0.5"),
        ({"value": "json.loads(output)['n'] == 2"}, '{"n": 2}', True, 1.0, "returned true"),
        (
            {
                "value": "if 'hello' in output:\n"
                "    return {'pass': True, 'score': 0.9, 'reason': 'hi'}\nreturn 0"
            },
            "hello",
            True,
            0.9,
            "hi",
        ),
        # promptfoo reads a python/ruby result strictly (script_results): a grading result
        # needs pass, score and reason; text is read as a boolean or a number
        ({"value": "{'pass': True, 'score': 0.9}"}, "x", False, 0.0, "with all three"),
        (
            {"value": "{'pass': True, 'score': 0.4, 'reason': 'low'}", "threshold": 0.5},
            "x",
            False,
            0.4,
            "below the threshold 0.5: low",
        ),
        ({"value": "'TRUE'"}, "x", True, 1.0, "returned true"),
        ({"value": "'0.7 of it'"}, "x", True, 0.7, "returned 0.7"),
        ({"value": "None"}, "x", False, 0.0, "nothing (nil/None)"),
        ({"value": "missing_name"}, "x", False, 0.0, "NameError: name 'missing_name'"),
        ({"value": "'text'"}, "x", False, 0.0, "must return a boolean, a number or"),
        ({"value": "file://checks.py"}, "hello", True, 1.0, "returned true"),
        (
            {"value": "file://checks.py:graded", "config": {"want": "z"}},
            "z",
            False,
            0.25,
            "wanted z",
        ),
        ({"value": "file://missing.py"}, "x", False, 0.0, "FileNotFoundError"),
        ({"type": "not-python", "value": "'hello' in output"}, "hello", False, 0.0, "true"),
    ],
)
async def test_python_asserts_grade_as_promptfoo_does(
    tmp_path: Path, grader: dict[str, Any], answer: str, passed: bool, score: float, reason: str
) -> None:
    result = await grade(tmp_path, {"type": "python", **grader}, answer)
    assert (result.passed, result.score) == (passed, score)
    assert reason in (result.reasoning or "")


@pytest.mark.parametrize(
    ("value", "answer", "passed", "score", "reason"),
    [
        ("file://checks.js", "hello there", True, 1.0, "returned true"),
        ("file://checks.js", "bye", False, 0.0, "returned false"),
        ("file://checks.js:graded", "z", False, 0.25, "wanted z"),
    ],
)
async def test_javascript_files_run_with_node_in_the_sandbox(
    tmp_path: Path, value: str, answer: str, passed: bool, score: float, reason: str
) -> None:
    grader = {"type": "javascript", "value": value, "config": {"want": "z"}}
    result = await grade(tmp_path, grader, answer)
    assert (result.status, result.passed, result.score) == ("ok", passed, score)
    assert reason in (result.reasoning or "")


@pytest.mark.parametrize("value", ["file://checks.js:broken", "file://checks.js:absent"])
async def test_a_javascript_file_that_throws_is_an_error_as_in_promptfoo(
    tmp_path: Path, value: str
) -> None:
    result = await grade(tmp_path, {"type": "javascript", "value": value}, "x")
    assert (result.status, result.passed) == ("error", None)
    assert "the JavaScript file threw" in (result.reasoning or "")


def test_inline_code_becomes_a_function_as_in_promptfoo() -> None:
    assert inline_source("output == 'x'").endswith("def main(output, context):\n"
                                                   "    return output == 'x'\n")  # fmt: skip
    body = inline_source("\tif output:\n\t\treturn True\n\treturn False\n")
    assert "def main(output, context):\n\t\tif output:\n\t\t\treturn True" in body


@pytest.mark.parametrize("language", ["python", "ruby"])
async def test_program_asserts_need_code_graders_and_a_suite_file(
    tmp_path: Path, language: str
) -> None:
    report = await read(tmp_path, {"type": language, "value": "True"}, enabled=False)
    assert "code graders are not enabled" in errors_by_path(report)["tests[0]"]
    inline = {
        "prompts": ["Hi"],
        "providers": ["t"],
        "tests": [{"assert": [{"type": language, "value": "True"}]}],
    }
    report = await check(inline, code_graders=True)
    assert "never in a suite sent in the request body" in errors_by_path(report)["tests[0]"]


BURST = """\
import asyncio, uvloop
from pathlib import Path
from app.evaluators.code.programs import ProgramRunner

async def burst():
    runner = ProgramRunner(roots=(Path("/tmp"),))
    ran = await asyncio.gather(*(runner.run(["true"], b"ignored") for _ in range(8)))
    print([result.stdout for result in ran])

uvloop.run(burst())
"""


def test_a_program_that_exits_without_reading_its_input_is_no_error_under_uvloop() -> None:
    # The service runs on uvloop: writing to a program that already exited raised
    # RuntimeError there (the sandbox's start-up probe runs `true`, so every first burst of
    # programs failed in the service). A fresh interpreter: uvloop forks, and this test
    # process has the JavaScript engine's threads.
    done = subprocess.run(
        [sys.executable, "-c", BURST], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str([""] * 8)
