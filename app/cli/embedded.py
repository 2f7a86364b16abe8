"""``--embedded``: the service in this process (uvicorn on a loopback port), on its defaults.

The settings are the service's own (``EVAL_*`` variables, else the embedded defaults: the
mock target, SQLite under ``data/``); the folder of the suite is added as a workspace root so
the suite is read in place, as a server would read a suite under its roots. Its log is
quieted to warnings unless ``EVAL_LOG_LEVEL`` says otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn

from app.cli.problems import ClientError
from app.main import create_app
from app.settings import load_settings

START_SECONDS = 60.0


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: Ctrl-C belongs to the command (it cancels the run)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@asynccontextmanager
async def embedded_service(workspace_root: Path | None) -> AsyncIterator[str]:
    """Serve the app on a free loopback port while the block runs; yield its base URL.

    Raises:
        ClientError: The service did not start (its settings or database are broken).
    """
    settings = load_settings()
    update: dict[str, object] = {}
    if workspace_root is not None:
        update["workspace_roots"] = [workspace_root, *settings.workspace_roots]
    if "log_level" not in settings.model_fields_set:
        update["log_level"] = "WARNING"
    app = create_app(settings.model_copy(update=update))
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", access_log=False, lifespan="on"
    )
    server = _Server(config)
    serving = asyncio.create_task(server.serve())
    waited = 0.0
    while not server.started:
        if serving.done() or waited > START_SECONDS:
            serving.cancel()
            raise ClientError("the embedded service did not start (see the messages above)")
        await asyncio.sleep(0.05)
        waited += 0.05
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
