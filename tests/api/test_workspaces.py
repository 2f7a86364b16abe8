"""Agent workspaces end to end: a real agent program edits its own copy of the template.

The suite is a file under a workspace root with a ``workspace``: a template, hooks (real
programs) and a code grader that reads ``workspace_path`` and ``file_changes``. The agent is
a ``cli`` target running a script; each case must see only its own fresh copy.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.settings import Settings
from tests.conftest import ClientFactory, wait_for_run

AGENT = """\
from pathlib import Path
ready = Path("ready.txt").read_text()
Path("hello.txt").write_text(Path("hello.txt").read_text() + "world\\n")
Path("src/new.py").write_text("print(2)\\n")
Path("obsolete.log").unlink()
print("ready: " + ready)
"""
HOOK = """\
import json, sys
from pathlib import Path
step, folder = sys.argv[1], Path(sys.argv[2])
given = json.load(sys.stdin)
assert given["workspace_path"] == str(folder), given
if step == "fail":
    sys.stderr.write("no database for the agent\\n")
    sys.exit(3)
if step == "after":  # nothing outside the case is writable: its report is its failure
    sys.stderr.write(f"after-check {given['eval_case_id']} {(folder / 'src' / 'new.py').exists()}")
    sys.exit(7)
else:
    with open(folder / "ready.txt", "a") as ready:
        ready.write(step + "\\n")
"""
GRADER = """\
import json, os, sys
case = json.load(sys.stdin)
changes, folder = case["file_changes"], case["workspace_path"]
checks = {
    "edited": "+++ b/hello.txt" in changes and "+world" in changes,
    "created": "--- /dev/null\\n+++ b/src/new.py" in changes,
    "deleted": "--- a/obsolete.log\\n+++ /dev/null" in changes,
    "hooks not counted": "ready.txt" not in changes,
    "folder there": folder is None or os.path.isfile(os.path.join(folder, "src", "new.py")),
}
print(json.dumps({
    "assertions": [{"text": name, "passed": ok} for name, ok in checks.items()],
    "details": {"folder": folder},
}))
"""


def write_project(root: Path, *, before_each: str = "each") -> None:
    """The template, the programs, the suite and the targets file."""
    (root / "ws" / "src").mkdir(parents=True)
    (root / "ws" / "hello.txt").write_text("hello\n")
    (root / "ws" / "obsolete.log").write_text("old\n")
    (root / "ws" / "src" / "main.py").write_text("print(1)\n")
    (root / "evals").mkdir()
    (root / "evals" / "hook.py").write_text(HOOK)
    (root / "evals" / "grade.py").write_text(GRADER)
    (root / "agent.py").write_text(AGENT)
    hook = ["python3", "hook.py"]
    suite = {
        "workspace": {
            "template": "../ws",
            "hooks": {
                "before_all": {"command": [*hook, "all", "{{workspace_path}}"]},
                "before_each": {"command": [*hook, before_each, "{{workspace_path}}"]},
                "after_each": {"command": [*hook, "after", "{{workspace_path}}"]},
            },
        },
        "target": "agent",
        "tests": [
            {
                "id": case_id,
                "criteria": "Edits the files",
                "input": "Edit hello.txt, create src/new.py, delete obsolete.log.",
                "assertions": [
                    {
                        "name": "files",
                        "type": "code-grader",
                        "command": ["python3", "grade.py"],
                    }
                ],
            }
            for case_id in ("first", "second")
        ],
    }
    (root / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    targets = {
        "targets": [
            {
                "name": "agent",
                "provider": "cli",
                "command": [sys.executable, str(root / "agent.py")],
            }
        ]
    }
    (root / "targets.yaml").write_text(yaml.safe_dump(targets))


class Warnings(logging.Handler):
    """The warnings of ``app.evaluation`` (a failing after_each hook is logged there)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def warnings() -> Iterator[Warnings]:
    handler = Warnings()
    logger = logging.getLogger("app.evaluation")
    disabled = logger.disabled  # import-linter's logging set-up (tests/test_layers.py) disables it
    logger.disabled = False
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.disabled = disabled


def after_checks(warnings: Warnings) -> list[str]:
    """What each case's after_each hook saw (it reports it by failing, which is logged)."""
    found = re.findall(r"after-check (\w+ \w+)", "\n".join(warnings.lines))
    return sorted(set(found))


