"""``eval-worker``: processes that run the cases of the queue, without serving HTTP.

With PostgreSQL (``EVAL_DATABASE_URL``), any number of these, on any number of machines,
share the cases of every run with the API processes. ``--workers N`` starts N processes on
this machine (one core each); a process that dies is started again. ``--metrics-port P``
serves the metrics of process i (from 0) on port P+i.

    eval-worker --workers 2 --metrics-port 9100
    python -m app.worker --workers 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from app.heap import freeze_startup_heap
from app.observability.logging import configure_logging
from app.observability.metrics import Metrics
from app.services.container import build_services
from app.settings import Settings, load_settings, with_targets_file

RESTART_DELAY_SECONDS = 1.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of ``eval-worker``."""
    parser = argparse.ArgumentParser(prog="eval-worker", description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1, help="processes to start (default 1)")
    parser.add_argument(
        "--metrics-port", type=int, default=None, help="serve /metrics on this port (+i for i>0)"
    )
    return parser.parse_args(argv)


async def serve_metrics(metrics: Metrics, port: int) -> asyncio.Server:
    """A minimal HTTP endpoint answering every request with the metrics."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.readuntil(b"\r\n\r\n")
            body = await metrics.scrape()
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode() + body)
            await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "0.0.0.0", port)


async def run_worker(settings: Settings, metrics_port: int | None = None) -> None:
    """Run cases of the queue until SIGTERM or SIGINT, then stop gracefully."""
    metrics = Metrics()
    services = await build_services(settings, metrics, execute_cases=True)
    freeze_startup_heap()
    server = await serve_metrics(metrics, metrics_port) if metrics_port is not None else None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        if server is not None:
            server.close()
        await services.aclose()


def supervise(count: int, metrics_port: int | None) -> int:
    """Start ``count`` worker processes, restart those that die, stop them all on a signal."""
    stopping = False

    def start(index: int) -> subprocess.Popen[bytes]:
        command = [sys.executable, "-m", "app.worker", "--workers", "1"]
        if metrics_port is not None:
            command += ["--metrics-port", str(metrics_port + index)]
        return subprocess.Popen(command)

    def stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    children = [start(index) for index in range(count)]
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping:
        time.sleep(0.5)
        for index, child in enumerate(children):
            if child.poll() is not None and not stopping:
                time.sleep(RESTART_DELAY_SECONDS)
                children[index] = start(index)
    return max((child.wait() for child in children), default=0)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``eval-worker``."""
    args = parse_args(argv)
    settings = with_targets_file(load_settings())
    if not (settings.database_url or "").startswith("postgresql"):
        sys.stderr.write(
            "eval-worker needs PostgreSQL: set EVAL_DATABASE_URL=postgresql+asyncpg://... "
            "(with SQLite, the API process runs every case itself)\n"
        )
        return 2
    if args.workers > 1:
        return supervise(args.workers, args.metrics_port)
    configure_logging(settings.log_level)
    with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
        runner.run(run_worker(settings, args.metrics_port))
    return 0


def event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The loop factory: uvloop where installed (uvicorn picks it for the API), else None."""
    try:
        import uvloop  # optional: it does not build on Windows
    except ImportError:
        return None
    return uvloop.new_event_loop


if __name__ == "__main__":
    sys.exit(main())
