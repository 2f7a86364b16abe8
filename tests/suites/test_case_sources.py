"""Cases read from other files: paths, ``file://`` items, globs, folders, imports, CSV."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.formatting.messages import FilePart, Message
from app.suites.files.case_files import csv_cases, expected_grader
from app.suites.loader import check_suite
from tests.suites.helpers import check, errors_by_path, source

JSONL = (
    '{"id": "j1", "criteria": "Says hi", "input": "Hi"}\n'
    "\n"
    '{"id": "j2", "criteria": "Says bye", "input": "Bye"}\n'
)
YAML_LIST = "- id: y1\n  criteria: Adds\n  input: 1+1?\n"
JSON_LIST = json.dumps({"tests": [{"id": "js1", "criteria": "x", "input": "Hi"}]})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    evals = tmp_path / "evals"
    (evals / "cases" / "more").mkdir(parents=True)
    (evals / "cases" / "a.jsonl").write_text(JSONL)
    (evals / "cases" / "b.yaml").write_text(YAML_LIST)
    (evals / "cases" / "more" / "c.json").write_text(JSON_LIST)
    (evals / "cases" / "notes.txt").write_text("not cases")
    return tmp_path


async def suite_in(workspace: Path, text: str) -> list[str]:
    (workspace / "evals" / "suite.yaml").write_text(text)
    report = await check_suite("evals/suite.yaml", file_source=source(roots=[workspace]))
    assert report.valid, report.errors
    assert report.suite is not None
    return [case.id for case in report.suite.cases]


async def test_tests_may_be_a_path_to_a_file_of_cases(workspace: Path) -> None:
    assert await suite_in(workspace, "tests: ./cases/a.jsonl\n") == ["j1", "j2"]


async def test_file_items_and_globs_mix_with_inline_cases(workspace: Path) -> None:
    ids = await suite_in(
        workspace,
        "tests:\n"
        "  - file://cases/b.yaml\n"
        "  - {id: inline, criteria: x, input: Hi}\n"
        "  - file://cases/**/*.json\n",
    )
    assert ids == ["y1", "inline", "js1"]


async def test_a_folder_holds_case_files_and_case_folders(workspace: Path) -> None:
    folder = workspace / "evals" / "cases" / "refund"
    folder.mkdir()
    (folder / "case.yaml").write_text(
        "criteria: Applies the policy\n"
        "input:\n  - role: user\n    content:\n      - {type: file, value: policy.md}\n"
    )
    (folder / "policy.md").write_text("30 days")
    ids = await suite_in(workspace, "tests: cases\n")
    assert ids == ["j1", "j2", "y1", "refund"]
    report = await check_suite("evals/suite.yaml", file_source=source(roots=[workspace]))
    assert report.suite is not None
    refund = report.suite.cases[-1]
    assert refund.input_messages == (
        Message(role="user", content=[FilePart(value="cases/refund/policy.md")]),
    )
    assert report.files == {"cases/refund/policy.md": "30 days"}


async def test_imports_tests_paths_are_read(workspace: Path) -> None:
    ids = await suite_in(
        workspace,
        "imports:\n  tests:\n    - path: cases/b.yaml\n    - path: cases/a.jsonl\n"
        "tests:\n  - {id: own, criteria: x, input: Hi}\n",
    )
    assert ids == ["own", "y1", "j1", "j2"]


async def test_case_files_resolve_from_inline_files_too() -> None:
    report = await check("tests: cases.jsonl\n", files={"cases.jsonl": JSONL})
    assert report.valid, report.errors
    assert report.suite is not None
    assert [case.id for case in report.suite.cases] == ["j1", "j2"]


async def test_errors_inside_a_case_file_name_the_file_and_line() -> None:
    report = await check(
        "tests: cases.jsonl\n",
        files={
            "cases.jsonl": '{"id": "a", "criteria": "x", "input": "Hi"}\n{"id": "a", "input": 1}\n'
        },
    )
    errors = errors_by_path(report)
    assert errors["tests@cases.jsonl[1].id"].startswith("duplicate case id 'a'")


@pytest.mark.parametrize(
    ("tests", "files", "message"),
    [
        ("missing.jsonl", {}, "file 'missing.jsonl': file not found"),
        ("cases.txt", {"cases.txt": "x"}, "unsupported file of cases '.txt'"),
        ("gen.py", {"gen.py": "print()"}, "a program would run"),
        ("bad.jsonl", {"bad.jsonl": "{oops\n"}, "line 1 is not JSON"),
        ("list.yaml", {"list.yaml": "a: 1\n"}, "must hold a list of cases"),
        ("'file://nothing/*.yaml'", {}, "the pattern matched no files"),
        ("../../outside.jsonl", {}, "leaves the workspace root"),
    ],
)
async def test_case_sources_that_cannot_be_read_are_errors_naming_the_file(
    tests: str, files: dict[str, str], message: str
) -> None:
    report = await check(f"tests: {tests}\n", files=files)
    assert not report.valid
    assert any(message in error.message for error in report.errors), report.errors


async def test_case_folder_with_a_workspace_is_refused(workspace: Path) -> None:
    folder = workspace / "evals" / "cases" / "agentic"
    (folder / "workspace").mkdir(parents=True)
    (folder / "case.yaml").write_text("criteria: x\ninput: Hi\n")
    (workspace / "evals" / "suite.yaml").write_text("tests: cases\n")
    report = await check_suite("evals/suite.yaml", file_source=source(roots=[workspace]))
    assert any("workspace/ is not supported" in error.message for error in report.errors)


def test_csv_magic_columns_become_case_fields() -> None:
    [case] = csv_cases(
        "id,vars.input,topic,__expected,__expected2,__metric,__threshold,__metadata:source,"
        "__description,__prefix\n"
        "r1,Reply hi,greeting,icontains:hello,not-contains-any:bye,cheer,0.8,csv,Greets,>> \n"
    )
    assert case == {
        "id": "r1",
        "criteria": "Greets",
        "threshold": 0.8,
        "assert": [
            {"type": "icontains", "value": "hello", "metric": "cheer-1"},
            {"type": "not-contains-any", "value": ["bye"], "metric": "cheer-2"},
        ],
        "vars": {"input": "Reply hi", "topic": "greeting"},
        "metadata": {"source": "csv"},
    }


@pytest.mark.parametrize(
    ("expected", "grader"),
    [
        ("Paris", {"type": "equals", "value": "Paris"}),
        ("contains:Paris", {"type": "contains", "value": "Paris"}),
        ("llm-rubric: Is polite", {"type": "llm-rubric", "value": "Is polite"}),
        ("grade: Is polite", {"type": "llm-rubric", "value": "Is polite"}),
        ("latency(500)", {"type": "latency", "threshold": 500.0}),
        ("javascript: output.length < 9", {"type": "javascript", "value": "output.length < 9"}),
        ("file://check.py", {"type": "script", "command": ["python", "check.py"]}),
    ],
)
def test_promptfoo_short_form_graders(expected: str, grader: dict[str, object]) -> None:
    assert expected_grader(expected) == grader


async def test_an_unsupported_csv_column_is_refused() -> None:
    report = await check(
        "tests: t.csv\n", files={"t.csv": "id,__config:__expected:threshold\na,1\n"}
    )
    assert any("unsupported CSV column" in error.message for error in report.errors)
