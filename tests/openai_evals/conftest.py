"""The ``/v1`` tests' spec check: every response the SDK gets is validated against OpenAI's
published OpenAPI description (``testkit.openai_spec``), read in place."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.openai_spec import SPEC_VARIABLE, SpecValidator, load_spec, spec_path


@pytest.fixture
def spec_validator() -> Iterator[SpecValidator]:
    """A validator whose violations fail the test at teardown (skips without the spec)."""
    path = spec_path()
    if not path.is_file():
        pytest.skip(f"OpenAI's OpenAPI description is not at {path} (set {SPEC_VARIABLE})")
    validator = SpecValidator(load_spec(path))
    yield validator
    assert validator.violations == [], "\n".join(validator.violations[:50])
