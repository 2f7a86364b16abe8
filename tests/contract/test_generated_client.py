"""A typed client generated from openapi/openapi.json (openapi-python-client) works for real.

The client is generated at test time, offline, into a temporary folder; it must build with
no warning but the YAML bodies' (the generator has no YAML support), and then drive a real
uvicorn process with API keys on: ``/format``, ``/evaluate`` and ``/runs``.
"""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from app.schemas.suite_examples import QUICK_SUITE
from testkit.server import running_service

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "eval_execution_client"
KEY = "client-test-key-0123"
WARNING = re.compile(r"^WARNING parsing (\S+ \S+) within \S+\.\n\n(.+)$", re.MULTILINE)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ModuleType, str]]:
    """The generated package (imported from a temporary folder) and the generator's output."""
    folder = tmp_path_factory.mktemp("client")
    bin_dir = str(Path(sys.executable).parent)
    document = str(ROOT / "openapi" / "openapi.json")
    result = subprocess.run(
        [f"{bin_dir}/openapi-python-client", "generate", "--meta", "none", "--path", document],
        cwd=folder,
        env={"PATH": f"{bin_dir}:{os.defpath}", "HOME": str(folder)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE), result.stdout + result.stderr
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def module(package: ModuleType, name: str) -> Any:
    return importlib.import_module(f"{package.__name__}.{name}")


def test_the_client_builds_with_no_warning_but_the_yaml_bodies(
    generated: tuple[ModuleType, str],
) -> None:
    _, output = generated
    warnings = WARNING.findall(output)

    assert {message for _, message in warnings} == {"Unsupported content type application/yaml"}
    assert {operation for operation, _ in warnings} == {
        "POST /format",
        "POST /validate",
        "POST /evaluate",
        "POST /runs",
    }
    assert output.count("WARNING") == len(warnings)


def test_the_client_formats_evaluates_and_runs_against_a_live_server(
    generated: tuple[ModuleType, str], tmp_path: Path
) -> None:
    package, _ = generated
    models = module(package, "models")
    env = {"PATH": os.defpath, "EVAL_DATA_DIR": str(tmp_path / "data"), "EVAL_API_KEYS": KEY}
    with (
        running_service(env) as (url, _),
        package.AuthenticatedClient(base_url=url, token=KEY, timeout=30.0) as client,
        package.Client(base_url=url) as anonymous,
    ):
        format_ = module(package, "api.format_.format_")
        formatted = format_.sync(
            client=client,
            body=models.FormatRequest.from_dict(
                {"input_messages": [{"role": "user", "content": "What is 2 + 2?"}]}
            ),
        )
        refused = format_.sync(
            client=anonymous,
            body=models.FormatRequest.from_dict(
                {"input_messages": [{"role": "user", "content": "x"}]}
            ),
        )
        evaluation = module(package, "api.evaluate.evaluate").sync(
            client=client,
            body=models.EvaluateRequest.from_dict({"suite": QUICK_SUITE, "target": "default"}),
        )
        run = module(package, "api.runs.create_run").sync(
            client=client, body=models.RunRequest.from_dict({"suite": QUICK_SUITE})
        )
        finished = wait_for_run(package, client, run.id)
        listed = module(package, "api.runs.list_runs").sync(client=client)

    assert isinstance(formatted, models.FormatResponse)
    assert formatted.question == "What is 2 + 2?"
    assert isinstance(refused, models.Problem)
    assert refused.status == 401
    assert isinstance(evaluation, models.EvaluateResponse)
    assert [record.eval_id for record in evaluation.results] == ["add", "follow-up"]
    assert evaluation.summary.total == 2
    assert isinstance(run, models.RunObject)
    assert finished.progress.done == finished.progress.total == 2
    assert [listed_run.id for listed_run in listed.runs] == [run.id]


def wait_for_run(package: ModuleType, client: Any, run_id: str) -> Any:
    get_run = module(package, "api.runs.get_run")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run = get_run.sync(run_id=run_id, client=client)
        if str(run.status) == "completed":
            return run
        time.sleep(0.05)
    raise TimeoutError(f"run {run_id} did not complete")
