"""AgentV's July ``environment`` and ``extensions`` end to end: real programs in the sandbox.

The suite (prompts/providers/vars layout) names a host ``environment`` (its ``workdir``
copied for each case, its ``setup`` run first) and a JavaScript lifecycle extension
(``file://ext.mjs:beforeEach``), which node runs with the case's context. The agent reads
what both wrote in its workspace.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
import yaml

from tests.api.test_workspaces import settings
from tests.conftest import ClientFactory

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
        ("agentv:agent-rules", "the built-in extension 'agentv:agent-rules'"),
        ("file://ext.mjs:afterAll", "an 'afterAll' extension"),
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


async def test_a_workdir_that_is_not_there_is_an_error_of_the_environment_naming_it(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path)
    suite = yaml.safe_load((tmp_path / "evals" / "suite.yaml").read_text())
    suite["environment"]["workdir"] = "./repo"  # AgentV's samples clone it in their setup
    (tmp_path / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/validate", json={"suite": "evals/suite.yaml"})
    errors = {error["path"]: error["message"] for error in response.json().get("errors", [])}
    assert errors["environment.workdir"].startswith("workdir 'repo': no such folder"), errors


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
