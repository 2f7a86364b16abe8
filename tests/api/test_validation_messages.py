"""Every validation message names the value it refuses, escaped and short."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.errors import validation_message
from app.settings import Settings
from tests.conftest import ClientFactory

CASE = {"id": "x", "expected_outcome": "y"}


@pytest.mark.parametrize(
    ("route", "body", "path", "named"),
    [
        ("/format", {"input_messages": [{"role": "robot", "content": "x"}]},
         "input_messages[0].role", '"robot"'),
        ("/format", {"input_messages": [{"role": "user", "content": "x"}], "mode": "fast"},
         "mode", '"fast"'),
        ("/format", {"input_messages": "abc"}, "input_messages", '"abc"'),
        ("/format", {"input_messages": [{"role": "user", "content": 5}]},
         "input_messages[0].content", "got 5"),
        ("/evaluate", {"suite": {"evalcases": [CASE]}, "max_concurrency": -1},
         "max_concurrency", "got -1"),
        ("/evaluate", {"suite": {"evalcases": [CASE]}, "target": ["a"]}, "target", "got a list"),
        ("/validate", {"suite": {"evalcases": [
            {**CASE, "input_messages": [{"role": "robot", "content": "x"}]}]}},
         "evalcases[0].input_messages[0].role", '"robot"'),
    ],
)  # fmt: skip
async def test_a_refused_value_is_named_in_its_message(
    route: str, body: dict[str, Any], path: str, named: str,
    tmp_path: Path, make_client: ClientFactory,
) -> None:  # fmt: skip
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        response = await client.post(route, json=body)
    errors = {error["path"]: error["message"] for error in response.json()["errors"]}
    assert named in errors[path], errors


async def test_a_query_parameter_names_its_value(
    tmp_path: Path, make_client: ClientFactory
) -> None:
    async with make_client(Settings(data_dir=tmp_path / "data", sample_run=False)) as client:
        response = await client.get("/runs", params={"status": "bogus"})
    assert response.status_code == 422
    assert 'got "bogus"' in response.json()["detail"]


def test_long_and_control_values_are_shown_short_and_escaped() -> None:
    message = validation_message(
        {"type": "literal_error", "msg": "Input should be 'a'", "input": "\u0000" + "x" * 500}
    )
    assert message.startswith("Input should be 'a'; got \"\\u0000xxx")
    assert message.endswith('xx"...')
    assert len(message) < 120
    assert validation_message({"type": "missing", "msg": "Field required", "input": {}}) == (
        "Field required"
    )
