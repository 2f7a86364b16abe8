"""``escape_text`` stores any text PostgreSQL cannot (NUL) and reads back exactly what it got."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.runs.tables import ESCAPED_MARK, escape_text, unescape_text


@given(st.text(alphabet=st.sampled_from(["a", "\x00", ESCAPED_MARK, '"', "\\", "é"])))
def test_escaping_round_trips_and_never_stores_nul(value: str) -> None:
    stored = escape_text(value)
    assert "\x00" not in stored
    assert unescape_text(stored) == value


def test_text_without_nul_is_stored_as_it_is() -> None:
    assert escape_text("plain \\u0000 text") == "plain \\u0000 text"
