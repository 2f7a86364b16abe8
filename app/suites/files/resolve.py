r"""Resolve the files a suite references: inline ``files`` first, then the workspace roots.

A path is looked up as the case wrote it, then in a normalised form (backslashes read as
``/``, a leading ``./`` dropped). Inline texts win. Otherwise the path is read from the
operator's workspace roots: for a suite named by a path inside a root, relative to the
suite's folder, then to each parent folder up to the root (as AgentV searches); otherwise
relative to each root in turn. A leading ``/`` means the workspace root (AgentV's reading).
Paths that are absolute in any other way (``//x``, ``C:\\x``), that leave the root (``..``,
symlinks), files over the size caps and content that is not UTF-8 text are refused, each
naming the path. A suite named by its path reads its files from its root only: inline
``files`` are refused with it (a request never replaces a file such a suite refers to, nor a
program it runs). Suites may also list files (globs, folders of cases); disk access runs in
a worker thread.
"""

from __future__ import annotations

import stat
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import anyio.to_thread

from app.errors import FieldError, FileRefused, InvalidRequest
from app.settings import Settings
from app.suites.files.image_data import image_data_uri
from app.suites.files.listing import Listing
from app.suites.files.paths import decode_text, normalise_path, refuse_escape, split_reference
from app.suites.files.pdf_text import pdf_text


@dataclass(frozen=True)
class LoadedFiles:
    """The outcome of resolving a list of paths.

    Attributes:
        files: Text of every file found, keyed by the path as the case wrote it.
        missing: Paths found neither inline nor under a workspace root, in order.
        refused: Paths that may not be read, each with the reason.
    """

    files: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SuiteFile:
    """A suite file read from a workspace root: its text, name and place."""

    text: str
    name: str
    root: Path
    folder: PurePosixPath


@dataclass
class _Budget:
    """Bytes of referenced files loaded so far by one request."""

    limit: int
    used: int = 0


