"""AgentV's ``preprocessors`` (issue 35): a judge grades the text of the files an agent
answered with, a file of a preprocessed type as its program prints it (in the sandbox)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.evaluators.base import CandidateRun, EvaluationContext
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.registry import EVALUATORS
from app.providers.messages.agent_output import parse_agent_output
from app.suites.loader import SuiteReport, check_suite
from tests.evaluators.fakes import ScriptedTarget, verdict_json
from tests.suites.helpers import errors_by_path, source

TO_CSV = """\
import json, sys
asked = json.load(sys.stdin)
data = open(asked["path"], "rb").read()
print(f"rows of {asked['original_path']} ({asked['media_type']}): {data.decode()[::-1]}")
"""
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


async def read(root: Path, suite: dict[str, Any], *, enabled: bool = True) -> SuiteReport:
    (root / "evals").mkdir(parents=True, exist_ok=True)
    (root / "scripts").mkdir(exist_ok=True)
    (root / "scripts" / "to_csv.py").write_text(TO_CSV)
    (root / "evals" / "suite.yaml").write_text(json.dumps(suite))
    return await check_suite(
        "evals/suite.yaml", file_source=source(roots=[root]), code_graders=enabled
    )


def suite(graders: list[Any] | None = None, **top: Any) -> dict[str, Any]:
    test: dict[str, Any] = {"id": "report", "criteria": "Has the revenue rows", "input": "Go"}
    if graders is not None:
        test["assertions"] = graders
    return {**top, "tests": [test]}


PREPROCESS = [{"type": "xlsx", "command": ["python3", "../scripts/to_csv.py"]}]


async def test_suite_preprocessors_reach_every_judge_and_a_judges_own_win(tmp_path: Path) -> None:
    own = [{"type": "xlsx", "command": "python3 own.py"}, {"type": "text/csv", "command": ["x"]}]
    graders = [{"name": "j", "type": "llm-grader", "preprocessors": own}, "Mentions revenue"]
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "own.py").write_text("")
    report = await read(tmp_path, suite(graders, preprocessors=PREPROCESS))
    assert report.suite is not None, report.errors
    judge, rubrics = report.suite.cases[0].evaluators
    assert [(p.type, p.command) for p in judge.preprocessors] == [
        (XLSX, ("python3", "own.py")),
        ("text/csv", ("x",)),
    ]
    assert [p.command for p in rubrics.preprocessors] == [("python3", "../scripts/to_csv.py")]
    assert rubrics.cwd == str(tmp_path / "evals")
    default = await read(tmp_path, suite(preprocessors=PREPROCESS))
    assert default.suite is not None, default.errors
    [implicit] = default.suite.cases[0].evaluators  # the default judge of a case without any
    assert implicit.preprocessors[0].type == XLSX


async def test_preprocessors_are_checked_like_programs(tmp_path: Path) -> None:
    gone = [{"type": "pdf", "command": ["python3", "../scripts/gone.py"]}]
    missing = await read(tmp_path, suite(preprocessors=gone))
    assert "'../scripts/gone.py' does not exist" in str(missing.errors)
    off = await read(tmp_path, suite(preprocessors=PREPROCESS), enabled=False)
    assert "code graders are not enabled" in str(off.errors)
    wrong = errors_by_path(await read(tmp_path, suite(preprocessors=[{"type": "pdf"}])))
    assert "is required: the program" in wrong["preprocessors[0].command"]


def agent_answer(*blocks: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    output = {"output": [{"role": "assistant", "content": list(blocks)}]}
    parsed = parse_agent_output(json.dumps(output))
    assert parsed is not None
    return parsed.content


async def test_a_judge_grades_the_text_its_preprocessor_prints_for_a_file(tmp_path: Path) -> None:
    report = await read(tmp_path, suite(preprocessors=PREPROCESS))
    assert report.suite is not None, report.errors
    workspace = tmp_path / "ws"
    (workspace / "out").mkdir(parents=True)
    (workspace / "out" / "report.xlsx").write_bytes(b"001 eunever")
    (workspace / "out" / "notes.md").write_text("Q3 notes\r\n")
    (workspace / "out" / "blob.bin").write_bytes(b"\x00\x01")
    content = agent_answer(
        {"type": "text", "text": "Here is the report."},
        {"type": "file", "path": "out/report.xlsx", "media_type": XLSX},
        {"type": "file", "path": "out/notes.md", "media_type": "text/markdown"},
        {"type": "file", "path": "out/blob.bin", "media_type": "application/octet-stream"},
        {"type": "file", "path": "https://example.com/x.pdf", "media_type": "application/pdf"},
    )
    judge = ScriptedTarget(judge_replies=[verdict_json(1.0)])
    context = EvaluationContext(
        case=report.suite.cases[0],
        question="Go",
        candidate_answer="(the blocks as JSON)",
        judge=judge,
        judge_attempts=1,
        candidate=CandidateRun(content=content),
        programs=ProgramRunner(roots=(tmp_path,)),
        workspace_path=str(workspace),
    )
    outcome = await EVALUATORS.run(report.suite.cases[0].evaluators[0], context)
    assert outcome.result.status == "ok", outcome.result.reasoning
    [asked] = judge.judge_requests()
    graded = asked.chat_prompt[-1].content
    assert (
        "Here is the report.\n"
        f"[[ file: out/report.xlsx ]]\nrows of out/report.xlsx ({XLSX}): revenue 100\n"
        "[[ file: out/notes.md ]]\nQ3 notes\n"
    ) in graded
    assert "[file preprocessing warning] out/blob.bin (application/octet-stream): " in graded
    assert "https://example.com/x.pdf (application/pdf): remote file paths" in graded
    assert "(the blocks as JSON)" not in graded


def test_only_an_answer_with_file_blocks_keeps_its_blocks() -> None:
    assert agent_answer({"type": "text", "text": "plain"}) == ()
    assert agent_answer({"type": "file", "path": "a.csv"})[0]["path"] == "a.csv"
