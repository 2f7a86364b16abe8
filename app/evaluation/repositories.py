"""A workspace's repositories: cloned once per run (and process), copied into each case.

The first case of a run that needs a repository clones it into a folder of the run's
(``git clone --no-checkout``, with the suite's ``depth`` and ``filter``; a commit named
with ``depth`` is fetched on its own, or with the whole history when the server will not
give it by a short id), applies ``sparse``, resolves the ref (a branch of the source, a
tag or a commit; ``ancestor`` steps back along first parents) and checks it out detached;
cases that ask meanwhile wait for that clone. Each case then gets a copy of the checkout,
``.git`` included, so an agent may run git in it. The clone's ``origin`` is set to the
URL the suite named (never the operator's mirror folder). A failed clone
fails the cases that waited for it and is tried again by the next case.

git runs without a terminal or password prompts, with only the transport the source needs
allowed (``file`` for a local copy), under a time limit. The clones are removed when the
run's context is (``weakref.finalize``).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import weakref
from pathlib import Path

from app.evaluation.links import LinkRefused, copy_without_links
from app.sandbox.folders import new_folder
from app.sandbox.spawn import DEVNULL, STDOUT, spawn
from app.settings.git import git_environment, parse_url
from app.suites.model import WorkspaceRepo

GIT_TIMEOUT_SECONDS = 600.0
"""Longest one git command of a clone may take."""
MAX_ERROR_CHARS = 600
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,64}$")


class RepositoryError(Exception):
    """A repository could not be cloned or checked out (the message names it and why)."""


class RepoCheckouts:
    """The repositories of one run's workspace, each cloned once and copied per case."""

    def __init__(self, timeout_seconds: float = GIT_TIMEOUT_SECONDS) -> None:
        """Clone nothing yet; each git command may take ``timeout_seconds``."""
        self._timeout = timeout_seconds
        self._folder: Path | None = None
        self._clones: dict[WorkspaceRepo, asyncio.Future[Path]] = {}

    async def place(self, repo: WorkspaceRepo, workspace: Path) -> None:
        """Copy ``repo``'s checkout to its folder inside ``workspace``.

        Raises:
            RepositoryError: It could not be cloned, or its folder already holds files.
        """
        checkout = await self._checkout(repo)
        target = workspace / repo.path
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise RepositoryError(
                f"repository {_name(repo)!r}: {repo.path!r} already holds files of the template"
            )
        try:
            await asyncio.to_thread(copy_without_links, checkout, target, dirs_exist_ok=True)
        except LinkRefused as exc:
            raise RepositoryError(f"repository {_name(repo)!r}: {exc}") from None
        except OSError as exc:
            raise RepositoryError(
                f"repository {_name(repo)!r} could not be copied: {exc}"
            ) from None

    async def _checkout(self, repo: WorkspaceRepo) -> Path:
        clone = self._clones.get(repo)
        if clone is None:
            clone = asyncio.ensure_future(self._clone(repo, self._new_folder()))
            self._clones[repo] = clone
            clone.add_done_callback(lambda done: self._forget_failed(repo, done))
        return await asyncio.shield(clone)

    def _forget_failed(self, repo: WorkspaceRepo, done: asyncio.Future[Path]) -> None:
        if (done.cancelled() or done.exception() is not None) and self._clones.get(repo) is done:
            del self._clones[repo]

    def _new_folder(self) -> Path:
        if self._folder is None:
            self._folder = new_folder("repos")
            weakref.finalize(self, shutil.rmtree, self._folder, True)
        return Path(tempfile.mkdtemp(dir=self._folder))

    async def _clone(self, repo: WorkspaceRepo, folder: Path) -> Path:
        if repo.source is None:
            raise RepositoryError(f"repository {_name(repo)!r} has no source (it was not placed)")
        is_url = repo.url is not None and repo.source == repo.url
        source = repo.source if is_url else Path(repo.source).as_uri()
        protocol = parse_url(repo.source).protocol if is_url else "file"
        checkout = folder / "checkout"
        git = _Git(_name(repo), protocol, self._timeout)
        by_commit = repo.ref is not None and _COMMIT.fullmatch(repo.ref) is not None
        clone = ["clone", "--no-checkout", "--quiet"]
        if repo.depth is not None:
            clone += ["--depth", str(repo.depth + repo.ancestor)]
            if repo.ref is not None and not by_commit:
                clone += ["--branch", repo.ref]
        if repo.filter is not None:
            clone += [f"--filter={repo.filter}"]
        await git.run([*clone, "--", source, str(checkout)], folder)
        if repo.sparse:
            await git.run(["sparse-checkout", "set", "--", *repo.sparse], checkout)
        commit = await self._resolve(git, repo, checkout, by_commit)
        await git.run(["checkout", "--quiet", "--detach", commit], checkout)
        if repo.url is not None:
            await git.run(["remote", "set-url", "origin", repo.url], checkout)
        return checkout

    async def _resolve(
        self, git: _Git, repo: WorkspaceRepo, checkout: Path, by_commit: bool
    ) -> str:
        """The commit to check out: ``ref`` (or the default branch) less ``ancestor`` commits."""
        ref = repo.ref or "HEAD"
        candidates = [ref] if ref == "HEAD" else [ref, f"origin/{ref}"]
        for candidate in candidates:
            found = await git.commit_of(candidate, repo.ancestor, checkout)
            if found is not None:
                return found
        if by_commit and repo.depth is not None:  # a shallow clone holds only branch tips
            depth = str(repo.depth + repo.ancestor)
            try:  # servers give a commit by its full id only
                await git.run(["fetch", "--quiet", "--depth", depth, "origin", ref], checkout)
                fetched = "FETCH_HEAD"
            except RepositoryError:
                every_branch = "+refs/heads/*:refs/remotes/origin/*"
                fetch = ["fetch", "--quiet", "--unshallow", "--tags", "origin", every_branch]
                await git.run(fetch, checkout)
                fetched = ref
            found = await git.commit_of(fetched, repo.ancestor, checkout)
            if found is not None:
                return found
        steps = f" less {repo.ancestor} commit(s)" if repo.ancestor else ""
        raise RepositoryError(f"repository {_name(repo)!r}: no commit {ref!r}{steps} in it")


