"""The README's settings table and .env.example agree with the Settings class."""

from __future__ import annotations

import re

from app.settings import Settings
from scripts.settings_table import (
    END,
    ENV_EXAMPLE,
    FIX_COMMAND,
    README,
    START,
    env_example,
    env_name,
    settings_table,
)


def test_the_readme_table_matches_the_settings_class() -> None:
    readme = README.read_text(encoding="utf-8")
    assert START in readme, f"README.md lacks the marker {START}"
    assert END in readme, f"README.md lacks the marker {END}"
    current = readme.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"

    assert current == settings_table(), f"the README settings table is stale; run {FIX_COMMAND}"


def test_the_table_has_one_row_per_setting_with_its_meaning() -> None:
    variables = re.findall(r"^\| `(\w+)` \|", settings_table(), flags=re.MULTILINE)

    assert variables == [env_name(name) for name in Settings.model_fields]
    assert all(field.description for field in Settings.model_fields.values()), (
        "every setting needs a description= (it is the table's meaning column)"
    )


def test_the_env_example_lists_every_setting() -> None:
    text = ENV_EXAMPLE.read_text(encoding="utf-8")
    listed = set(re.findall(r"^#? ?(EVAL_[A-Z0-9_]+)=", text, flags=re.MULTILINE))

    assert listed == {env_name(name) for name in Settings.model_fields}, (
        f".env.example is stale; run {FIX_COMMAND}"
    )
    assert text == env_example(), f".env.example is stale; run {FIX_COMMAND}"
