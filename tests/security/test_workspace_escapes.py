"""Workspaces hold nothing that leads out of the case: gitfiles, symlinks, stale folders."""

from __future__ import annotations

import os
import subprocess

import yaml

from tests.security.conftest import Service, facts, report


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def test_a_local_repository_whose_git_is_a_gitfile_to_elsewhere_is_refused(
    service: Service,
) -> None:
    real = service.outside / "real"
    real.mkdir()
    _git("-C", str(real), "init", "--quiet")
    (real / "secret.txt").write_text("outside the root")
    _git("-C", str(real), "add", ".")
    _git("-C", str(real), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    folder = service.root / "gitfile"
    (folder / "repo").mkdir(parents=True)
    (folder / "repo" / ".git").write_text(f"gitdir: {real / '.git'}\n")
    suite = {
        "workspace": {"repos": [{"path": "code", "source": {"type": "local", "path": "repo"}}]},
        "tests": [{"id": "c1", "criteria": "x", "input": "Hi"}],
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
    response = service.post("/evaluate", {"suite": "gitfile/suite.yaml"})
    assert response.status_code == 422, response.text
    assert "its .git is a file pointing to another repository (a gitfile)" in response.text
    assert "outside the root" not in response.text


def _template_suite(service: Service, name: str, link: str) -> str:
    folder = service.root / name
    (folder / "ws" / "docs").mkdir(parents=True)
    (folder / "ws" / "docs" / "notes.txt").write_text("inside")
    os.symlink(link, folder / "ws" / "link")
    program = (
        "import json, os, sys\n"
        "case = json.load(sys.stdin)\n"
        "link = os.path.join(case['workspace_path'], 'link')\n"
        + report(is_link="os.path.islink(link)", text="open(link).read()")
    )
    (folder / "probe.py").write_text(program)
    suite = {
        "workspace": {"template": "ws"},
        "tests": [
            {
                "id": "c1",
                "criteria": "x",
                "input": "Hi",
                "assertions": [{"type": "code-grader", "command": ["python3", "probe.py"]}],
            }
        ],
    }
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
    return f"{name}/suite.yaml"


def test_a_template_symlink_inside_is_copied_as_what_it_points_to(service: Service) -> None:
    suite = _template_suite(service, "symlink-inside", "docs/notes.txt")
    response = service.post("/evaluate", {"suite": suite})
    assert response.status_code == 200, response.text
    result = response.json()["results"][0]["evaluator_results"][0]
    assert facts(result) == {"is_link": False, "text": "inside"}


def test_a_template_symlink_leading_outside_is_refused(service: Service) -> None:
    suite = _template_suite(service, "symlink-outside", str(service.outside))
    response = service.post("/evaluate", {"suite": suite})
    assert response.status_code == 200, response.text
    record = response.json()["results"][0]
    assert record["status"] == "error"
    assert "its symlink 'link' points outside it" in record["error"]
    assert not (service.outside / "planted").exists()


def test_scratch_folders_of_killed_processes_are_swept_at_start_up(service: Service) -> None:
    assert service.stale
    assert not any(folder.exists() for folder in service.stale)
