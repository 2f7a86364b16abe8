"""Print the table of every setting, or write it into README.md and .env.example.

The table lists each field of ``app.settings.Settings``: its environment variable, its
default and its ``description``. README.md holds it between the settings-table markers;
.env.example lists every variable, commented out at its default.

Usage: .venv/bin/python scripts/settings_table.py [--write]
"""

from __future__ import annotations

import argparse
import sys
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.settings import Settings  # noqa: E402 - needs the repository on sys.path first

README = ROOT / "README.md"
ENV_EXAMPLE = ROOT / ".env.example"
START = "<!-- settings-table:start -->"
END = "<!-- settings-table:end -->"
FIX_COMMAND = ".venv/bin/python scripts/settings_table.py --write"
ENV_EXAMPLE_HEADER = f"""\
# Settings of eval-execution: every EVAL_* variable, commented out at its default.
# Copy to .env (`cp .env.example .env`) and uncomment what you change; docker compose
# passes .env to the service. Generated from app/settings.py by
#   {FIX_COMMAND}

# Used by docker-compose.yml for the PostgreSQL user `eval` (database and service).
POSTGRES_PASSWORD=eval

# Keys referenced as ${{{{ VAR }}}} in deploy/targets.yaml go here too, e.g.:
# OPENAI_API_KEY=
"""


def env_name(field_name: str) -> str:
    """The environment variable of a settings field."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return (prefix + field_name).upper()


def _env_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, list | tuple):
        return ",".join(_env_value(item) for item in value)
    if isinstance(value, SecretStr):
        return "**********"
    return "" if value is None else str(value)


def default_value(field: FieldInfo) -> str:
    """A field's default as it would be written in the environment ('' when none)."""
    if field.default is PydanticUndefined and field.default_factory is None:
        return ""
    return _env_value(field.get_default(call_default_factory=True, validated_data={}))


def settings_rows() -> list[tuple[str, str, str]]:
    """(variable, default, meaning) for every setting, in declaration order."""
    return [
        (env_name(name), default_value(field), field.description or "")
        for name, field in Settings.model_fields.items()
    ]


def _cell(text: str) -> str:
    """Table-safe Markdown: pipes escaped; ``<`` escaped outside code spans (not HTML)."""
    parts = text.replace("|", "\\|").replace("\n", " ").split("`")
    return "`".join(
        part if index % 2 else part.replace("<", "&lt;") for index, part in enumerate(parts)
    )


def settings_table() -> str:
    """The Markdown table of every setting."""
    lines = ["| Variable | Default | Meaning |", "| --- | --- | --- |"]
    for variable, default, meaning in settings_rows():
        shown = f"`{_cell(default)}`" if default else "(none)"
        lines.append(f"| `{variable}` | {shown} | {_cell(meaning)} |")
    return "\n".join(lines) + "\n"


def readme_with_table(readme: str) -> str:
    """``readme`` with the current table between the markers."""
    head, found_start, rest = readme.partition(START)
    _old, found_end, tail = rest.partition(END)
    if not (found_start and found_end):
        raise SystemExit(f"README.md needs the markers {START} and {END}")
    return f"{head}{START}\n{settings_table()}{END}{tail}"


def env_example() -> str:
    """The text of .env.example."""
    blocks = [ENV_EXAMPLE_HEADER]
    for variable, default, meaning in settings_rows():
        blocks.append(f"# {meaning}\n# {variable}={default}\n")
    return "\n".join(blocks)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--write", action="store_true", help="rewrite README.md's table and .env.example"
    )
    arguments = parser.parse_args()
    if not arguments.write:
        print(settings_table(), end="")
        return 0
    README.write_text(readme_with_table(README.read_text(encoding="utf-8")), encoding="utf-8")
    ENV_EXAMPLE.write_text(env_example(), encoding="utf-8")
    print("wrote the settings table into README.md and .env.example")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
