"""Finish reasons in promptfoo's normalised words, whatever API said them."""

from __future__ import annotations

import pytest

from app.providers.finish_reasons import normalise_finish_reason


@pytest.mark.parametrize(
    ("raw", "called_tools", "expected"),
    [
        ("stop", False, "stop"),
        ("end_turn", False, "stop"),
        ("stop_sequence", False, "stop"),
        ("max_tokens", False, "length"),
        ("model_context_window_exceeded", False, "length"),
        ("tool_use", False, "tool_calls"),
        ("function_call", False, "tool_calls"),
        ("refusal", False, "content_filter"),
        ("pause_turn", False, "pause_turn"),
        ("STOP", False, "stop"),
        ("STOP", True, "tool_calls"),
        ("MAX_TOKENS", True, "length"),
        ("SAFETY", False, "content_filter"),
        ("completed", True, "tool_calls"),
        ("  Something_New ", False, "something_new"),
        ("", False, None),
        (None, False, None),
        (7, False, None),
    ],
)
def test_each_apis_reason_is_normalised(raw, called_tools, expected):
    assert normalise_finish_reason(raw, called_tools=called_tools) == expected
