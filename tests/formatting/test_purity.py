"""The formatting core imports nothing that does I/O or belongs to the web or database layers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "app" / "formatting"
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
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("module", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_formatting_module_is_pure(module: Path) -> None:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    for name in imported_modules(tree):
        assert not any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN), name
    calls = {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }
    assert not calls & FORBIDDEN_CALLS
