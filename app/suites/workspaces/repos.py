"""A workspace's ``repos`` (AgentV's repositories checked out into each case's workspace).

Each item has a ``path`` (the folder inside the workspace), a source (``repo: URL``, or
``source: {type: git, url}`` / ``{type: local, path}``), and optionally what to check out
(``commit: REF``, or ``checkout: {ref | base_commit, ancestor, resolve: remote}``) and how
(``clone: {depth, filter, sparse}``). A malformed field is an error naming it and its value;
``resolve: local`` (a ref of the machine's own checkout) is refused by name.

``place_repos`` decides where each is cloned from: a URL only where the operator allows it
(``GitSources``), a local repository only inside the suite's workspace root.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from app.settings.git import RepositoryRefused, parse_url
from app.suites.documents.document import DocumentPath
from app.suites.documents.findings import MISSING, Findings, describe, warn_unknown_keys
from app.suites.model import WorkspaceRepo
from app.suites.reading import refuse
from app.suites.workspaces.git_sources import GitSources

KEYS = frozenset({"path", "repo", "source", "commit", "checkout", "clone"})
CHECKOUT_KEYS = frozenset({"ref", "base_commit", "ancestor", "resolve"})
CLONE_KEYS = frozenset({"depth", "filter", "sparse"})
_REF = re.compile(r"^[A-Za-z0-9._/@{}^~+-]+$")
_FILTER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9:=+._-]*$")


def read_repos(
    value: Any, folder: str, where: DocumentPath, findings: Findings
) -> tuple[WorkspaceRepo, ...]:
    """Every repository of ``repos`` (those with errors left out: the errors say why)."""
    if not isinstance(value, list):
        findings.error(where, f"must be a list of repositories, not {describe(value)}")
        return ()
    repos: list[WorkspaceRepo] = []
    for index, item in enumerate(value):
        repo = _repo(item, folder, (*where, index), findings)
        if repo is not None:
            repos.append(repo)
    _check_overlaps(repos, where, findings)
    return tuple(repos)


def _repo(value: Any, folder: str, where: DocumentPath, findings: Findings) -> WorkspaceRepo | None:
    if not isinstance(value, dict):
        findings.error(where, f"must be a mapping with 'path' and 'repo', not {describe(value)}")
        return None
    warn_unknown_keys(value, KEYS, where, findings)
    errors = len(findings.errors)
    path = _inside_path(value.get("path", MISSING), (*where, "path"), findings)
    url, local = _source(value, folder, where, findings)
    ref, ancestor = _checkout(value, where, findings)
    clone = value.get("clone", {})
    if not isinstance(clone, dict):
        findings.error((*where, "clone"), f"must be a mapping, not {describe(clone)}")
        clone = {}
    warn_unknown_keys(clone, CLONE_KEYS, (*where, "clone"), findings)
    depth = clone.get("depth")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        findings.error(
            (*where, "clone", "depth"), f"must be a positive whole number, not {depth!r}"
        )
    filter_ = clone.get("filter")
    if filter_ is not None and not (isinstance(filter_, str) and _FILTER.fullmatch(filter_)):
        findings.error(
            (*where, "clone", "filter"), f"must be a git filter (blob:none), not {filter_!r}"
        )
    sparse = clone.get("sparse", [])
    if not isinstance(sparse, list):
        findings.error(
            (*where, "clone", "sparse"), f"must be a list of folders, not {describe(sparse)}"
        )
        sparse = []
    folders = [
        _inside_path(item, (*where, "clone", "sparse", index), findings)
        for index, item in enumerate(sparse)
    ]
    if len(findings.errors) > errors or path is None:
        return None
    return WorkspaceRepo(
        path=path,
        url=url,
        local=local,
        ref=ref,
        ancestor=ancestor,
        depth=depth,
        filter=filter_,
        sparse=tuple(item for item in folders if item is not None),
    )


def _inside_path(value: Any, where: DocumentPath, findings: Findings) -> str | None:
    """A relative folder that stays inside the workspace, normalised (``./a/`` -> ``a``)."""
    if value is MISSING:
        findings.error(where, "is required: the folder inside the workspace")
        return None
    if not isinstance(value, str) or not value.strip():
        findings.error(where, f"must be a folder's path, not {describe(value)}")
        return None
    normalised = posixpath.normpath(value.strip())
    if value.strip().startswith("/") or normalised == ".." or normalised.startswith("../"):
        findings.error(where, f"{value!r} leaves the workspace: give a path inside it")
        return None
    return normalised


def _source(
    value: Mapping[str, Any], folder: str, where: DocumentPath, findings: Findings
) -> tuple[str | None, str | None]:
    """``(url, local folder)`` of the repository; an error when neither or both are given."""
    if "repo" in value and "source" in value:
        findings.error(where, "give 'repo' or 'source', not both")
        return None, None
    if "repo" in value:
        return _url(value["repo"], (*where, "repo"), findings), None
    source = value.get("source", MISSING)
    if source is MISSING:
        findings.error(where, "is missing its repository: give 'repo' (a URL) or 'source'")
        return None, None
    here: DocumentPath = (*where, "source")
    if not isinstance(source, dict) or source.get("type") not in {"git", "local"}:
        findings.error(
            here,
            f"must be {{type: git, url: URL}} or {{type: local, path: FOLDER}}, not {source!r}",
        )
        return None, None
    warn_unknown_keys(source, frozenset({"type", "url", "path"}), here, findings)
    if source["type"] == "git":
        return _url(source.get("url"), (*here, "url"), findings), None
    local = source.get("path")
    if not isinstance(local, str) or not local.strip():
        findings.error((*here, "path"), f"must be a folder's path, not {describe(local)}")
        return None, None
    return None, posixpath.normpath(posixpath.join(folder, local.strip()))


def _url(value: Any, where: DocumentPath, findings: Findings) -> str | None:
    if not isinstance(value, str):
        findings.error(where, f"must be a repository URL, not {describe(value)}")
        return None
    try:
        return parse_url(value).text
    except RepositoryRefused as exc:
        findings.error(where, str(exc))
        return None


def _checkout(
    value: Mapping[str, Any], where: DocumentPath, findings: Findings
) -> tuple[str | None, int]:
    """``(ref, ancestor)``: ``commit``, or ``checkout``'s ``base_commit`` (else its ``ref``)."""
    if "commit" in value and "checkout" in value:
        findings.error(where, "give 'commit' or 'checkout', not both")
        return None, 0
    if "commit" in value:
        return _ref(value["commit"], (*where, "commit"), findings), 0
    checkout = value.get("checkout", {})
    here: DocumentPath = (*where, "checkout")
    if not isinstance(checkout, dict):
        findings.error(here, f"must be a mapping, not {describe(checkout)}")
        return None, 0
    warn_unknown_keys(checkout, CHECKOUT_KEYS, here, findings)
    if checkout.get("resolve", "remote") != "remote":
        refuse(
            findings,
            (*here, "resolve"),
            f"resolve {checkout['resolve']!r}",
            "refs are resolved in the repository cloned (resolve: remote)",
        )
    key = "base_commit" if "base_commit" in checkout else "ref"
    if key == "base_commit" and "ref" in checkout:
        findings.warn((*here, "ref"), "ignored: 'base_commit' is checked out")
    ref = _ref(checkout[key], (*here, key), findings) if key in checkout else None
    ancestor = checkout.get("ancestor", 0)
    if isinstance(ancestor, bool) or not isinstance(ancestor, int) or ancestor < 0:
        findings.error((*here, "ancestor"), f"must be a whole number from 0, not {ancestor!r}")
        ancestor = 0
    return ref, ancestor


