"""A workspace's repositories end to end: a real agent reads the checkout it was given.

The suite names a repository by its public URL, as AgentV's files do; the operator maps
that URL to a local copy (``EVAL_GIT_MIRRORS``) or allows a remote prefix served on
127.0.0.1 (``EVAL_GIT_REMOTES``). The agent is a ``cli`` target running a script in the
case's workspace.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from app.settings import Settings
from testkit.git_repos import git, make_repository, serve_repositories
from tests.conftest import ClientFactory, wait_for_run

URL = "https://github.com/EntityProcess/agentv.git"
AGENT = """\
import json, subprocess
from pathlib import Path
package = json.loads(Path("repo/packages/core/package.json").read_text())
head = subprocess.run(["git", "-C", "repo", "log", "-1", "--format=%s"],
                      capture_output=True, text=True).stdout.strip()
Path("repo/README.md").write_text("# edited by the agent\\n")
print(package["name"] + " at " + head)
"""


def write_project(root: Path, url: str = URL) -> None:
    (root / "evals").mkdir(parents=True)
    (root / "agent.py").write_text(AGENT)
    suite = {
        "workspace": {"repos": [{"path": "./repo", "repo": url, "commit": "v1"}]},
        "target": "agent",
        "tests": [
            {
                "id": case_id,
                "criteria": "Reports the core package",
                "input": "Read repo/packages/core/package.json and say its name.",
                "assertions": [{"type": "equals", "value": "@acme/core at one"}],
            }
            for case_id in ("first", "second", "third")
        ],
    }
    (root / "evals" / "suite.yaml").write_text(yaml.safe_dump(suite))
    command = [sys.executable, str(root / "agent.py")]
    agent = {"name": "agent", "provider": "cli", "command": command}
    (root / "targets.yaml").write_text(yaml.safe_dump({"targets": [agent]}))


def settings(root: Path, database_url: str | None = None, **git: Any) -> Settings:
    extra: dict[str, Any] = {"database_url": database_url} if database_url else {}
    return Settings(
        data_dir=root / "data",
        workspace_roots=[root],
        targets_file=root / "targets.yaml",
        sample_run=False,
        **git,
        **extra,
    )


def assert_each_case_read_its_own_checkout(records: list[dict[str, Any]]) -> None:
    assert [record["status"] for record in records] == ["passed"] * 3, [
        record["error"] for record in records
    ]
    for record in records:  # each case changed its own copy only
        assert "+# edited by the agent" in record["file_changes"]
        assert "-# core" in record["file_changes"]


async def test_a_repository_is_cloned_from_the_operators_mirror_for_each_case(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    make_repository(tmp_path / "mirrors" / "agentv")
    write_project(tmp_path)
    mirrors = {URL: tmp_path / "mirrors" / "agentv"}
    async with make_client(settings(tmp_path, git_mirrors=mirrors)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 200, response.text
    assert_each_case_read_its_own_checkout(response.json()["results"])
    assert git(tmp_path / "mirrors" / "agentv", "status", "--porcelain") == ""  # untouched


async def test_a_durable_run_clones_an_allowed_remote_once(
    tmp_path: Path, make_client: ClientFactory, database_url: str
) -> None:
    make_repository(tmp_path / "work")
    git(tmp_path, "clone", "--quiet", "--bare", "work", "served/agentv.git")
    with serve_repositories(tmp_path / "served") as served:
        write_project(tmp_path, served.url + "agentv.git")
        options = settings(tmp_path, database_url, git_remotes=[served.url])
        async with make_client(options) as client:
            created = await client.post("/runs", json={"suite": "evals/suite.yaml"})
            assert created.status_code == 202, created.text
            run = await wait_for_run(client, created.json()["id"])
            results = (await client.get(f"/runs/{run['id']}/results")).json()["results"]
    assert run["status"] == "completed", run
    assert_each_case_read_its_own_checkout(results)
    assert [path for path in served.requests if "info/refs" in path] == [
        "/agentv.git/info/refs?service=git-upload-pack"
    ]


async def test_a_repository_the_operator_does_not_allow_is_a_problem_naming_it(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    write_project(tmp_path)
    async with make_client(settings(tmp_path)) as client:
        response = await client.post("/evaluate", json={"suite": "evals/suite.yaml"})
    assert response.status_code == 422, response.text
    problem = response.json()
    error = next(e for e in problem["errors"] if e["path"] == "workspace.repos[0]")
    assert error["message"].startswith(f"{URL!r} is not allowed: ")
    assert "EVAL_GIT_MIRRORS" in error["message"]
