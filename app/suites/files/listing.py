"""Listing files a suite names by pattern: globs, folders of cases, and upward searches.

Patterns and folders are relative to the suite's folder (a suite named by path) or to the
workspace roots; a leading ``/`` means the root. Inline ``files`` are listed by their keys.
Every listing stays inside the workspace root: a pattern climbing out with ``..`` is
refused, and files reached through symbolic links are checked again when they are read.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from wcmatch import glob

from app.suites.files.paths import refuse_escape, split_reference

CASE_FILE_EXTENSIONS = (".yaml", ".yml", ".json", ".jsonl", ".csv")
"""Files a folder of cases holds (each one a list of cases)."""
CASE_FOLDER_FILES = ("case.yaml", "case.yml")
"""The file of a one-case folder (``cases/<id>/case.yaml``)."""
_GLOB_CHARS = frozenset("*?[{")
_FLAGS = glob.GLOBSTAR | glob.BRACE | glob.NODIR


def is_pattern(reference: str) -> bool:
    """Whether a reference is a glob pattern rather than one path."""
    return any(char in _GLOB_CHARS for char in reference)


class Listing:
    """Lists files for one request: inline keys first, then the workspace roots."""

    def __init__(
        self,
        inline_normalised: Mapping[str, str],
        roots: Sequence[Path],
        suite_folder: tuple[Path, PurePosixPath] | None,
    ) -> None:
        """Keep what paths are listed against (see ``FileSource``)."""
        self._inline = inline_normalised
        self._roots = tuple(roots) if suite_folder is None else (suite_folder[0],)
        self._folder = suite_folder[1].parts if suite_folder else ()
        self._named = suite_folder is not None

    def upward_candidates(self, name: str) -> list[str]:
        """Root-relative paths of ``name`` from the suite's folder up to the root."""
        parts = self._folder
        return [posixpath.join(*parts[:depth], name) for depth in range(len(parts), -1, -1)]

    def user_types(self, folders: Sequence[str], suffixes: Sequence[str]) -> dict[str, str]:
        """Files naming user-defined grader types, by name (without suffix) -> path.

        Found in ``folders`` (``.agentv/assertions``...) of the suite's folder and of each
        parent up to the root; each path is relative to the suite's folder.

        The first of ``folders`` wins over the others, a nearer folder over those above it.
        Nothing for a suite sent in the request body (it has no folder).
        """
        if not self._named:
            return {}
        root = self._roots[0]
        here = "/".join(self._folder) or "."
        found: dict[str, str] = {}
        for kind in folders:
            for depth in range(len(self._folder), -1, -1):
                folder = root.joinpath(*self._folder[:depth], kind)
                if not folder.is_dir() or not folder.resolve().is_relative_to(root.resolve()):
                    continue
                for entry in sorted(folder.iterdir()):
                    name, suffix = posixpath.splitext(entry.name)
                    if suffix in suffixes and entry.is_file() and name not in found:
                        target = posixpath.join(*self._folder[:depth], kind, entry.name)
                        found[name] = posixpath.relpath(target, here)
        return found

    def expand(self, reference: str) -> list[str] | None:
        """The files a glob or folder names, as the suite would write them; None otherwise.

        Raises:
            FileRefused: The reference is absolute or leaves the workspace root.
        """
        parts, from_root = split_reference(reference)
        base = () if from_root else self._folder
        refuse_escape(base + parts)
        prefix = "/" if from_root else ""
        found = (
            self._glob(base, "/".join(parts))
            if is_pattern(reference)
            else self._folder_entries(base, parts)
        )
        return None if found is None else sorted({prefix + path for path in found})

    def _glob(self, base: tuple[str, ...], pattern: str) -> list[str]:
        base_path = "/".join(base)
        full = posixpath.join(base_path, pattern) if base_path else pattern
        found = [
            posixpath.relpath(key, base_path) if base_path else key
            for key in self._inline
            if glob.globmatch(key, full, flags=_FLAGS)
        ]
        for root in self._roots:
            folder = root.joinpath(*base)
            if folder.is_dir():
                found.extend(glob.glob(pattern, flags=_FLAGS, root_dir=str(folder)))
        return [path.replace("\\", "/") for path in found]

    def _folder_entries(self, base: tuple[str, ...], parts: tuple[str, ...]) -> list[str] | None:
        """Case files directly in the folder and ``<sub>/case.yaml`` of its subfolders."""
        written = "/".join(parts)
        inline_prefix = "/".join(base + parts) + "/"
        names = {key[len(inline_prefix) :] for key in self._inline if key.startswith(inline_prefix)}
        is_folder = bool(names)
        for root in self._roots:
            folder = root.joinpath(*base, *parts)
            if folder.is_dir() and folder.resolve().is_relative_to(root.resolve()):
                is_folder = True
                names.update(_folder_names(folder))
        if not is_folder:
            return None
        entries = [
            name
            for name in names
            if ("/" not in name and name.endswith(CASE_FILE_EXTENSIONS))
            or (name.count("/") == 1 and name.split("/")[1] in CASE_FOLDER_FILES)
        ]
        return [f"{written}/{name}" for name in entries]


def _folder_names(folder: Path) -> set[str]:
    names: set[str] = set()
    for entry in folder.iterdir():
        if entry.is_file():
            names.add(entry.name)
        elif entry.is_dir():
            names.update(
                f"{entry.name}/{name}" for name in CASE_FOLDER_FILES if (entry / name).is_file()
            )
    return names
