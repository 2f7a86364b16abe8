"""Code graders: a real program reads the case as JSON and prints a score, under limits.

Suites are files under a workspace root (the only place code graders may come from); the
program is this interpreter running a script next to the suite.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from app.evaluators.base import CandidateRun, EvaluationContext
from app.evaluators.config import EvaluatorConfig
from app.evaluators.programs import ProgramRunner
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.providers.base import ToolCall
from app.suites.loader import SuiteReport, check_suite
from tests.evaluators.fakes import ScriptedTarget
from tests.suites.helpers import check, errors_by_path, source

GRADER = """\
import json, os, sys
case = json.load(sys.stdin)
passed = "4" in case["answer"]
print("log line before the result")
print(json.dumps({
    "score": 1.0 if passed else 0.0,
    "hits": ["says 4"] if passed else [],
    "misses": [] if passed else ["does not say 4"],
    "reasoning": os.getcwd(),
    "details": {"tools": case["trace_summary"]["tool_names"], "config": case["config"]},
}))
"""
PROGRAMS = {
    "grade.py": GRADER,
    "slow.py": "import time\ntime.sleep(30)\n",
    "loud.py": "print('x' * 200_000)\n",
    "fails.py": "import sys\nsys.stderr.write('no model file\\n')\nsys.exit(3)\n",
}


def write_suite(root: Path, grader: dict[str, Any], folder: str = "evals") -> str:
    suite = {
        "tests": [{"id": "sum", "criteria": "Says 4", "input": "2+2?", "assertions": [grader]}]
    }
    (root / folder).mkdir(parents=True, exist_ok=True)
    for name, text in PROGRAMS.items():
        (root / folder / name).write_text(text)
    (root / folder / "suite.yaml").write_text(json.dumps(suite))
    return f"{folder}/suite.yaml"


async def read(root: Path, grader: dict[str, Any], *, enabled: bool = True) -> SuiteReport:
    path = write_suite(root, grader)
    return await check_suite(path, file_source=source(roots=[root]), code_graders=enabled)


async def run(report: SuiteReport, answer: str, runner: ProgramRunner | None) -> EvaluatorResult:
    assert report.suite is not None, report.errors
    case = report.suite.cases[0]
    context = EvaluationContext(
        case=case,
        question="2+2?",
        candidate_answer=answer,
        judge=ScriptedTarget(),
        judge_attempts=1,
        candidate=CandidateRun(tool_calls=(ToolCall(tool="calc", input={"x": 2}),)),
        programs=runner,
    )
    return (await EVALUATORS.run(case.evaluators[0], context)).result


def exists(path: Path) -> bool:
    return path.exists()


def runner(root: Path, **limits: Any) -> ProgramRunner:
    return ProgramRunner(roots=(root,), **limits)


@pytest.mark.parametrize("spelling", ["code_judge", "code-grader", "code_grader", "script"])
async def test_a_program_grades_the_answer_in_every_spelling(tmp_path: Path, spelling: str) -> None:
    grader = {"name": "g", "type": spelling, "command": [sys.executable, "grade.py"], "k": 1}
    report = await read(tmp_path, grader)
    good = await run(report, "It is 4.", runner(tmp_path))
    bad = await run(report, "It is 5.", runner(tmp_path))
    assert (good.type, good.score, good.passed, good.hits) == ("code_judge", 1.0, True, ["says 4"])
    assert (bad.score, bad.passed, bad.misses) == (0.0, False, ["does not say 4"])
    assert good.details is not None
    assert good.details["program"] == {"tools": ["calc"], "config": {"k": 1}}


async def test_the_program_runs_in_a_fresh_temporary_folder_removed_afterwards(
    tmp_path: Path,
) -> None:
    grader = {"type": "code-grader", "command": f"{sys.executable} grade.py"}
    report = await read(tmp_path, grader)
    assert report.suite is not None
    assert report.suite.cases[0].evaluators[0].cwd == str(tmp_path / "evals")
    result = await run(report, "4", runner(tmp_path))
    workdir = Path(result.reasoning or "")
    assert workdir.name.startswith("eval-grader-")
    assert workdir != tmp_path / "evals"
    assert not exists(workdir)


async def test_no_shell_reads_the_command(tmp_path: Path) -> None:
    report = await read(tmp_path, {"type": "code-grader", "command": "echo $HOME; touch pwned"})
    result = await run(report, "4", runner(tmp_path))
    assert result.status == "error"
    assert "printed no JSON object: $HOME; touch pwned" in (result.reasoning or "")
    assert not exists(tmp_path / "evals" / "pwned")


@pytest.mark.parametrize(
    ("script", "limits", "message"),
    [
        ("slow.py", {"timeout_seconds": 0.5}, "the grader program timed out after 0.5 s"),
        ("loud.py", {"max_output_bytes": 4096}, "wrote more than 4096 bytes to stdout"),
        ("fails.py", {}, "exited with code 3: no model file"),
    ],
)
async def test_a_program_that_misbehaves_is_an_error_result(
    tmp_path: Path, script: str, limits: dict[str, Any], message: str
) -> None:
    report = await read(tmp_path, {"type": "code-grader", "command": [sys.executable, script]})
    result = await run(report, "4", runner(tmp_path, **limits))
    assert (result.status, result.score, result.passed) == ("error", None, None)
    assert message in (result.reasoning or "")


async def test_code_graders_are_off_unless_the_operator_enables_them(tmp_path: Path) -> None:
    report = await read(
        tmp_path, {"name": "g", "type": "code-grader", "command": "x"}, enabled=False
    )
    assert errors_by_path(report) == {
        "tests[0]": (
            "grader 'g' (code_judge) cannot run: code graders are not enabled on this service: "
            "the operator turns them on with EVAL_CODE_GRADERS=true"
        )
    }
    from app.settings import Settings

    assert Settings().code_graders is False
    assert ProgramRunner.from_settings(Settings()) is None


async def test_a_suite_sent_in_the_request_body_never_runs_a_program(tmp_path: Path) -> None:
    grader = {"name": "g", "type": "code_judge", "command": "python3 x.py", "cwd": str(tmp_path)}
    suite = {"tests": [{"id": "a", "criteria": "x", "input": "Hi", "assertions": [grader]}]}
    report = await check(suite, code_graders=True)
    message = errors_by_path(report)["tests[0]"]
    assert "never in a suite sent in the request body" in message
    composite = {
        "name": "c",
        "type": "composite",
        "assertions": [{"name": "a", "type": "contains", "value": "x"}],
        "aggregator": {"type": "code-grader", "path": "python3 agg.py"},
    }
    suite["tests"][0]["assertions"] = [composite]
    report = await check(suite, code_graders=True)
    assert "grader 'c' (composite) cannot run" in errors_by_path(report)["tests[0]"]


async def test_a_cwd_outside_the_workspace_root_is_refused(tmp_path: Path) -> None:
    report = await read(
        tmp_path, {"name": "g", "type": "code-grader", "command": "x", "cwd": "../.."}
    )
    assert "its cwd '../..' leaves the workspace root" in errors_by_path(report)["tests[0]"]


async def test_the_runner_refuses_what_the_suite_reader_did_not_place(tmp_path: Path) -> None:
    context = EvaluationContext(
        case=(await read(tmp_path, {"type": "contains", "value": "4"})).suite.cases[0],  # type: ignore[union-attr]
        question="q",
        candidate_answer="4",
        judge=ScriptedTarget(),
        judge_attempts=1,
        programs=runner(tmp_path / "evals"),
    )
    outside = EvaluatorConfig(name="g", type="code_judge", command=("true",), cwd="/")
    result = (await EVALUATORS.run(outside, context)).result
    assert "outside the workspace roots" in (result.reasoning or "")
    unplaced = EvaluatorConfig(name="g", type="code_judge", command=("true",))
    result = (await EVALUATORS.run(unplaced, context)).result
    assert "only in a suite read from a workspace root" in (result.reasoning or "")


async def test_a_composite_code_aggregator_combines_the_children(tmp_path: Path) -> None:
    aggregate = textwrap.dedent(
        """\
        import json, sys
        results = json.load(sys.stdin)["results"]
        print(json.dumps({"score": 1.0 if results["a"]["score"] == 1 else 0.25}))
        """
    )
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "agg.py").write_text(aggregate)
    grader = {
        "name": "c",
        "type": "composite",
        "assertions": [
            {"name": "a", "type": "contains", "value": "4"},
            {"name": "b", "type": "contains", "value": "four"},
        ],
        "aggregator": {"type": "code-grader", "path": f"{sys.executable} agg.py"},
    }
    report = await read(tmp_path, grader)
    good = await run(report, "4", runner(tmp_path))
    bad = await run(report, "5", runner(tmp_path))
    assert (good.score, good.passed) == (1.0, True)
    assert (bad.score, bad.passed) == (0.25, False)
