"""Code graders: a real program reads the case as JSON and prints a score, under limits.

Suites are files under a workspace root (the only place code graders may come from); the
program is this interpreter running a script next to the suite.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from app.evaluators.base import CandidateRun, EvaluationContext
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.config import EvaluatorConfig
from app.evaluators.registry import EVALUATORS
from app.evaluators.results import EvaluatorResult
from app.providers.access.target_proxy import TargetProxy
from app.providers.base import ToolCall
from app.suites.loader import SuiteReport, check_suite
from tests.evaluators.fakes import ScriptedTarget, verdict_json
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
    grader = {"name": "g", "type": spelling, "command": ["python3", "grade.py"], "k": 1}
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
    grader = {"type": "code-grader", "command": "python3 grade.py"}
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
    assert "printed no JSON object: $HOME; touch pwned" in (result.reasoning or "")
    assert not exists(tmp_path / "evals" / "pwned")


async def test_a_program_that_exits_0_printing_no_json_scores_1_as_in_agentv(
    tmp_path: Path,
) -> None:
    report = await read(tmp_path, {"type": "code-grader", "command": ["echo", "all good"]})
    result = await run(report, "4", runner(tmp_path))
    assert (result.status, result.score, result.passed) == ("ok", 1.0, True)
    assert "exited 0 and printed no JSON object: all good" in (result.reasoning or "")


async def test_a_program_that_exits_non_zero_scores_0_as_in_agentv(tmp_path: Path) -> None:
    report = await read(tmp_path, {"type": "code-grader", "command": ["python3", "fails.py"]})
    result = await run(report, "4", runner(tmp_path))
    assert (result.status, result.score, result.passed) == ("ok", 0.0, False)
    assert "exited with code 3: no model file" in (result.reasoning or "")
    assert result.details is not None
    assert result.details["exit_code"] == 3


@pytest.mark.parametrize(
    ("script", "limits", "message"),
    [
        ("slow.py", {"timeout_seconds": 0.5}, "the grader program timed out after 0.5 s"),
        ("loud.py", {"max_output_bytes": 4096}, "wrote more than 4096 bytes to stdout"),
    ],
)
async def test_a_program_that_misbehaves_is_an_error_result(
    tmp_path: Path, script: str, limits: dict[str, Any], message: str
) -> None:
    report = await read(tmp_path, {"type": "code-grader", "command": ["python3", script]})
    result = await run(report, "4", runner(tmp_path, **limits))
    assert (result.status, result.score, result.passed) == ("error", None, None)
    assert message in (result.reasoning or "")


async def test_a_program_over_the_output_cap_is_reaped_every_time(tmp_path: Path) -> None:
    # Left unread past the cap, the program's pipe never closed and the wait for it could
    # hang for good, about every other run: repeated so one hang is all but certain.
    report = await read(tmp_path, {"type": "code-grader", "command": ["python3", "loud.py"]})
    async with asyncio.timeout(60):
        for _ in range(12):
            result = await run(report, "4", runner(tmp_path, max_output_bytes=4096))
            assert result.status == "error"


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
        "aggregator": {"type": "code-grader", "path": "python3 agg.py"},
    }
    report = await read(tmp_path, grader)
    good = await run(report, "4", runner(tmp_path))
    bad = await run(report, "5", runner(tmp_path))
    assert (good.score, good.passed) == (1.0, True)
    assert (bad.score, bad.passed) == (0.25, False)


ASKS_TARGETS = """\
import json, os, sys, urllib.error, urllib.request
case = json.load(sys.stdin)
url, token = os.environ["AGENTV_TARGET_PROXY_URL"], os.environ["AGENTV_TARGET_PROXY_TOKEN"]
assert os.environ["AGENTV_PROVIDER_PROXY_URL"] == url


