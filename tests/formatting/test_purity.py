"""Pure modules (the formatting core, judge-reply parsing) import nothing that does I/O."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
PURE_MODULES = [
    *sorted((APP / "formatting").glob("*.py")),
    APP / "evaluators" / "judges" / "judge_output.py",
]
FORBIDDEN = {
    "fastapi",
    "starlette",
    "httpx",
    "sqlalchemy",
    "asyncio",
    "os",
    "pathlib",
    "io",
    "shutil",
    "socket",
    "subprocess",
    "tempfile",
    "glob",
    "urllib",
    "requests",
    "time",
    "random",
    "datetime",
    "app.api",
    "app.providers",
    "app.runs",
    "app.suites",
}
FORBIDDEN_CALLS = {"open", "input", "print"}


def imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", PURE_MODULES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pure_module_does_no_io(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    for name in imported_modules(tree):
        assert not any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN), name
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not calls & FORBIDDEN_CALLS
