"""Real git repositories for workspace tests: one built on disk, and one served over HTTP.

``make_repository`` commits three times (``one`` tagged ``v1``, ``two`` on ``main``,
``three`` on branch ``feature``); ``serve_repositories`` serves a folder of bare
repositories with git's "dumb" HTTP protocol on 127.0.0.1 and counts the requests.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

AUTHOR = ["-c", "user.name=Eval Tests", "-c", "user.email=tests@example.invalid"]


def git(folder: Path, *args: str) -> str:
    """Run git in ``folder``; its output."""
    done = subprocess.run(
        ["git", *AUTHOR, *args], cwd=folder, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def make_repository(folder: Path) -> dict[str, str]:
    """A repository with three commits; their ids by message."""
    folder.mkdir(parents=True)
    git(folder, "init", "--quiet", "--initial-branch=main")
    (folder / "packages" / "core").mkdir(parents=True)
    (folder / "docs").mkdir()
    (folder / "README.md").write_text("# core\n")
    (folder / "docs" / "guide.md").write_text("guide\n")
    (folder / "packages" / "core" / "package.json").write_text('{"name": "@acme/core"}\n')
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "--message", "one")
    git(folder, "tag", "v1")
    (folder / "packages" / "core" / "package.json").write_text('{"name": "@acme/core-2"}\n')
    git(folder, "commit", "--quiet", "--all", "--message", "two")
    git(folder, "checkout", "--quiet", "-b", "feature")
    (folder / "feature.txt").write_text("feature\n")
    git(folder, "add", "feature.txt")
    git(folder, "commit", "--quiet", "--message", "three")
    git(folder, "checkout", "--quiet", "main")
    return {
        message: git(folder, "rev-parse", ref)
        for message, ref in (("one", "v1"), ("two", "main"), ("three", "feature"))
    }


@dataclass
class ServedRepositories:
    """Bare repositories served over HTTP, and the paths asked for."""

    url: str
    requests: list[str] = field(default_factory=list)


@contextmanager
def serve_repositories(folder: Path) -> Iterator[ServedRepositories]:
    """Serve the bare repositories under ``folder`` on 127.0.0.1 (git's dumb HTTP)."""
    for repository in folder.glob("*.git"):
        git(repository, "update-server-info")
    served = ServedRepositories(url="")

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            served.requests.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(folder)))
    served.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
