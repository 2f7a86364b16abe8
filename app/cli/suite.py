"""What ``evalx run SUITE`` sends: a local suite file with its files, or a server path.

A local suite file goes inline with the files it references; anything else is the path of
a suite under the server's workspace roots.

The files a local suite references are found by reading it with the service's own loader
over the suite's folder and its parents (up to the repository's top), as the server would
read it under a workspace root; exactly the files that loader reads are sent, keyed by the
path the suite wrote.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.settings import Settings
from app.suites.files.resolve import FileSource, LoadedFiles
from app.suites.loader import read_suite


class _RecordingSource(FileSource):
    """A file source that keeps every file it resolved."""

    recorded: dict[str, str]

    async def collect(
        self, paths: Sequence[str], pdfs: Collection[str] = (), images: Collection[str] = ()
    ) -> LoadedFiles:
        # a PDF as its text, an image as its data: URI: sent as text (read so by the server)
        loaded = await super().collect(paths, pdfs, images)
        self.recorded.update(loaded.files)
        return loaded


def project_top(folder: Path) -> Path:
    """The top of the git repository holding ``folder``, else ``folder`` itself."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def search_folders(suite_file: Path) -> list[Path]:
    """The suite's folder, then each parent up to the repository's top."""
    folder = suite_file.resolve().parent
    top = project_top(folder)
    folders = [folder]
    for parent in folder.parents:
        if not parent.is_relative_to(top):
            break
        folders.append(parent)
    return folders


@dataclass(frozen=True)
class SuiteArgument:
    """The SUITE argument: a local file (its text, place and project top) or a server path."""

    given: str
    text: str | None = None
    path: Path | None = None
    root: Path | None = None


def suite_argument(suite: str) -> SuiteArgument:
    """Read SUITE: an existing local file, else a path for the server to resolve."""
    local = Path(suite)
    if not local.is_file():
        return SuiteArgument(suite)
    path = local.resolve()
    return SuiteArgument(suite, local.read_text(encoding="utf-8"), path, project_top(path.parent))


async def referenced_files(
    suite_text: str, suite_file: Path, settings: Settings, env: Mapping[str, str]
) -> dict[str, str]:
    """Every file the suite ``suite_text`` (read from ``suite_file``) references."""
    source = _RecordingSource(
        roots=search_folders(suite_file),
        max_file_bytes=settings.max_file_bytes,
        max_request_file_bytes=settings.max_request_file_bytes,
        max_suite_bytes=settings.max_body_bytes,
    )
    source.recorded = {}
    await read_suite(suite_text, file_source=source, env=env, allow_missing_files=True)
    return source.recorded


async def suite_fields(
    suite: SuiteArgument, *, embedded: bool, env: Mapping[str, str]
) -> dict[str, Any]:
    """``suite`` and ``files`` of the request.

    A local file goes inline with its files (embedded: by its path under the project top,
    which the embedded service reads as a workspace root); anything else is a path under
    the server's roots.
    """
    if suite.text is None or suite.path is None or suite.root is None:
        return {"suite": suite.given}
    if embedded:
        return {"suite": suite.path.relative_to(suite.root).as_posix()}
    files = await referenced_files(suite.text, suite.path, Settings(), env)
    return {"suite": suite.text, "files": files}