class FileSource:
    """Resolves referenced file paths for one request, within one byte budget."""

    def __init__(
        self,
        *,
        inline: Mapping[str, str] | None = None,
        roots: Sequence[Path] = (),
        max_file_bytes: int,
        max_request_file_bytes: int,
        max_suite_bytes: int | None = None,
        suite_folder: tuple[Path, PurePosixPath] | None = None,
        budget: _Budget | None = None,
    ) -> None:
        """Build a source; prefer ``FileSource.from_settings``.

        Args:
            inline: The request's ``files`` map (path -> text).
            roots: Workspace roots to read from, in order.
            max_file_bytes: Largest single file.
            max_request_file_bytes: Largest total of files for this source.
            max_suite_bytes: Largest suite file (defaults to ``max_request_file_bytes``).
            suite_folder: ``(root, folder inside root)`` of a suite named by path.
            budget: Shared byte budget (for sources derived from this one).
        """
        self._inline = dict((inline or {}).items())
        self._inline_normalised = {normalise_path(path): path for path in self._inline}
        self._roots = tuple(roots)
        self._max_file_bytes = max_file_bytes
        self._max_suite_bytes = max_suite_bytes or max_request_file_bytes
        self._budget = budget or _Budget(max_request_file_bytes)
        self._suite_folder = suite_folder
        self.listing = Listing(self._inline_normalised, self._roots, suite_folder)

    @property
    def suite_folder(self) -> tuple[Path, PurePosixPath] | None:
        """``(root, folder inside root)`` of the suite file; None for a suite sent inline."""
        return self._suite_folder

    @classmethod
    def from_settings(
        cls, settings: Settings, inline: Mapping[str, str] | None = None
    ) -> FileSource:
        """A source over the operator's workspace roots and the request's inline files."""
        return cls(
            inline=inline,
            roots=settings.workspace_roots,
            max_file_bytes=settings.max_file_bytes,
            max_request_file_bytes=settings.max_request_file_bytes,
            max_suite_bytes=settings.max_body_bytes,
        )

    def for_suite(self, suite_file: SuiteFile) -> FileSource:
        """A source resolving paths relative to ``suite_file``'s folder (same budget).

        Raises:
            InvalidRequest: The request also sent inline ``files``: a suite file under a
                workspace root reads its files from there only, so a request can never
                replace (or add) a file it refers to, nor choose a program it runs.
        """
        if self._inline:
            errors = [
                FieldError(
                    path=f"files.{name}",
                    message=f"inline file {name!r} not accepted: the suite "
                    f"{suite_file.name!r} reads its files from its workspace root only",
                )
                for name in self._inline
            ]
            raise InvalidRequest(
                f"'files' cannot be sent with the suite {suite_file.name!r}: a suite read from "
                "a workspace root reads its files from the root only",
                errors=errors[:20],
            )
        return FileSource(
            roots=(suite_file.root,),
            max_file_bytes=self._max_file_bytes,
            max_request_file_bytes=self._budget.limit,
            max_suite_bytes=self._max_suite_bytes,
            suite_folder=(suite_file.root, suite_file.folder),
            budget=self._budget,
        )

    async def load(
        self, paths: Sequence[str], *, locations: Mapping[str, str] | None = None
    ) -> LoadedFiles:
        """Resolve ``paths``; refused paths raise, missing ones are listed.

        Args:
            paths: File paths as the case wrote them (duplicates are read once).
            locations: Document path of each file path (e.g.
                ``input_messages[0].content[1].value``) to name in errors; the file path
                itself is used where none is given.

        Raises:
            InvalidRequest: One or more paths were refused (every one is listed).
        """
        loaded = await self.collect(paths)
        if loaded.refused:
            locations = locations or {}
            errors = [
                FieldError(path=locations.get(path, path), message=f"file {path!r}: {reason}")
                for path, reason in loaded.refused.items()
            ]
            detail = "; ".join(error.message for error in errors[:5])
            raise InvalidRequest(detail, errors=errors)
        return loaded

    async def collect(
        self, paths: Sequence[str], pdfs: Collection[str] = (), images: Collection[str] = ()
    ) -> LoadedFiles:
        """Resolve ``paths``, reporting refusals in the result instead of raising.

        ``pdfs``: those of ``paths`` read as PDF files, each as its text (``pdf_text``);
        ``images``: those read as image files, each as a ``data:`` URI (``image_data``).
        """
        result = LoadedFiles()
        on_disk: list[str] = []
        for path in dict.fromkeys(paths):
            inline_key = self._inline_key(path)
            if inline_key is None:
                on_disk.append(path)
                continue
            try:
                text = self._accept(self._inline[inline_key].encode("utf-8"))
            except FileRefused as exc:
                result.refused[path] = str(exc)
            else:
                result.files[path] = text
        if on_disk:
            await anyio.to_thread.run_sync(
                self._read_all, on_disk, result, frozenset(pdfs), frozenset(images)
            )
        return result

    def _inline_key(self, path: str) -> str | None:
        if path in self._inline:
            return path
        normalised = normalise_path(path)
        found = self._inline_normalised.get(normalised)
        if found is None and normalised.startswith("/") and not normalised.startswith("//"):
            found = self._inline_normalised.get(normalised[1:])
        return found

    async def open_suite(self, path: str) -> SuiteFile:
        """Read a suite file named by a path inside a workspace root.

        Raises:
            InvalidRequest: The path is refused or names no file under any root.
        """
        return await anyio.to_thread.run_sync(self._open_suite, path)

    def _open_suite(self, path: str) -> SuiteFile:
        try:
            parts, _ = split_reference(path)
            for root in self._roots:
                found = self._find(root, parts)
                if found is not None:
                    text = decode_text(self._read_capped(found, self._max_suite_bytes))
                    folder = PurePosixPath(*parts).parent
                    return SuiteFile(text=text, name=path, root=root, folder=folder)
        except FileRefused as exc:
            raise InvalidRequest(
                f"suite {path!r}: {exc}", errors=[FieldError(path="suite", message=str(exc))]
            ) from exc
        message = "no such suite file under the workspace roots" + (
            "" if self._roots else " (none are configured: set EVAL_WORKSPACE_ROOTS)"
        )
        raise InvalidRequest(
            f"suite {path!r}: {message}", errors=[FieldError(path="suite", message=message)]
        )

    def _read_all(
        self,
        paths: list[str],
        result: LoadedFiles,
        pdfs: frozenset[str],
        images: frozenset[str] = frozenset(),
    ) -> None:
        for path in paths:
            try:
                text = self._read_one(path, pdf=path in pdfs, image=path in images)
            except FileRefused as exc:
                result.refused[path] = str(exc)
            else:
                if text is None:
                    result.missing.append(path)
                else:
                    result.files[path] = text

    def _read_one(self, path: str, *, pdf: bool = False, image: bool = False) -> str | None:
        parts, from_root = split_reference(path)
        if self._suite_folder is None or from_root:
            refuse_escape(parts)
        refusals: list[FileRefused] = []
        bases = self._bases(from_root)
        for root, base in bases:
            try:
                found = self._find(root, base + parts)
            except FileRefused as exc:
                refusals.append(exc)
                continue
            if found is not None:
                data = self._read_capped(found, self._max_file_bytes)
                if image:
                    self._accept(data, binary=True)
                    return image_data_uri(data, path)
                return self._accept(data, pdf=pdf)
        if bases and len(refusals) == len(bases):
            raise refusals[0]
        return None

    def _bases(self, from_root: bool) -> list[tuple[Path, tuple[str, ...]]]:
        """Where a relative path is tried: the suite's folder and each parent, or the roots."""
        if self._suite_folder is None:
            return [(root, ()) for root in self._roots]
        root, folder = self._suite_folder
        if from_root:
            return [(root, ())]
        parts = folder.parts
        return [(root, parts[:depth]) for depth in range(len(parts), -1, -1)]

    async def user_types(self, folders: Sequence[str], suffixes: Sequence[str]) -> dict[str, str]:
        """Files naming user-defined grader types (``Listing.user_types``), off the loop."""
        return await anyio.to_thread.run_sync(self.listing.user_types, folders, suffixes)

    async def expand(self, reference: str) -> list[str] | None:
        """The files a glob or a folder of cases names (sorted), or None for a plain file.

        Raises:
            FileRefused: The pattern or folder leaves the workspace root.
        """
        return await anyio.to_thread.run_sync(self.listing.expand, reference)

    @staticmethod
    def _find(root: Path, parts: tuple[str, ...]) -> Path | None:
        """The file ``parts`` names under ``root``, or None; refuses escapes."""
        refuse_escape(parts)
        real_root = root.resolve()
        candidate = (real_root.joinpath(*parts)).resolve()
        if not candidate.is_relative_to(real_root):
            raise FileRefused("the path resolves outside the workspace root (symbolic link)")
        try:
            mode = candidate.stat().st_mode
        except OSError:
            return None
        if not stat.S_ISREG(mode):
            raise FileRefused("the path is not a regular file")
        return candidate

    @staticmethod
    def _read_capped(path: Path, limit: int) -> bytes:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise FileRefused(f"the file is larger than the limit of {limit} bytes")
        return data

    def _accept(self, data: bytes, *, pdf: bool = False, binary: bool = False) -> str:
        """Check one file's size against both caps and decode it.

        A PDF gives its text; a ``binary`` file (an image) is only counted: ``""``.
        """
        if len(data) > self._max_file_bytes:
            raise FileRefused(f"the file is larger than the limit of {self._max_file_bytes} bytes")
        if self._budget.used + len(data) > self._budget.limit:
            raise FileRefused(
                f"the referenced files together exceed the per-request limit of "
                f"{self._budget.limit} bytes"
            )
        text = "" if binary else pdf_text(data) if pdf else decode_text(data)
        self._budget.used += len(data)
        return text
