"""FileSource: inline files first, then workspace roots, with every path-safety refusal."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from app.errors import InvalidRequest
from app.settings import Settings
from app.suites.files.resolve import FileSource, SuiteFile


def make_source(
    roots: list[Path] | None = None,
    inline: dict[str, str] | None = None,
    *,
    max_file_bytes: int = 1000,
    max_request_file_bytes: int = 10_000,
) -> FileSource:
    return FileSource(
        inline=inline,
        roots=roots or [],
        max_file_bytes=max_file_bytes,
        max_request_file_bytes=max_request_file_bytes,
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / "evals" / "prompts").mkdir(parents=True)
    (workspace / "shared").mkdir()
    (workspace / "evals" / "notes.md").write_text("evals notes\n")
    (workspace / "shared" / "context.md").write_text("shared context\n")
    (workspace / "evals" / "prompts" / "judge.md").write_text("judge {{candidate_answer}}")
    return workspace


async def test_inline_file_wins_over_workspace_root(root: Path) -> None:
    source = make_source([root], {"shared/context.md": "inline context"})
    loaded = await source.load(["shared/context.md"])
    assert loaded.files == {"shared/context.md": "inline context"}


async def test_inline_file_matches_normalised_path_and_keeps_path_as_written() -> None:
    source = make_source(inline={"docs/a.md": "A"})
    loaded = await source.load(["./docs\\a.md"])
    assert loaded.files == {"./docs\\a.md": "A"}


async def test_file_read_relative_to_workspace_root(root: Path) -> None:
    loaded = await make_source([root]).load(["shared/context.md", "./evals/notes.md"])
    assert loaded.files == {
        "shared/context.md": "shared context\n",
        "./evals/notes.md": "evals notes\n",
    }
    assert loaded.missing == []


async def test_second_root_is_searched_when_first_lacks_the_file(
    root: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "only-here.txt").write_text("here")
    loaded = await make_source([root, other]).load(["only-here.txt"])
    assert loaded.files == {"only-here.txt": "here"}


async def test_suite_named_by_path_resolves_relative_to_its_folder_then_root(root: Path) -> None:
    source = make_source([root]).for_suite(
        SuiteFile(text="", name="evals/suite.yaml", root=root, folder=PurePosixPath("evals"))
    )
    loaded = await source.load(["notes.md", "prompts/judge.md", "../shared/context.md"])
    assert loaded.files == {
        "notes.md": "evals notes\n",
        "prompts/judge.md": "judge {{candidate_answer}}",
        "../shared/context.md": "shared context\n",
    }


async def test_missing_file_is_listed_not_refused(root: Path) -> None:
    loaded = await make_source([root]).collect(["nope.md", "shared/context.md"])
    assert loaded.missing == ["nope.md"]
    assert loaded.refused == {}


async def test_open_suite_reads_a_suite_file_under_a_root(root: Path) -> None:
    (root / "evals" / "suite.yaml").write_text("evalcases: []\r\n")
    suite_file = await make_source([root]).open_suite("evals/suite.yaml")
    assert suite_file.text == "evalcases: []\n"
    assert suite_file.folder == PurePosixPath("evals")


@pytest.mark.parametrize(
    "path",
    ["//etc/passwd", "\\\\server\\share\\x.md", "C:\\Windows\\win.ini", "C:/x.md"],
    ids=["posix-double-slash", "unc", "windows-drive", "windows-forward-slash"],
)
async def test_absolute_path_is_refused(root: Path, path: str) -> None:
    loaded = await make_source([root]).collect([path])
    assert "absolute paths are not allowed" in loaded.refused[path]


@pytest.mark.parametrize(
    "path", ["../secret.txt", "shared/../../secret.txt", "..\\secret.txt"], ids=str
)
async def test_path_leaving_the_root_is_refused(root: Path, path: str) -> None:
    (root.parent / "secret.txt").write_text("top secret")
    loaded = await make_source([root]).collect([path])
    assert "leaves the workspace root" in loaded.refused[path]
    assert loaded.files == {}


async def test_dot_dot_that_stays_inside_the_root_is_read(root: Path) -> None:
    loaded = await make_source([root]).load(["evals/../shared/context.md"])
    assert loaded.files == {"evals/../shared/context.md": "shared context\n"}


async def test_symlink_pointing_outside_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    os.symlink(outside, root / "shared" / "link.md")
    loaded = await make_source([root]).collect(["shared/link.md"])
    assert "outside the workspace root" in loaded.refused["shared/link.md"]


async def test_symlink_inside_the_root_is_followed(root: Path) -> None:
    os.symlink(root / "shared" / "context.md", root / "evals" / "alias.md")
    loaded = await make_source([root]).load(["evals/alias.md"])
    assert loaded.files == {"evals/alias.md": "shared context\n"}


async def test_file_over_the_size_cap_is_refused(root: Path) -> None:
    (root / "big.txt").write_text("x" * 101)
    loaded = await make_source([root], max_file_bytes=100).collect(["big.txt"])
    assert "larger than the limit of 100 bytes" in loaded.refused["big.txt"]


async def test_inline_file_over_the_size_cap_is_refused() -> None:
    source = make_source(inline={"big.txt": "é" * 60}, max_file_bytes=100)
    loaded = await source.collect(["big.txt"])
    assert "larger than the limit" in loaded.refused["big.txt"]


async def test_files_over_the_per_request_cap_are_refused(root: Path) -> None:
    for name in ("a", "b", "c"):
        (root / f"{name}.txt").write_text("x" * 40)
    source = make_source([root], max_file_bytes=100, max_request_file_bytes=100)
    loaded = await source.collect(["a.txt", "b.txt"])
    assert set(loaded.files) == {"a.txt", "b.txt"}
    later = await source.collect(["c.txt"])
    assert "per-request limit of 100 bytes" in later.refused["c.txt"]


async def test_non_utf8_file_is_refused(root: Path) -> None:
    (root / "latin1.txt").write_bytes("café".encode("latin-1"))
    loaded = await make_source([root]).collect(["latin1.txt"])
    assert "not UTF-8 text" in loaded.refused["latin1.txt"]


async def test_binary_file_with_nul_bytes_is_refused(root: Path) -> None:
    (root / "image.png").write_bytes(b"PNG\x00\x00\x00\rIHDR")
    loaded = await make_source([root]).collect(["image.png"])
    assert "binary" in loaded.refused["image.png"]


async def test_folder_is_refused_as_not_a_regular_file(root: Path) -> None:
    loaded = await make_source([root]).collect(["shared"])
    assert "not a regular file" in loaded.refused["shared"]


async def test_crlf_line_endings_become_lf(root: Path) -> None:
    (root / "win.txt").write_bytes(b"line1\r\nline2\r\n")
    loaded = await make_source([root], {"inline.txt": "a\r\nb"}).load(["win.txt", "inline.txt"])
    assert loaded.files == {"win.txt": "line1\nline2\n", "inline.txt": "a\nb"}


async def test_load_raises_invalid_request_naming_every_refused_path(root: Path) -> None:
    source = make_source([root])
    with pytest.raises(InvalidRequest) as caught:
        await source.load(
            ["C:/etc/passwd", "../x", "shared/context.md"],
            locations={"C:/etc/passwd": "input_messages[0].content[1].value"},
        )
    errors = {error.path: error.message for error in caught.value.errors}
    assert set(errors) == {"input_messages[0].content[1].value", "../x"}
    assert "'C:/etc/passwd'" in errors["input_messages[0].content[1].value"]


async def test_from_settings_uses_workspace_roots_and_caps(root: Path) -> None:
    settings = Settings(workspace_roots=[root], max_file_bytes=5)
    loaded = await FileSource.from_settings(settings).collect(["shared/context.md"])
    assert "limit of 5 bytes" in loaded.refused["shared/context.md"]
