"""AgentV from npm, installed once into a git-ignored folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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


BUN_VERSION = "1.4.5"
UV_VERSION = "0.13.9"
TOOLS = ("bun", "uv")
TOOLS_VARIABLE = "CONFORMANCE_TOOLS"
"""Set (to the tools folder) where ``bun`` and ``uv`` are on both sides' PATH."""


def tools_folder(folder: Path = DEFAULT_FOLDER) -> Path:
    """Where ``bun`` (npm) and ``uv`` (PyPI) are installed for the harness."""
    return folder / "tools"


def ensure_tools(folder: Path = DEFAULT_FOLDER) -> Path | None:
    """A folder holding ``bun`` and ``uv``, installing them first if missing (None: failed).

    AgentV's examples run code graders with ``bun run`` and ``uv run``; with both installed
    for both sides (``_isolated`` shows them in ``/usr/local/bin``, which the sandbox's PATH
    holds, for the harness's processes only) those graders are compared too.
    """
    tools = tools_folder(folder)
    bin_folder = tools / "bin"
    if all((bin_folder / name).exists() for name in TOOLS):
        return bin_folder
    try:
        tools.mkdir(parents=True, exist_ok=True)
        (tools / "package.json").write_text('{"private": true}\n')
        npm = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
        subprocess.run([*npm, f"bun@{BUN_VERSION}"], cwd=tools, check=True)
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--target", str(tools / "py")]
        subprocess.run([*pip, f"uv=={UV_VERSION}"], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"bun and uv are not installed ({exc}): their graders are not compared")
        return None
    bin_folder.mkdir(exist_ok=True)
    links = {
        "bun": tools / "node_modules" / ".bin" / "bun",
        "uv": tools / "py" / "bin" / "uv",
    }
    for name, target in links.items():
        link = bin_folder / name
        link.unlink(missing_ok=True)
        link.symlink_to(target.resolve())
    return bin_folder