def call(path, body=None, auth=token):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": "Bearer " + auth, "Content-Type": "application/json"}
    request = urllib.request.Request(url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return [response.status, json.load(response)]
    except urllib.error.HTTPError as error:
        return [error.code, json.load(error)]


seen = {
    "url": url,
    "info": call("/info"),
    "stranger": call("/info", auth="0" * 64),
    "one": call("/invoke", {"question": "Right? " + case["answer"], "systemPrompt": "Say yes."}),
    "batch": call(
        "/invokeBatch",
        {"requests": [
            {"question": "again", "target": "other"},
            {"target": "nope", "question": "x"},
        ]},
    ),
    "empty": call("/invoke", {"systemPrompt": "no question"}),
    "last": call("/invoke", {"question": "last"}),
    "over": call("/invoke", {"question": "one too many"}),
}
print(json.dumps({"score": 1.0, "details": seen}))
"""


async def test_a_program_with_target_access_asks_targets_through_a_loopback_proxy(
    tmp_path: Path,
) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "asks.py").write_text(ASKS_TARGETS)
    grader = {"name": "g", "type": "code-grader", "command": ["python3", "asks.py"]}
    report = await read(tmp_path, {**grader, "target": {"max_calls": 3}})
    assert report.suite is not None, report.errors
    case = report.suite.cases[0]
    judge = ScriptedTarget(judge_replies=[lambda request: f"judge: {request.question}"])
    other = ScriptedTarget(name="other", judge_replies=[lambda request: "other: yes"])
    context = EvaluationContext(
        case=case,
        question="2+2?",
        candidate_answer="4",
        judge=judge,
        judge_attempts=1,
        resolve_judge=lambda name: {"other": other}[name],
        target_names=("fake", "other"),
        program_targets=TargetProxy,
        programs=runner(tmp_path),
    )
    result = (await EVALUATORS.run(case.evaluators[0], context)).result
    assert result.details is not None, result.reasoning
    seen = result.details["program"]
    assert seen["info"] == [
        200,
        {
            "targetName": "fake",
            "maxCalls": 3,
            "callCount": 0,
            "availableTargets": ["fake", "other"],
        },
    ]
    assert seen["stranger"][0] == 401
    assert seen["one"] == [
        200,
        {
            "output": [{"role": "assistant", "content": "judge: Right? 4"}],
            "outputMessages": [{"role": "assistant", "content": "judge: Right? 4"}],
            "rawText": "judge: Right? 4",
            "tokenUsage": {"input": 10, "output": 5},
        },
    ]
    again, unknown = seen["batch"][1]["responses"]
    assert again["rawText"] == "other: yes"
    assert unknown["rawText"] == ("Error: unknown target 'nope': available targets are fake, other")
    assert seen["empty"] == [400, {"error": "'question' is required: the text to send"}]
    assert seen["last"][0] == 200
    assert seen["over"] == [429, {"error": "max calls exceeded (limit: 3)"}]
    # Sent: one, again, last. The unknown target and the empty request were never sent.
    assert result.details["target_proxy"] == {"call_count": 3, "max_calls": 3}
    asked, _ = judge.judge_requests()
    assert [(m.role, m.content) for m in asked.chat_prompt] == [
        ("system", "Say yes."),
        ("user", "Right? 4"),
    ]
    assert asked.case_id == case.id
    with pytest.raises(ConnectionRefusedError):  # the proxy closed with the program
        await asyncio.open_connection("127.0.0.1", int(seen["url"].rsplit(":", 1)[1]))
    without = replace(context, program_targets=None)
    refused = (await EVALUATORS.run(case.evaluators[0], without)).result
    assert refused.status == "error"
    assert "cannot call targets here ('target')" in (refused.reasoning or "")


@pytest.mark.parametrize(
    ("target", "path", "message"),
    [
        ("judge", "target", "is {max_calls: N} or true"),
        ({"max_calls": -1}, "target.max_calls", "must be a whole number from 0"),
        ({"max_calls": 2, "model": "x"}, "target.model", "takes max_calls"),
    ],
)
async def test_a_code_graders_target_is_its_programs_call_budget(
    tmp_path: Path, target: Any, path: str, message: str
) -> None:
    grader = {"name": "g", "type": "code-grader", "command": "x"}
    allowed = await read(tmp_path, {**grader, "target": True})
    assert allowed.suite is not None, allowed.errors
    access = allowed.suite.cases[0].evaluators[0].target_access
    assert access is not None
    assert access.max_calls == 50
    report = await read(tmp_path, {**grader, "target": target})
    assert message in errors_by_path(report)[f"tests[0].assertions[0].{path}"]


PROMPTER = """\
import json, sys
case = json.load(sys.stdin)
print(f"Question: {case['question']}")
print(f"Answer: {case['answer']}")
print(f"Rubric: {case['config']['rubric']}")
"""


async def test_a_judge_prompt_written_by_a_program_is_what_the_judge_is_asked(
    tmp_path: Path,
) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "prompter.py").write_text(PROMPTER)
    (tmp_path / "evals" / "silent.py").write_text("")
    program = {"command": ["python3", "prompter.py"], "config": {"rubric": "Says 4"}}
    grader = {"name": "custom", "type": "llm-grader", "prompt": program}
    report = await read(tmp_path, grader)
    assert report.suite is not None, report.errors
    [judged] = report.suite.cases[0].evaluators
    assert judged.type == "llm_judge"
    assert judged.cwd == str(tmp_path / "evals")
    judge = ScriptedTarget(judge_replies=[verdict_json(0.9)])
    context = EvaluationContext(
        case=report.suite.cases[0],
        question="2+2?",
        candidate_answer="It is 4.",
        judge=judge,
        judge_attempts=1,
        programs=runner(tmp_path),
    )
    outcome = await EVALUATORS.run(judged, context)
    assert (outcome.result.score, outcome.result.status) == (0.9, "ok")
    [asked] = judge.judge_requests()
    printed = "Question: 2+2?\nAnswer: It is 4.\nRubric: Says 4"
    assert asked.chat_prompt[-1].content == printed
    assert outcome.raw_request is not None
    assert outcome.raw_request.user_prompt == printed
    assert judged.prompt_program is not None
    quiet = judged.prompt_program.model_copy(update={"command": ("python3", "silent.py")})
    silent = judged.model_copy(update={"prompt_program": quiet})
    result = (await EVALUATORS.run(silent, context)).result
    assert result.status == "error"
    assert "printed no prompt" in (result.reasoning or "")
    off = await read(tmp_path, grader, enabled=False)
    assert (
        "grader 'custom' (llm_judge) cannot run: code graders are not enabled"
        in (errors_by_path(off)["tests[0]"])
    )


async def test_a_judge_prompt_program_whose_file_is_missing_is_refused_when_checked(
    tmp_path: Path,
) -> None:
    program = {"command": ["python3", "../prompts/gone.py"]}
    report = await read(tmp_path, {"name": "custom", "type": "llm-grader", "prompt": program})
    assert not report.valid
    assert any("'../prompts/gone.py' does not exist" in e.message for e in report.errors)
