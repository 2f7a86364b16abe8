"""Folders copied into a case's workspace hold no link out of it.

A template or a repository checkout is copied with its symlinks replaced by what they point
to, when that lies inside the folder copied; a link leading out of it (or into a folder that
holds the link, which would copy forever) is refused. No case folder ever holds a symlink an
agent could write through to reach a folder outside its case.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


class LinkRefused(Exception):
    """A symlink of a folder to copy leads out of it (the message names it)."""


def check_links(folder: Path) -> None:
    """Raise ``LinkRefused`` naming the first symlink of ``folder`` that leads out of it."""
    root = folder.resolve()
    for parent, folders, files in os.walk(folder):
        for name in (*folders, *files):
            link = Path(parent) / name
            if not link.is_symlink():
                continue
            shown = link.relative_to(folder).as_posix()
            target = link.resolve()
            if not target.is_relative_to(root) or not target.exists():
                raise LinkRefused(f"its symlink {shown!r} points outside it")
            if target.is_dir() and link.parent.resolve().is_relative_to(target):
                raise LinkRefused(f"its symlink {shown!r} points to a folder holding it")


def copy_without_links(source: Path, target: Path, *, dirs_exist_ok: bool = False) -> None:
    """Copy ``source`` to ``target``, links replaced by what they point to (checked first).

    Raises:
        LinkRefused: A link leads out of ``source``.
        OSError: The copy failed.
    """
    check_links(source)
    try:
        shutil.copytree(source, target, symlinks=False, dirs_exist_ok=dirs_exist_ok)
    except shutil.Error as exc:
        raise OSError(str(exc)) from None
