"""The image's start command, run as a real process: it serves, logs JSON and stops on SIGTERM."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from testkit.fake_llm import FakeLLM, Reply
from testkit.server import ROOT, free_port, wait_until_healthy
from tests.ops.test_container import image_command, option, readme_run_commands


def with_option(argv: list[str], name: str, value: str) -> list[str]:
    changed = list(argv)
    changed[changed.index(name) + 1] = value
    return changed


@pytest.mark.slow
def test_the_image_command_serves_and_shuts_down_gracefully_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    argv = with_option(with_option(image_command(), "--host", "127.0.0.1"), "--port", str(port))
    assert argv[0] == "uvicorn"
    process = subprocess.Popen(
        [sys.executable, "-m", *argv],
        cwd=ROOT,
        env={"EVAL_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, process)
        response = httpx.get(f"{url}/healthz", headers={"X-Request-ID": "image-check"})
        assert response.headers["X-Request-ID"] == "image-check"
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    lines = [json.loads(line) for line in stderr.decode().splitlines() if line.strip()]
    messages = [line["message"] for line in lines]
    assert "Application shutdown complete." in messages
    assert any(line.get("request_id") == "image-check" for line in lines)
    assert process.returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM)


def serve_command(port: int) -> list[str]:
    """``scripts/serve``'s uvicorn command, on ``port``, run by this interpreter."""
    (serve,) = [argv for argv in readme_run_commands() if ".venv/bin/uvicorn" in argv]
    argv = with_option(with_option(serve, "--host", "127.0.0.1"), "--port", str(port))
    return [sys.executable, "-m", "uvicorn", *argv[argv.index(".venv/bin/uvicorn") + 1 :]]


def test_the_documented_start_commands_bound_the_graceful_shutdown() -> None:
    runs_page = (ROOT / "docs" / "runs.md").read_text(encoding="utf-8")
    assert "uvicorn app.main:app --timeout-graceful-shutdown 30" in runs_page
    assert option(serve_command(8000), "--timeout-graceful-shutdown") == "30"


@pytest.mark.slow
def test_sigterm_during_a_hanging_provider_call_stops_the_served_process(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.responder = lambda _: Reply(hang=True)
    targets = tmp_path / "targets.yaml"
    target = {"name": "fake", "provider": "openai", "base_url": f"{fake_llm.url}/v1", "model": "m"}
    targets.write_text(yaml.safe_dump({"targets": [target]}), encoding="utf-8")
    port = free_port()
    # scripts/serve's command with its bound shortened from 30 s, so the test takes seconds.
    argv = with_option(serve_command(port), "--timeout-graceful-shutdown", "2")
    env = {"EVAL_DATA_DIR": str(tmp_path / "data"), "EVAL_TARGETS_FILE": str(targets),
           "EVAL_SAMPLE_RUN": "false", "PATH": "/usr/bin:/bin"}  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    suite = {"evalcases": [{"id": "hangs", "expected_outcome": "x",
                            "input_messages": [{"role": "user", "content": "hi"}]}]}  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def evaluate() -> None:
        with contextlib.suppress(httpx.HTTPError):  # the server goes away mid-request
            httpx.post(f"{url}/evaluate", json={"suite": suite, "target": "fake"}, timeout=60)

    caller = threading.Thread(target=evaluate, daemon=True)
    try:
        wait_until_healthy(url, process)
        caller.start()
        deadline = time.monotonic() + 20
        while not fake_llm.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake_llm.requests, "the provider call should be in progress"
        process.send_signal(signal.SIGTERM)
        returncode = process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert returncode in (0, -signal.SIGTERM, 128 + signal.SIGTERM)