def settings(root: Path, database_url: str | None = None) -> Settings:
    extra: dict[str, Any] = {"database_url": database_url} if database_url else {}
    return Settings(
        data_dir=root / "data",
        workspace_roots=[root],
        targets_file=root / "targets.yaml",
        code_graders=True,
        sample_run=False,
        **extra,
    )


def assert_worked_in_fresh_copies(
    records: list[dict[str, Any]], root: Path, warnings: Warnings
) -> None:
    assert [record["status"] for record in records] == ["passed", "passed"], [
        r["error"] for r in records
    ]
    assert {record["candidate_answer"] for record in records} == {"ready: all\neach"}
    changes = records[0]["file_changes"]
    assert changes == records[1]["file_changes"]  # the second case never saw the first's edits
    assert changes.startswith("diff --git a/hello.txt b/hello.txt\n--- a/hello.txt")
    assert "deleted file mode 100644\n--- a/obsolete.log\n+++ /dev/null\n@@ -1 +0,0 @@\n-old" in (
        changes
    )
    folders = {record["evaluator_results"][0]["details"]["program"]["folder"] for record in records}
    assert len(folders) == 2
    assert not any(Path(folder).exists() for folder in folders)
    assert after_checks(warnings) == ["first True", "second True"]
    assert (root / "ws" / "hello.txt").read_text() == "hello\n"  # the template is untouched


async def test_each_case_works_in_a_fresh_copy_and_its_graders_see_what_changed(
    tmp_path: Path, make_client: ClientFactory, warnings: Warnings
) -> None:
    write_project(tmp_path)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 200, response.text
    assert_worked_in_fresh_copies(response.json()["results"], tmp_path, warnings)


async def test_a_durable_run_sets_up_workspaces_from_its_stored_suite(
    tmp_path: Path, make_client: ClientFactory, database_url: str, warnings: Warnings
) -> None:
    write_project(tmp_path)
    async with make_client(settings(tmp_path, database_url)) as client:
        created = await client.post("/runs", json={"suite": "evals/suite.yaml"})
        assert created.status_code == 202, created.text
        run = await wait_for_run(client, created.json()["id"])
        results = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
        page = (await client.get(f"/ui/fragments/runs/{run['id']}/cases/0")).text
    assert run["status"] == "completed", run
    assert_worked_in_fresh_copies(sorted(results, key=lambda r: r["eval_id"]), tmp_path, warnings)
    assert '<span class="diff-file">+++ b/src/new.py</span>' in page  # the viewer shows the diff
    assert '<span class="diff-add">+world</span>' in page
    assert '<span class="diff-del">-old</span>' in page


async def test_a_regrade_gives_graders_the_changes_the_agent_made_in_the_first_run(
    tmp_path: Path, make_client: ClientFactory, database_url: str
) -> None:
    write_project(tmp_path)
    async with make_client(settings(tmp_path, database_url)) as client:
        created = await client.post("/runs", json={"suite": "evals/suite.yaml"})
        run = await wait_for_run(client, created.json()["id"])
        first = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
        regrade = await client.post(f"/runs/{run['id']}/regrade")
        assert regrade.status_code == 202, regrade.text
        again = await wait_for_run(client, regrade.json()["id"])
        second = (await client.get(f"/runs/{again['id']}/results")).json()["results"]

    by_id = {record["eval_id"]: record for record in first}
    assert len(second) == 2
    for record in second:
        assert record["status"] == "passed", record["evaluator_results"]
        assert record["file_changes"] == by_id[record["eval_id"]]["file_changes"]
        assert "+++ b/src/new.py" in record["file_changes"]
        details = record["evaluator_results"][0]["details"]["program"]
        assert details["folder"] is None  # graded without a workspace: nothing ran again


async def test_a_failing_setup_hook_fails_its_case_naming_the_hook(
    tmp_path: Path, make_client: ClientFactory, warnings: Warnings
) -> None:
    write_project(tmp_path, before_each="fail")
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    records = response.json()["results"]
    assert [record["status"] for record in records] == ["error", "error"]
    error = records[0]["error"]
    assert error.startswith("workspace hook 'before_each' failed: "), error
    assert "exited with code 3: no database for the agent" in error
    assert records[0]["candidate_answer"] is None  # the agent never ran
    assert after_checks(warnings) == ["first False", "second False"]


async def test_a_suite_with_a_workspace_validates_with_its_folders(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 200, response.text
    assert response.json()["valid"] is True, response.json()
