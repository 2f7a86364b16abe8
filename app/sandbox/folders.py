"""Temporary folders of programs and workspaces: named after their process, swept when stale.

Every scratch folder is ``<tmp>/eval-<kind>-<pid>-<random>``. A process killed with
``kill -9`` cannot remove its own, so each process sweeps at start-up the folders of
processes that no longer exist (and unnamed ones of older versions, a day after their last
change).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

KINDS = ("workspace", "grader", "cli", "repos", "proxy")
_KIND = "|".join(KINDS)
_NAMED = re.compile(rf"eval-(?:{_KIND})-(\d+)-[^/]+")
_LEGACY = re.compile(rf"eval-(?:{_KIND})-[a-z0-9_]+")
LEGACY_AGE_SECONDS = 24 * 3600.0


def new_folder(kind: str) -> Path:
    """A fresh private folder of this process (``kind``: one of ``KINDS``)."""
    assert kind in KINDS
    return Path(tempfile.mkdtemp(prefix=f"eval-{kind}-{os.getpid()}-"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(folder: Path | None = None, *, now: float | None = None) -> list[Path]:
    """Remove the scratch folders left by dead processes; returns what was removed."""
    base = folder or Path(tempfile.gettempdir())
    moment = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    for entry in entries:
        named = _NAMED.fullmatch(entry.name)
        if named is not None:
            stale = int(named.group(1)) != os.getpid() and not _alive(int(named.group(1)))
        elif _LEGACY.fullmatch(entry.name):
            stale = _age(entry, moment) > LEGACY_AGE_SECONDS
        else:
            continue
        if stale and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _age(path: Path, now: float) -> float:
    try:
        return now - path.lstat().st_mtime
    except OSError:
        return 0.0
