"""AgentV's July ``environment`` and ``extensions`` end to end: real programs in the sandbox.

The suite (prompts/providers/vars layout) names a host ``environment`` (its ``workdir``
copied for each case, its ``setup`` run first) and a JavaScript lifecycle extension
(``file://ext.mjs:beforeEach``), which node runs with the case's context. The agent reads
what both wrote in its workspace.
"""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.api.test_workspaces import settings
from tests.conftest import ClientFactory, wait_for_run

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

AGENT = """\
from pathlib import Path
print(Path("ready.txt").read_text().strip().replace("\\n", " | "))
"""
SETUP = """\
import json, sys
from pathlib import Path
given = json.load(sys.stdin)
assert given["workspace_path"] == sys.argv[1], given
with open(Path(sys.argv[1]) / "ready.txt", "a") as ready:
    ready.write("setup\\n")
"""
EXTENSION = """\
import { appendFileSync } from "node:fs";
import { basename, join } from "node:path";
export async function beforeEach(context) {
  const line = `extension ${context.eval_case_id} ${basename(context.eval_dir)}\\n`;
  appendFileSync(join(context.workspace_path, "ready.txt"), line);
}
"""


def write_project(root: Path, extension: str = "file://ext.mjs:beforeEach") -> None:
    (root / "ws").mkdir()
    (root / "ws" / "notes.txt").write_text("template\n")
    (root / "evals").mkdir()
    (root / "evals" / "setup.py").write_text(SETUP)
    (root / "evals" / "ext.mjs").write_text(EXTENSION)
    (root / "agent.py").write_text(AGENT)
    suite = {
        "environment": {
            "type": "host",
            "workdir": "../ws/",
            "setup": {"command": ["python3", "setup.py", "{{workspace_path}}"]},
        },
        "extensions": [extension],
        "providers": ["agent"],
        "prompts": ["{{ input }}"],
        "tests": [
            {
                "id": case_id,
                "vars": {"input": "What is ready?"},
                "assert": [{"type": "contains", "value": f"extension {case_id} evals"}],
            }
            for case_id in ("first", "second")
        ],
    }
    (root / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    command = [sys.executable, str(root / "agent.py")]
    agent = {"name": "agent", "provider": "cli", "command": command}
    (root / "targets.yaml").write_text(yaml.safe_dump({"targets": [agent]}))


async def test_the_environment_setup_then_the_extension_prepare_each_case_workspace(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 200, response.text
    records = sorted(response.json()["results"], key=lambda record: record["eval_id"])
    assert [record["status"] for record in records] == ["passed", "passed"], [
        (record["error"], record["candidate_answer"]) for record in records
    ]
    answers = [record["candidate_answer"] for record in records]
    assert answers == ["setup | extension first evals", "setup | extension second evals"]


@pytest.mark.parametrize(
    ("extension", "named"),
    [
        ("agentv:workspace", "the built-in extension 'agentv:workspace'"),
    ],
)
async def test_an_extension_that_cannot_run_here_is_refused_by_name(
    tmp_path: Path, make_client: ClientFactory, extension: str, named: str
) -> None:
    write_project(tmp_path, extension)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    body = response.json()
    errors = {error["path"]: error["message"] for error in body.get("errors", [])}
    assert errors["extensions[0]"].startswith(f"{named} is not supported"), body


async def test_a_docker_environment_is_refused_by_name(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path)
    suite = yaml.safe_load((tmp_path / "evals" / "suite.yaml").read_text())
    suite["environment"] = {"type": "docker", "image": "python:3.11-slim"}
    (tmp_path / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert errors["environment.type"].startswith("environment type 'docker' is not supported")


async def test_a_typescript_extension_runs_under_bun(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path, "file://ext.ts:beforeEach")
    (tmp_path / "evals" / "ext.ts").write_text(EXTENSION)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    assert response.json()["valid"], response.json()


MAKER = """\
import os, sys
from pathlib import Path
made = Path(sys.argv[1])
assert str(made) == os.environ["AGENTV_ENVIRONMENT_WORKDIR"], (made, os.environ)
(made / "ready.txt").write_text(f"made {os.environ['AGENTV_EXPORT_TEST']} {sys.argv[2]}")
"""


def with_environment(root: Path, **environment: object) -> None:
    """The project's suite with its environment changed (no extension)."""
    suite = yaml.safe_load((root / "evals" / "suite.yaml").read_text())
    suite["environment"].update(environment)
    suite.pop("extensions")
    suite["tests"][0]["assert"] = [{"type": "contains", "value": "made fixture main"}]
    suite["tests"][1]["assert"] = [{"type": "contains", "value": "made fixture main"}]
    (root / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))


async def test_a_workdir_the_setup_makes_is_each_cases_folder_made_by_it(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    # AgentV's repo-lifecycle sample: `bash ../scripts/materialize-repo.sh URL main ./repo`.
    write_project(tmp_path)
    (tmp_path / "evals" / "make.py").write_text(MAKER)
    setup = {"command": ["python3", "make.py", "./repo/", "main"], "cwd": "."}
    with_environment(tmp_path, workdir="./repo", setup=setup, env={"AGENTV_EXPORT_TEST": "fixture"})
    async with make_client(settings(tmp_path)) as client:
        checked = (await client.post("/validate", json={"suite": "evals/suite.yaml"})).json()
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert checked["valid"], checked
    assert any("workdir 'repo' is no folder" in w for w in checked["warnings"]), checked
    records = response.json()["results"]
    assert [r["candidate_answer"] for r in records] == ["made fixture main"] * 2, records
    assert [r["status"] for r in records] == ["passed", "passed"]
    assert not (tmp_path / "evals" / "repo").exists()  # the case's folder, not the suite's


async def test_a_setup_that_fails_is_an_error_of_each_case_naming_it(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    # AgentV's samples clone from the network in a script of theirs: here there is neither.
    write_project(tmp_path)
    setup = {"command": ["bash", "../scripts/materialize-repo.sh", "./repo"], "cwd": "."}
    with_environment(tmp_path, workdir="./repo", setup=setup)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    records = response.json()["results"]
    assert [r["status"] for r in records] == ["error", "error"], records
    for record in records:
        assert record["error"].startswith("the environment's setup failed"), record["error"]
        assert "materialize-repo.sh" in record["error"], record["error"]


async def test_a_workdir_that_is_not_there_without_a_setup_is_an_error_naming_it(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path)
    suite = yaml.safe_load((tmp_path / "evals" / "suite.yaml").read_text())
    suite["environment"]["workdir"] = "./repo"
    del suite["environment"]["setup"]
    (tmp_path / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert errors["environment.workdir"].startswith("workdir 'repo': no such folder"), errors


@pytest.mark.parametrize(
    ("env", "path", "message"),
    [
        ({"1X": "a"}, "environment.env", "'1X' is not a variable name"),
        ({"X": ["a"]}, "environment.env.X", "must be a string"),
        (["X=a"], "environment.env", "must be a mapping of names to values"),
    ],
)
async def test_an_environment_env_that_is_not_variables_is_an_error(
    tmp_path: Path, make_client: ClientFactory, env: object, path: str, message: str
) -> None:
    write_project(tmp_path)
    with_environment(tmp_path, env=env)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert errors[path].startswith(message), errors


async def test_a_suite_gives_its_workspace_once(tmp_path: Path, make_client: ClientFactory) -> None:
    write_project(tmp_path)
    suite = yaml.safe_load((tmp_path / "evals" / "suite.yaml").read_text())
    suite["workspace"] = {"template": "../ws"}
    (tmp_path / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert "give the workspace once" in errors["environment"], errors


async def test_an_extension_module_that_is_not_there_is_an_error_at_validation(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path, "file://../scripts/missing.mjs:beforeAll")
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert errors["extensions[0]"] == "its module '../scripts/missing.mjs' does not exist"


async def test_a_shell_setup_writes_into_the_workdir_its_variable_names(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    # AgentV's promptfoo-export host-environment fixture, its setup and env as written
    write_project(tmp_path)
    script = 'echo "ready $AGENTV_EXPORT_TEST" > "$AGENTV_ENVIRONMENT_WORKDIR/ready.txt"'
    setup = {"command": ["bash", "-lc", script], "timeout_ms": 120000}
    with_environment(tmp_path, setup=setup, env={"AGENTV_EXPORT_TEST": "fixture"})
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    answers = [record["candidate_answer"] for record in response.json()["results"]]
    assert answers == ["ready fixture", "ready fixture"], response.json()["results"]


CATCH_ALL = """\
import json
from pathlib import Path
def extension_hook(hook_name, context):
    with open(Path(context["workspace_path"]) / "ready.txt", "a") as ready:
        ready.write(f"{hook_name} {context['eval_case_id']}\\n")
"""


CATCH_ALL_JS = """\
import { appendFileSync } from "node:fs";
import { join } from "node:path";
export function extension_hook(hookName, context) {
  const line = `${hookName} ${context.eval_case_id}\\n`;
  appendFileSync(join(context.workspace_path, "ready.txt"), line);
}
"""


@pytest.mark.parametrize(("module", "text"), [("hooks.py", CATCH_ALL), ("hooks.mjs", CATCH_ALL_JS)])
async def test_a_function_of_any_name_is_called_at_each_point_with_its_name(
    tmp_path: Path, make_client: ClientFactory, module: str, text: str
) -> None:
    """promptfoo's ``file://hooks.py:extension_hook``: one function, every hook point."""
    write_project(tmp_path, f"file://{module}:extension_hook")
    (tmp_path / "evals" / module).write_text(text)
    suite = yaml.safe_load((tmp_path / "evals" / "suite.yaml").read_text())
    for test in suite["tests"]:
        test["assert"] = [{"type": "contains", "value": f"beforeEach {test['id']}"}]
    (tmp_path / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 200, response.text
    records = sorted(response.json()["results"], key=lambda record: record["eval_id"])
    answers = [record["candidate_answer"] for record in records]
    assert answers == [
        "setup | beforeAll first | beforeEach first",
        "setup | beforeAll second | beforeEach second",
    ], [record["error"] for record in records]


async def test_a_catch_all_extension_module_that_is_not_there_is_said_once(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path, "file://hooks.py:extension_hook")
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = [error["message"] for error in response.json().get("errors", [])]
    assert errors == ["its module 'hooks.py' does not exist"], errors


AFTER_ALL = """\
import sys
def afterAll(context):
    seen = sorted(f"{r['eval_id']}={r['status']}" for r in context["results"])
    sys.exit("seen " + " ".join(seen))
"""


@pytest.mark.parametrize("durable", [False, True])
async def test_after_all_runs_once_with_the_results_and_its_failure_is_only_logged(
    tmp_path: Path, make_client: ClientFactory, caplog: pytest.LogCaptureFixture, durable: bool
) -> None:
    """promptfoo's ``afterAll``: once, when every case is done; a failure fails nothing."""
    write_project(tmp_path, "file://hooks.py:afterAll")
    (tmp_path / "evals" / "hooks.py").write_text(AFTER_ALL)
    suite = yaml.safe_load((tmp_path / "evals" / "suite.yaml").read_text())
    for test in suite["tests"]:
        test["assert"] = [{"type": "contains", "value": "setup"}]
    (tmp_path / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    caplog.set_level(logging.WARNING, logger="app.evaluation")
    async with make_client(settings(tmp_path)) as client:
        if durable:
            created = await client.post("/runs", json={"suite": "evals/suite.yaml"})
            assert created.status_code == 202, created.text
            run = await wait_for_run(client, created.json()["id"])
            assert run["status"] == "completed", run
        else:
            response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
            assert response.status_code == 200, response.text
            statuses = [record["status"] for record in response.json()["results"]]
            assert statuses == ["passed", "passed"]
    failures = [r.getMessage() for r in caplog.records if "afterAll" in r.getMessage()]
    assert len(failures) == 1, failures
    assert "seen first=passed second=passed" in failures[0], failures