def _ref(value: Any, where: DocumentPath, findings: Findings) -> str | None:
    if isinstance(value, str) and _REF.fullmatch(value) and not value.startswith("-"):
        return value
    findings.error(where, f"must be a branch, tag or commit, not {value!r}")
    return None


def _check_overlaps(
    repos: Sequence[WorkspaceRepo], where: DocumentPath, findings: Findings
) -> None:
    """Two repositories may not share a folder or sit one inside the other."""
    for index, repo in enumerate(repos):
        for other in repos[:index]:
            a, b = PurePosixPath(repo.path), PurePosixPath(other.path)
            if a == b or a.is_relative_to(b) or b.is_relative_to(a):
                findings.error(
                    where,
                    f"repositories at {other.path!r} and {repo.path!r} overlap: give each "
                    "a folder of its own",
                )


def place_repos(
    repos: Sequence[WorkspaceRepo],
    inside_root: Callable[[str], str | None],
    sources: GitSources,
    where: DocumentPath,
    findings: Findings,
) -> tuple[WorkspaceRepo, ...]:
    """Each repository with its ``source`` set (errors say which may not be cloned, and why).

    ``inside_root`` makes a folder relative to the suite file absolute (None outside the
    workspace root), as for a template.
    """
    placed: list[WorkspaceRepo] = []
    for index, repo in enumerate(repos):
        here: DocumentPath = (*where, index)
        if repo.url is not None:
            try:
                source = sources.source_of(parse_url(repo.url))
            except RepositoryRefused as exc:
                findings.error(here, str(exc))
                continue
            placed.append(repo.model_copy(update={"source": source}))
            continue
        local = inside_root(repo.local or ".")
        if local is None or not Path(local).is_dir():
            findings.error(
                (*here, "source", "path"),
                f"{repo.local!r}: no such folder inside the workspace root",
            )
            continue
        escape = _leads_elsewhere(Path(local))
        if escape is not None:
            findings.error((*here, "source", "path"), f"{repo.local!r}: {escape}")
            continue
        placed.append(repo.model_copy(update={"local": local, "source": local}))
    return tuple(placed)


_ELSEWHERE = ("commondir", "objects/info/alternates", "objects/info/http-alternates")


def _leads_elsewhere(folder: Path) -> str | None:
    """Why a local repository would be cloned from outside its folder, or None.

    A ``.git`` file (a gitfile, as worktrees and submodules have) or a ``.git`` link names
    another repository; ``commondir`` and ``alternates`` borrow another's objects. Either
    could reach a repository outside the workspace root, so each is refused by name.
    """
    dot_git = folder / ".git"
    if dot_git.is_symlink():
        return "its .git is a symlink to another repository, which is not accepted"
    if dot_git.is_file():
        return "its .git is a file pointing to another repository (a gitfile), not accepted"
    git_dir = dot_git if dot_git.is_dir() else folder
    for name in _ELSEWHERE:
        if (git_dir / name).exists() or (git_dir / name).is_symlink():
            return f"its {name} borrows another repository, which is not accepted"
    return None
