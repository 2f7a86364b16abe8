"""No request chooses a program: inline files and regrade graders never name one that runs."""

from __future__ import annotations

import time
from typing import Any

import httpx
import yaml

from tests.security.conftest import SECRET, Service

LEAK = "import json, os\nprint(json.dumps({'score': 1, 'reasoning': repr(dict(os.environ))}))\n"


def test_inline_files_never_replace_a_file_of_a_workspace_root_suite(service: Service) -> None:
    folder = service.root / "inline"
    folder.mkdir()
    (folder / "suite.yaml").write_text("tests: ./cases.yaml\n")
    benign = [{"id": "c1", "criteria": "x", "input": "Hi", "assertions": ["contains: Hi"]}]
    (folder / "cases.yaml").write_text(yaml.safe_dump(benign))
    chosen = [
        {
            "id": "c1",
            "criteria": "x",
            "input": "Hi",
            "assertions": [
                {"type": "code-grader", "command": ["python3", "-c", LEAK]},
            ],
        }
    ]
    response = service.post(
        "/evaluate",
        {"suite": "inline/suite.yaml", "files": {"cases.yaml": yaml.safe_dump(chosen)}},
    )
    assert response.status_code == 422, response.text
    assert SECRET not in response.text
    problem = response.json()
    assert (
        "inline file 'cases.yaml' not accepted: the suite 'inline/suite.yaml' reads its files "
        "from its workspace root only"
    ) in problem["detail"]
    assert [error["path"] for error in problem["errors"]] == ["files.cases.yaml"]


def test_regrade_graders_that_name_programs_are_refused_by_name(service: Service) -> None:
    run_id = _finished_run(service, "regrade")
    programs: list[dict[str, Any]] = [
        {"name": "judge", "type": "code_judge", "command": ["python3", "-c", LEAK], "cwd": "/"},
        {"name": "script", "type": "script", "command": ["python3", "-c", LEAK]},
        {
            "name": "prompted",
            "type": "llm_judge",
            "prompt_program": {"command": ["python3", "-c", LEAK]},
        },
        {
            "name": "combined",
            "type": "composite",
            "evaluators": [{"name": "a", "type": "contains", "value": "Hi"}],
            "aggregator": {"type": "code_judge", "command": ["python3", "-c", LEAK]},
        },
        {"name": "placed", "type": "contains", "value": "Hi", "cwd": "/etc"},
        {
            "name": "preprocessed",
            "type": "llm_judge",
            "preprocessors": [{"type": "text/plain", "command": ["python3", "-c", LEAK]}],
        },
    ]
    response = service.post(f"/runs/{run_id}/regrade", {"evaluators": programs})
    assert response.status_code == 422, response.text
    errors = response.json()["errors"]
    assert [error["path"] for error in errors] == [f"evaluators[{i}]" for i in range(6)]
    for error, grader in zip(errors, programs, strict=True):
        assert f"grader {grader['name']!r} cannot be sent in a regrade" in error["message"]
    assert SECRET not in response.text


def test_a_refused_cwd_says_nothing_of_whether_a_path_exists(service: Service) -> None:
    run_id = _finished_run(service, "regrade-cwd")
    said = []
    for cwd in ("/etc", "/no/such/folder", "../../..", str(service.outside)):
        grader = {"name": "g", "type": "code_judge", "command": ["true"], "cwd": cwd}
        response = service.post(f"/runs/{run_id}/regrade", {"evaluators": [grader]})
        assert response.status_code == 422, response.text
        said.append(response.json()["detail"])
    assert len(set(said)) == 1, said


def _finished_run(service: Service, name: str) -> str:
    folder = service.root / name
    folder.mkdir()
    case = {"id": "c1", "criteria": "x", "input": "Hi", "assertions": ["contains: Hi"]}
    suite = {"tests": [case]}
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
    created = service.post("/runs", {"suite": f"{name}/suite.yaml"})
    assert created.status_code == 202, created.text
    run_id: str = created.json()["id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if httpx.get(f"{service.url}/runs/{run_id}", timeout=10).json()["status"] == "completed":
            return run_id
        time.sleep(0.1)
    raise AssertionError("the run did not finish")
