"""``app.suites`` stays independent of the web framework, HTTP clients and providers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SUITES = Path(__file__).resolve().parents[2] / "app" / "suites"
FORBIDDEN = ("fastapi", "starlette", "httpx", "app.providers", "app.api")


def imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


@pytest.mark.parametrize("path", sorted(SUITES.glob("*.py")), ids=lambda path: path.name)
def test_suites_module_imports_no_web_or_provider_code(path: Path) -> None:
    bad = {
        module
        for module in imported_modules(path)
        if any(module == name or module.startswith(f"{name}.") for name in FORBIDDEN)
    }
    assert bad == set()
