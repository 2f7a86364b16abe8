"""Start the service (a real uvicorn process) and its queue workers for end-to-end tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
HealthWait = Callable[[str, subprocess.Popen[bytes]], None]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Poll ``/healthz`` until it answers 200; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not become healthy")


@contextmanager
def running_service(
    env: Mapping[str, str],
    port: int | None = None,
    *,
    prefix: Sequence[str] = (),
    wait: HealthWait = wait_until_healthy,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``uvicorn app.main:app`` on a free port with ``env``; yield its base URL and process.

    Args:
        env: The process's whole environment.
        port: The port (default: a free one).
        prefix: A command the server is started under (``nsenter --net=...``, say).
        wait: Returns once the server answers (default: polls ``/healthz`` from here).
    """
    port = port or free_port()
    process = subprocess.Popen(
        [
            *prefix,
            sys.executable,
            "-m",
            "uvicorn",
            "app.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait(url, process)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def running_worker(
    env: Mapping[str, str], metrics_port: int | None = None, *, start_seconds: float = 30.0
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Run ``python -m app.worker`` with ``env``; yield its metrics URL and process.

    Ready once its metrics answer (it has migrated the database and joined the queue),
    within ``start_seconds``.
    """
    port = metrics_port or free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "app.worker", "--metrics-port", str(port)],
        cwd=ROOT,
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + start_seconds
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"worker exited with {process.returncode}")
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise TimeoutError("the worker did not start") from None
            time.sleep(0.1)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
