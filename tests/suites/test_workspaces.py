"""Reading a suite's ``workspace``: folders placed inside the workspace root, refusals named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.suites.loader import SuiteReport, check_suite
from tests.suites.helpers import check, errors_by_path, source

EACH = "workspace.hooks.before_each"
CASES = [{"id": "a", "criteria": "x", "input": "Hi"}]


async def read_file_suite(
    root: Path, workspace: Any, *, enabled: bool = True, files: dict[str, str] | None = None
) -> SuiteReport:
    (root / "evals").mkdir(parents=True, exist_ok=True)
    (root / "ws" / "src").mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        (root / name).write_text(text)
    (root / "evals" / "suite.yaml").write_text(json.dumps({"workspace": workspace, "tests": CASES}))
    return await check_suite(
        "evals/suite.yaml", file_source=source(roots=[root]), code_graders=enabled
    )


async def test_template_and_hooks_are_placed_inside_the_workspace_root(tmp_path: Path) -> None:
    workspace = {
        "template": "../ws",
        "hooks": {
            "before_all": {"command": ["python3", "setup.py", "{{workspace_path}}"]},
            "before_each": {"script": "python3 each.py", "timeout_ms": 5000, "cwd": "../ws"},
            "after_each": {"reset": "fast"},
        },
        "isolation": "per_case",
    }
    report = await read_file_suite(tmp_path, workspace)
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.workspace is not None
    placed = report.suite.workspace
    assert placed.template == str(tmp_path / "ws")
    assert placed.before_all is not None
    assert placed.before_each is not None
    assert placed.before_all.command == ("python3", "setup.py", "{{workspace_path}}")
    assert (placed.before_all.cwd, placed.before_all.timeout_seconds) == (
        str(tmp_path / "evals"),
        60.0,
    )
    assert placed.before_each.command == ("python3", "each.py")
    assert (placed.before_each.cwd, placed.before_each.timeout_seconds) == (
        str(tmp_path / "ws"),
        5.0,
    )
    assert placed.after_each is None  # only 'reset': every case starts from a fresh copy


async def test_a_workspace_file_is_read_with_paths_relative_to_it(tmp_path: Path) -> None:
    shared = "template: ./ws\nhooks:\n  before_each:\n    command: [python3, hook.py]\n"
    report = await read_file_suite(tmp_path, "../workspace.yaml", files={"workspace.yaml": shared})
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.workspace is not None
    assert report.suite.workspace.template == str(tmp_path / "ws")
    assert report.suite.workspace.before_each is not None
    assert report.suite.workspace.before_each.cwd == str(tmp_path)


async def test_disabled_hooks_are_not_run(tmp_path: Path) -> None:
    hooks = {"enabled": False, "before_each": {"command": ["python3", "x.py"]}}
    report = await read_file_suite(tmp_path, {"template": "../ws", "hooks": hooks}, enabled=False)
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.workspace is not None
    assert report.suite.workspace.hooks() == ()


@pytest.mark.parametrize(
    ("workspace", "path", "says"),
    [
        ({"docker": {"image": "python"}}, "workspace.docker", "starts no containers"),
        ({"mode": "static", "path": "/srv"}, "workspace.mode", "workspace modes"),
        ({"isolation": "shared"}, "workspace.isolation", "isolation 'shared' is not supported"),
        ({"hooks": {"after_all": {"command": ["x"]}}}, "workspace.hooks.after_all", "after_each"),
        ({"hooks": {"before_each": {"command": []}}}, f"{EACH}.command", "list"),
        (
            {"hooks": {"before_each": {"command": ["x"], "timeout_ms": 0}}},
            f"{EACH}.timeout_ms",
            "0",
        ),
        ({"hooks": {"after_each": {"reset": "x"}}}, "workspace.hooks.after_each.reset", "'x'"),
        ({"template": 3}, "workspace.template", "a number"),
        ("", "workspace", "a string"),
    ],
)
async def test_what_cannot_run_here_is_refused_by_name(
    tmp_path: Path, workspace: Any, path: str, says: str
) -> None:
    report = await read_file_suite(tmp_path, workspace)
    assert not report.valid
    assert says in errors_by_path(report)[path]


async def test_a_suite_in_the_request_body_gets_no_workspace() -> None:
    report = await check({"workspace": {"template": "ws"}, "tests": CASES}, code_graders=True)
    assert "request body" in errors_by_path(report)["workspace"]


async def test_hooks_need_code_graders_enabled(tmp_path: Path) -> None:
    workspace = {"hooks": {"before_each": {"command": ["python3", "x.py"]}}}
    report = await read_file_suite(tmp_path, workspace, enabled=False)
    assert "EVAL_CODE_GRADERS=true" in errors_by_path(report)["workspace.hooks"]


@pytest.mark.parametrize("template", ["../missing", "../../..", "/etc"])
async def test_a_template_must_be_a_folder_inside_the_root(tmp_path: Path, template: str) -> None:
    report = await read_file_suite(tmp_path, {"template": template})
    assert template in errors_by_path(report)["workspace.template"]


async def test_a_hook_folder_must_stay_inside_the_root(tmp_path: Path) -> None:
    hooks = {"before_each": {"command": ["python3", "x.py"], "cwd": "../../.."}}
    report = await read_file_suite(tmp_path, {"hooks": hooks})
    assert "leaves the workspace root" in errors_by_path(report)["workspace.hooks.before_each.cwd"]
