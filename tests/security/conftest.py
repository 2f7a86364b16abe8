"""A real service (uvicorn) with code graders on, a fake secret in its environment, and probes.

One service serves every security test that asks for ``service``: starting it once keeps
the suite fast. Each test writes its own suite under the workspace root and sends it by path,
so its programs are exactly what an operator would have put there. A probe program reports
what it could see or do in its ``details``; the tests assert on those facts (booleans: the
scrubbing of secrets cannot hide them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from testkit.server import running_service

SECRET = "sk-fake-SECRET-4f1c9a7e2b"
"""A provider key in the service's environment: nothing a program does may reveal it."""
MEMORY_LIMIT = 256 * 1024 * 1024
PROCESS_LIMIT = 48
CLI_CAP = 1024 * 1024


@dataclass
class Service:
    """The running service, its folders and a way to grade with a probe program."""

    url: str
    pid: int
    root: Path
    data: Path
    outside: Path
    stale: list[Path]

    def write_suite(self, name: str, program: str, *, grader: dict[str, Any] | None = None) -> str:
        """``<root>/<name>/suite.yaml``: one case graded by ``probe.py`` (``program``)."""
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "probe.py").write_text(program)
        suite = {
            "tests": [
                {
                    "id": "probe",
                    "criteria": "anything",
                    "input": "Say hello",
                    "assertions": [
                        {"name": "probe", "type": "code-grader", "command": ["python3", "probe.py"]}
                        | (grader or {})
                    ],
                }
            ]
        }
        (folder / "suite.yaml").write_text(yaml.safe_dump(suite))
        return f"{name}/suite.yaml"

    def grade(self, name: str, program: str, **options: Any) -> dict[str, Any]:
        """The probe's grader result (the program's own ``details`` under ``program``)."""
        response = self.post("/evaluate", {"suite": self.write_suite(name, program, **options)})
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()["results"][0]["evaluator_results"][0]
        return result

    def get(self, path: str) -> Any:
        """GET ``path``: its JSON."""
        response = httpx.get(f"{self.url}{path}", timeout=30)
        assert response.status_code == 200, response.text
        return response.json()

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        """POST ``body`` as JSON."""
        return httpx.post(f"{self.url}{path}", json=body, timeout=60)


def facts(result: dict[str, Any]) -> dict[str, Any]:
    """What the probe reported (its ``details``); fails naming the result when it has none."""
    assert result.get("status") != "error", result
    found: dict[str, Any] = result["details"]["program"]
    return found


def report(**facts: str) -> str:
    """Python lines printing a passing result whose details are ``facts`` (expressions)."""
    items = ", ".join(f"{json.dumps(name)}: {value}" for name, value in facts.items())
    return f'import json\nprint(json.dumps({{"score": 1, "details": {{{items}}}}}))\n'


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _stale_folders(base: Path) -> list[Path]:
    """Scratch folders as a process killed with -9 leaves them (one unnamed, two days old)."""
    named = base / f"eval-workspace-{_dead_pid()}-k1ll3d"
    legacy = base / "eval-grader-legacy0ld"
    for folder in (named, legacy):
        (folder / "workspace").mkdir(parents=True)
        (folder / "workspace" / "left.txt").write_text("left behind")
    old = time.time() - 2 * 24 * 3600
    os.utime(legacy, (old, old))
    return [named, legacy]


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The service: code graders on, one workspace root, low sandbox limits, a cli target."""
    base = tmp_path_factory.mktemp("security")
    root, data, outside = base / "root", base / "data", base / "outside"
    for folder in (root, data, outside):
        folder.mkdir()
    (outside / "private.txt").write_text("outside the roots")
    (root / "flood.py").write_text(
        "import sys\nchunk = 'x' * 65536\nfor _ in range(1600):\n    sys.stdout.write(chunk)\n"
    )
    targets = {
        "targets": [
            {"name": "flood", "provider": "cli", "command": ["python3", str(root / "flood.py")]},
            {"name": "slow", "provider": "mock", "response": "ok", "latency_ms": 100},
        ]
    }
    (base / "targets.yaml").write_text(yaml.safe_dump(targets))
    stale = _stale_folders(Path("/tmp"))
    env = {
        "PATH": os.environ.get("PATH", os.defpath),  # noqa: TID251 - git and python3
        "FAKE_PROVIDER_API_KEY": SECRET,
        "EVAL_DATA_DIR": str(data),
        "EVAL_WORKSPACE_ROOTS": str(root),
        "EVAL_TARGETS_FILE": str(base / "targets.yaml"),
        "EVAL_CODE_GRADERS": "true",
        "EVAL_CODE_GRADER_TIMEOUT_SECONDS": "5",
        "EVAL_SANDBOX_MEMORY_BYTES": str(MEMORY_LIMIT),
        "EVAL_SANDBOX_MAX_PROCESSES": str(PROCESS_LIMIT),
        "EVAL_CLI_MAX_OUTPUT_BYTES": str(CLI_CAP),
        "EVAL_SAMPLE_RUN": "false",
    }
    try:
        with running_service(env) as (url, process):
            yield Service(url, process.pid, root, data, outside, stale)
    finally:
        for folder in stale:
            subprocess.run(["rm", "-rf", str(folder)], check=False)
