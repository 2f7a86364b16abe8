"""Reading a workspace's ``repos``: both spellings, every refusal named, only allowed sources.

Where a repository may come from is the operator's: a URL mapped to a local copy
(``EVAL_GIT_MIRRORS``), a URL under an allowed prefix (``EVAL_GIT_REMOTES``), or a folder
inside the suite's workspace root. Anything else is an error naming the settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.settings import Settings
from app.settings.git import RepositoryRefused, parse_url
from app.suites.loader import SuiteReport, check_suite
from app.suites.model import WorkspaceRepo
from app.suites.workspaces.git_sources import GitSources
from tests.suites.helpers import errors_by_path, source

CASES = [{"id": "a", "criteria": "x", "input": "Hi"}]
URL = "https://github.com/acme/core.git"
SECRET = "ghp_not_a_real_token_123"


async def read(
    root: Path, repos: Any, git: GitSources | None = None, **workspace: Any
) -> SuiteReport:
    (root / "evals").mkdir(parents=True, exist_ok=True)
    suite = {"workspace": {"repos": repos, **workspace}, "tests": CASES}
    (root / "evals" / "suite.yaml").write_text(json.dumps(suite))
    return await check_suite(
        "evals/suite.yaml", file_source=source(roots=[root]), git=git or GitSources()
    )


def placed(report: SuiteReport) -> tuple[WorkspaceRepo, ...]:
    assert report.valid, report.errors
    assert report.suite is not None
    assert report.suite.workspace is not None
    return report.suite.workspace.repos


async def test_agentvs_short_spelling_is_cloned_from_the_operators_mirror(tmp_path: Path) -> None:
    mirror = tmp_path / "mirrors" / "core.git"
    mirror.mkdir(parents=True)
    git = GitSources.of({"https://GitHub.com/acme/core": mirror})  # same repository
    report = await read(tmp_path, [{"path": "./my-repo", "repo": URL, "commit": "main"}], git)
    assert placed(report) == (
        WorkspaceRepo(path="my-repo", url=URL, source=str(mirror), ref="main"),
    )


async def test_the_long_spelling_reads_checkout_and_clone(tmp_path: Path) -> None:
    repo = {
        "path": "vendor/core",
        "source": {"type": "git", "url": URL},
        "checkout": {"base_commit": "v1.2.0", "ancestor": 2, "resolve": "remote"},
        "clone": {"depth": 5, "filter": "blob:none", "sparse": ["packages/core", "docs/"]},
    }
    git = GitSources.of({}, ["https://github.com/acme/"])
    report = await read(tmp_path, [repo], git)
    assert placed(report) == (
        WorkspaceRepo(
            path="vendor/core",
            url=URL,
            source=URL,  # an allowed remote is cloned from its URL
            ref="v1.2.0",
            ancestor=2,
            depth=5,
            filter="blob:none",
            sparse=("packages/core", "docs"),
        ),
    )


async def test_a_local_repository_must_be_a_folder_inside_the_workspace_root(
    tmp_path: Path,
) -> None:
    (tmp_path / "repos" / "core").mkdir(parents=True)
    local = {"type": "local", "path": "../repos/core"}
    report = await read(tmp_path, [{"path": "core", "source": local}])
    folder = str(tmp_path / "repos" / "core")
    assert placed(report) == (WorkspaceRepo(path="core", local=folder, source=folder),)
    outside = {"type": "local", "path": "../../elsewhere"}
    report = await read(tmp_path, [{"path": "core", "source": outside}])
    assert (
        "no such folder inside the workspace root"
        in errors_by_path(report)["workspace.repos[0].source.path"]
    )


async def test_a_url_the_operator_does_not_allow_names_both_settings(tmp_path: Path) -> None:
    report = await read(tmp_path, [{"path": "core", "repo": URL}])
    error = errors_by_path(report)["workspace.repos[0]"]
    assert error.startswith(f"{URL!r} is not allowed: ")
    assert "EVAL_GIT_MIRRORS" in error
    assert "EVAL_GIT_REMOTES" in error


async def test_a_mirror_missing_on_the_server_is_named(tmp_path: Path) -> None:
    git = GitSources.of({URL: tmp_path / "gone"})
    report = await read(tmp_path, [{"path": "core", "repo": URL}], git)
    assert (
        "its local copy (EVAL_GIT_MIRRORS) is missing"
        in errors_by_path(report)["workspace.repos[0]"]
    )


async def test_credentials_in_a_url_are_refused_without_repeating_them(tmp_path: Path) -> None:
    git = GitSources.of({}, ["https://github.com/"])
    url = f"https://x-access-token:{SECRET}@github.com/acme/core.git"
    report = await read(tmp_path, [{"path": "core", "repo": url}], git)
    error = errors_by_path(report)["workspace.repos[0].repo"]
    assert "credentials in a repository URL are not accepted" in error
    assert "https://***@github.com/acme/core.git" in error
    assert SECRET not in json.dumps([e.model_dump() for e in report.errors])


@pytest.mark.parametrize(
    ("repo", "path", "says"),
    [
        ({"repo": URL}, "workspace.repos[0].path", "is required"),
        ({"path": "../up", "repo": URL}, "workspace.repos[0].path", "leaves the workspace"),
        ({"path": "/abs", "repo": URL}, "workspace.repos[0].path", "leaves the workspace"),
        ({"path": "r"}, "workspace.repos[0]", "give 'repo' (a URL) or 'source'"),
        ({"path": "r", "repo": URL, "source": {}}, "workspace.repos[0]", "not both"),
        ({"path": "r", "source": {"type": "svn"}}, "workspace.repos[0].source", "type: git"),
        ({"path": "r", "repo": 3}, "workspace.repos[0].repo", "a number"),
        ({"path": "r", "repo": "ext::sh -c id"}, "workspace.repos[0].repo", "not a repository"),
        ({"path": "r", "repo": "ext::ssh"}, "workspace.repos[0].repo", "remote helpers"),
        ({"path": "r", "repo": "ftp://h/r.git"}, "workspace.repos[0].repo", "scheme 'ftp'"),
        (
            {"path": "r", "repo": "https://github.com/acme/../evil/r.git"},
            "workspace.repos[0].repo",
            "'..' path segments",
        ),
        ({"path": "r", "repo": URL, "commit": "--upload-pack=x"}, "workspace.repos[0].commit", "x"),
        ({"path": "r", "repo": URL, "commit": "a b"}, "workspace.repos[0].commit", "'a b'"),
        (
            {"path": "r", "repo": URL, "checkout": {"resolve": "local"}},
            "workspace.repos[0].checkout.resolve",
            "resolve 'local' is not supported",
        ),
        (
            {"path": "r", "repo": URL, "checkout": {"ancestor": -1}},
            "workspace.repos[0].checkout.ancestor",
            "-1",
        ),
        ({"path": "r", "repo": URL, "clone": {"depth": 0}}, "workspace.repos[0].clone.depth", "0"),
        (
            {"path": "r", "repo": URL, "clone": {"filter": "--x"}},
            "workspace.repos[0].clone.filter",
            "'--x'",
        ),
        (
            {"path": "r", "repo": URL, "clone": {"sparse": "docs"}},
            "workspace.repos[0].clone.sparse",
            "a string",
        ),
        (
            {"path": "r", "repo": URL, "clone": {"sparse": ["../x"]}},
            "workspace.repos[0].clone.sparse[0]",
            "leaves the workspace",
        ),
        ({"path": "r", "repo": URL, "commit": "a", "checkout": {}}, "workspace.repos[0]", "both"),
    ],
)
async def test_a_malformed_repository_is_an_error_naming_the_field(
    tmp_path: Path, repo: dict[str, Any], path: str, says: str
) -> None:
    report = await read(tmp_path, [repo])
    assert not report.valid
    assert says in errors_by_path(report)[path]


async def test_repositories_may_not_share_a_folder(tmp_path: Path) -> None:
    git = GitSources.of({}, ["https://github.com/acme/"])
    repos = [
        {"path": "vendor", "repo": URL},
        {"path": "vendor/core", "repo": "https://github.com/acme/other.git"},
    ]
    report = await read(tmp_path, repos, git)
    assert (
        "repositories at 'vendor' and 'vendor/core' overlap"
        in errors_by_path(report)["workspace.repos"]
    )


async def test_repos_must_be_a_list(tmp_path: Path) -> None:
    report = await read(tmp_path, {"path": "r", "repo": URL})
    assert (
        "must be a list of repositories, not a mapping" in errors_by_path(report)["workspace.repos"]
    )


segments = st.text(alphabet="abcAB-_", min_size=1, max_size=6)


@given(first=segments, rest=st.lists(segments, max_size=3))
def test_a_remote_prefix_allows_exactly_the_repositories_under_it(
    first: str, rest: list[str]
) -> None:
    git = GitSources.of({}, ["https://git.example.invalid/acme"])
    url = parse_url("/".join(["https://git.example.invalid", first, *rest]) + ".git")
    try:
        git.source_of(url)
        allowed = True
    except RepositoryRefused:
        allowed = False
    assert allowed == (first == "acme" and bool(rest))


def test_the_settings_read_mirrors_as_json_and_remotes_as_a_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVAL_GIT_MIRRORS", json.dumps({URL: "/srv/git/core.git"}))
    monkeypatch.setenv("EVAL_GIT_REMOTES", "https://github.com/acme/, git@github.com:acme/")
    settings = Settings()
    git = GitSources.from_settings(settings)
    assert git.mirrors == {"https://github.com/acme/core": "/srv/git/core.git"}
    assert git.source_of(parse_url("git@github.com:acme/tools.git")) == (
        "git@github.com:acme/tools.git"
    )


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("EVAL_GIT_MIRRORS", json.dumps({URL: "relative/core.git"}), "absolute path"),
        ("EVAL_GIT_MIRRORS", json.dumps({"ext::sh": "/srv/x"}), "remote helpers"),
        ("EVAL_GIT_REMOTES", f"https://u:{SECRET}@github.com/", "credentials"),
    ],
)
def test_settings_that_are_not_repositories_stop_the_service(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, says: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match=says) as raised:
        Settings()
    assert SECRET not in str(raised.value)