class _Git:
    """Runs git for one repository: no prompts, one transport, a time limit."""

    def __init__(self, name: str, protocol: str, timeout: float) -> None:
        self._name = name
        self._timeout = timeout
        self._environment = git_environment(protocol)

    async def commit_of(self, ref: str, ancestor: int, folder: Path) -> str | None:
        """The commit ``ref`` less ``ancestor`` first parents names, or None."""
        wanted = f"{ref}~{ancestor}^{{commit}}" if ancestor else f"{ref}^{{commit}}"
        status, output = await self._run(["rev-parse", "--verify", "--quiet", wanted], folder)
        return output.strip() if status == 0 and output.strip() else None

    async def run(self, args: list[str], folder: Path) -> str:
        """What git printed.

        Raises:
            RepositoryError: git failed or ran out of time (its last words are given).
        """
        status, output = await self._run(args, folder)
        if status != 0:
            said = output.strip()[-MAX_ERROR_CHARS:] or f"exit status {status}"
            raise RepositoryError(f"repository {self._name!r}: git {args[0]} failed: {said}")
        return output

    async def _run(self, args: list[str], folder: Path) -> tuple[int, str]:
        try:
            process = await spawn(
                ["git", *args],
                cwd=folder,
                env=self._environment,
                stdin=DEVNULL,
                stderr=STDOUT,
            )
        except FileNotFoundError:
            raise RepositoryError(
                f"repository {self._name!r}: git is not installed on this server"
            ) from None
        assert process.stdout is not None
        try:
            async with asyncio.timeout(self._timeout):
                output = await process.stdout.read()
                status = await process.wait()
        except TimeoutError:
            raise RepositoryError(
                f"repository {self._name!r}: git {args[0]} took longer than {self._timeout:g} s"
            ) from None
        finally:
            process.kill()
            await process.wait()
            process.close()
        return status, output.decode("utf-8", "replace")


def _name(repo: WorkspaceRepo) -> str:
    return repo.url or repo.path
