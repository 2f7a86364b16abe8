"""Checking out a workspace's repositories with real git: refs, history, sparse folders, once.

The source is a real repository on disk (as an operator's mirror is), or bare repositories
served over HTTP on 127.0.0.1 (as a remote is).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.evaluation.repositories import RepoCheckouts, RepositoryError
from app.evaluation.workspaces import WorkspaceError, case_workspace
from app.evaluators.code.programs import ProgramRunner
from app.suites.model import Workspace, WorkspaceHook, WorkspaceRepo
from testkit.git_repos import git, make_repository, serve_repositories

URL = "https://git.example.invalid/acme/core.git"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    folder = tmp_path_factory.mktemp("mirror") / "core"
    return folder, make_repository(folder)


def files(folder: Path) -> list[str]:
    return sorted(
        path.relative_to(folder).as_posix()
        for path in folder.rglob("*")
        if path.is_file() and ".git" not in path.parts
    )


def history(folder: Path) -> list[str]:
    return git(folder, "log", "--format=%s").splitlines()


@pytest.mark.parametrize(
    ("options", "head", "commits"),
    [
        ({}, "two", 2),  # the default branch, whole history
        ({"ref": "v1"}, "one", 1),  # a tag
        ({"ref": "feature"}, "three", 3),  # a branch that is not the default one
        ({"ref": "main", "ancestor": 1}, "one", 1),  # one first parent back
        ({"depth": 1}, "two", 1),
        ({"depth": 1, "ref": "feature"}, "three", 1),
        ({"depth": 1, "ref": "feature", "ancestor": 1}, "two", 1),  # depth counts from HEAD
        ({"filter": "blob:none"}, "two", 2),
    ],
)
async def test_the_ref_asked_for_is_checked_out_with_the_history_asked_for(
    source: tuple[Path, dict[str, str]],
    tmp_path: Path,
    options: dict[str, object],
    head: str,
    commits: int,
) -> None:
    folder, ids = source
    repo = WorkspaceRepo.model_validate({"path": "repo", "source": str(folder), **options})
    await RepoCheckouts().place(repo, tmp_path)
    checkout = tmp_path / "repo"
    assert git(checkout, "rev-parse", "HEAD") == ids[head]
    assert len(history(checkout)) == commits
    assert (checkout / "feature.txt").exists() == (head == "three")
    assert git(checkout, "status", "--porcelain") == ""  # a clean checkout


@pytest.mark.parametrize("shallow", [False, True])
async def test_a_commit_is_checked_out_by_its_id(
    source: tuple[Path, dict[str, str]], tmp_path: Path, shallow: bool
) -> None:
    folder, ids = source
    depth = 1 if shallow else None
    repo = WorkspaceRepo(path="repo", source=str(folder), ref=ids["one"], depth=depth)
    await RepoCheckouts().place(repo, tmp_path)
    assert git(tmp_path / "repo", "rev-parse", "HEAD") == ids["one"]
    short = WorkspaceRepo(path="short", source=str(folder), ref=ids["three"][:10], depth=depth)
    await RepoCheckouts().place(short, tmp_path)
    assert git(tmp_path / "short", "rev-parse", "HEAD") == ids["three"]


async def test_sparse_checks_out_only_the_folders_named(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    folder, _ = source
    repo = WorkspaceRepo(path="repo", source=str(folder), sparse=("packages/core",))
    await RepoCheckouts().place(repo, tmp_path)
    assert files(tmp_path / "repo") == ["README.md", "packages/core/package.json"]


async def test_origin_is_the_url_the_suite_named_never_the_mirror_folder(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    folder, _ = source
    await RepoCheckouts().place(WorkspaceRepo(path="r", url=URL, source=str(folder)), tmp_path)
    remotes = git(tmp_path / "r", "remote", "--verbose")
    assert URL in remotes
    assert str(folder) not in remotes


async def test_an_unknown_ref_is_an_error_naming_the_repository_and_the_ref(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    folder, _ = source
    repo = WorkspaceRepo(path="r", url=URL, source=str(folder), ref="release-9")
    with pytest.raises(RepositoryError, match=r"'https://git\.example\.invalid/acme/core\.git'"):
        await RepoCheckouts().place(repo, tmp_path)
    with pytest.raises(RepositoryError, match="no commit 'release-9'"):
        await RepoCheckouts().place(repo, tmp_path)


async def test_inherited_git_variables_do_not_steer_the_clone(
    source: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, ids = source
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path / "elsewhere"))
    await RepoCheckouts().place(WorkspaceRepo(path="r", source=str(folder)), tmp_path / "ws")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert git(tmp_path / "ws" / "r", "rev-parse", "HEAD") == ids["two"]
    assert not (tmp_path / "elsewhere").exists()


async def test_a_remote_is_cloned_once_for_all_the_cases_of_a_run(tmp_path: Path) -> None:
    make_repository(tmp_path / "work")
    git(tmp_path, "clone", "--quiet", "--bare", "work", "served/core.git")
    with serve_repositories(tmp_path / "served") as served:
        url = served.url + "core.git"
        repo = WorkspaceRepo(path="core", url=url, source=url)
        checkouts = RepoCheckouts()
        workspaces = [tmp_path / "cases" / str(n) for n in range(6)]
        await asyncio.gather(*(checkouts.place(repo, folder) for folder in workspaces))
        asked = list(served.requests)
        await RepoCheckouts().place(repo, tmp_path / "another run")
    refs = [path for path in asked if "info/refs" in path]
    assert refs == ["/core.git/info/refs?service=git-upload-pack"]
    for folder in workspaces:
        assert files(folder / "core") == [
            "README.md",
            "docs/guide.md",
            "packages/core/package.json",
        ]
    assert len(served.requests) > len(asked)  # another run clones again: refs may have moved


async def test_a_failed_clone_is_tried_again_by_the_next_case(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror"
    repo = WorkspaceRepo(path="r", url=URL, source=str(mirror))
    checkouts = RepoCheckouts()
    with pytest.raises(RepositoryError, match="git clone failed"):
        await checkouts.place(repo, tmp_path / "first")
    git(tmp_path, "clone", "--quiet", str(source[0]), str(mirror))
    await checkouts.place(repo, tmp_path / "second")
    assert files(tmp_path / "second" / "r")


async def test_the_clones_are_removed_with_the_run(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    checkouts = RepoCheckouts()
    await checkouts.place(WorkspaceRepo(path="r", source=str(source[0])), tmp_path)
    clones = checkouts._folder
    assert clones is not None
    assert clones.is_dir()
    del checkouts
    assert not clones.exists()


async def test_a_case_workspace_holds_the_template_and_the_repositories(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    (tmp_path / "template" / "notes").mkdir(parents=True)
    (tmp_path / "template" / "notes" / "todo.md").write_text("todo\n")
    spec = Workspace(
        template=str(tmp_path / "template"),
        repos=(WorkspaceRepo(path="vendor/core", url=URL, source=str(source[0]), ref="v1"),),
    )
    async with case_workspace(spec, None, "case-1", RepoCheckouts()) as workspace:
        assert files(workspace.path) == [
            "notes/todo.md",
            "vendor/core/README.md",
            "vendor/core/docs/guide.md",
            "vendor/core/packages/core/package.json",
        ]
        (workspace.path / "vendor" / "core" / "README.md").write_text("# changed\n")
        changes = await workspace.changes()
    assert changes.startswith("diff --git a/vendor/core/README.md b/vendor/core/README.md")


async def test_a_repository_over_template_files_fails_the_case_by_name(
    source: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    (tmp_path / "template" / "core").mkdir(parents=True)
    (tmp_path / "template" / "core" / "mine.txt").write_text("mine\n")
    spec = Workspace(
        template=str(tmp_path / "template"),
        repos=(WorkspaceRepo(path="core", url=URL, source=str(source[0])),),
    )
    with pytest.raises(WorkspaceError, match="'core' already holds files of the template"):
        async with case_workspace(spec, None, "case-1", RepoCheckouts()):
            pass


async def test_a_server_without_git_fails_the_clone_by_name(
    source: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on it
    repo = WorkspaceRepo(path="r", url=URL, source=str(source[0]))
    with pytest.raises(RepositoryError, match="git is not installed on this server"):
        await RepoCheckouts().place(repo, tmp_path / "ws")


HOOK = """\
import json, os, sys
folder = os.path.join(json.load(sys.stdin)["workspace_path"], ".claude")
os.makedirs(folder)
open(os.path.join(folder, "skills.md"), "w").write("copied")
"""


async def test_a_read_only_template_gives_a_workspace_its_hooks_can_write_in(
    tmp_path: Path,
) -> None:
    template = tmp_path / "template"
    (template / "skills").mkdir(parents=True)
    (template / "skills" / "deploy.md").write_text("deploy\n")
    for entry in (template / "skills" / "deploy.md", template / "skills", template):
        entry.chmod(0o555 if entry.is_dir() else 0o444)  # a read-only checkout of the suite
    hook = WorkspaceHook(command=("python3", "-c", HOOK), cwd=str(tmp_path))
    spec = Workspace(template=str(template), before_all=hook)
    async with case_workspace(spec, ProgramRunner(roots=(tmp_path,)), "case-1") as workspace:
        assert (workspace.path / ".claude" / "skills.md").read_text() == "copied"
        (workspace.path / "skills" / "deploy.md").write_text("changed\n")
    assert (template / "skills" / "deploy.md").read_text() == "deploy\n"
