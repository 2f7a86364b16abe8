"""Evaluators and the evaluation package stay out of the web, HTTP-client and database layers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
LAYERS = {
    "evaluators": {"fastapi", "starlette", "httpx", "sqlalchemy", "app.api", "app.runs"},
    "evaluation": {"fastapi", "starlette", "sqlalchemy", "app.api", "app.runs", "app.container"},
}
PURE = {"asyncio", "os", "pathlib", "time", "datetime", "random", "app.providers.registry"}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def forbidden(names: set[str], banned: set[str]) -> list[str]:
    return sorted(n for n in names if any(n == b or n.startswith(b + ".") for b in banned))


@pytest.mark.parametrize(
    "module",
    [path for package in LAYERS for path in sorted((APP / package).glob("*.py"))],
    ids=lambda path: f"{path.parent.name}/{path.name}",
)
def test_module_does_not_import_forbidden_layers(module: Path) -> None:
    assert forbidden(imported_modules(module), LAYERS[module.parent.name]) == []


def test_judge_output_parsing_is_pure() -> None:
    assert forbidden(imported_modules(APP / "evaluators" / "judge_output.py"), PURE) == []
