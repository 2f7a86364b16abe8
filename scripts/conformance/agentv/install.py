"""AgentV from npm, installed once into a git-ignored folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "4.42.4"
ROOT = Path(__file__).resolve().parents[3]
DEFAULT_FOLDER = Path(os.environ.get("AGENTV_CONFORMANCE_DIR", ROOT / ".conformance" / "agentv"))


def installed(folder: Path = DEFAULT_FOLDER) -> Path | None:
    """AgentV's CLI if version ``VERSION`` is installed under ``folder``."""
    package = folder / "node_modules" / "agentv" / "package.json"
    cli = folder / "node_modules" / ".bin" / "agentv"
    if not package.is_file() or not cli.exists():
        return None
    return cli if json.loads(package.read_text()).get("version") == VERSION else None


def node_available() -> bool:
    """Whether node and npm are on PATH (AgentV needs both to install and run)."""
    return shutil.which("node") is not None and shutil.which("npm") is not None


def ensure_agentv(folder: Path = DEFAULT_FOLDER) -> Path:
    """AgentV's CLI, installing ``agentv@VERSION`` with npm first if it is missing."""
    cli = installed(folder)
    if cli is not None:
        return cli
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true}\n')
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", f"agentv@{VERSION}"],
        cwd=folder,
        check=True,
    )
    cli = installed(folder)
    if cli is None:
        raise RuntimeError(f"npm did not install agentv@{VERSION} into {folder}")
    return cli
