"""No key ever leaves the provider layer: not in replies, previews, logs or errors."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.providers.adapters.http import scrub, scrubbed
from app.providers.base import CallRole
from app.providers.errors import ProviderError
from testkit.fake_llm import Reply, error
from tests.providers.conftest import (
    FAKE_KEY,
    VERDICT_SCHEMA,
    anthropic_target,
    azure_target,
    gemini_target,
    multi_turn_prompt,
    openai_target,
    request_for,
)

ALL_TARGETS = [openai_target, azure_target, anthropic_target, gemini_target]
IDS = ["openai", "azure", "anthropic", "gemini"]


def assert_no_key(text: str) -> None:
    assert FAKE_KEY not in text
    assert "SECRET-0123" not in text


@pytest.mark.parametrize("make_target", ALL_TARGETS, ids=IDS)
async def test_no_key_in_raw_reply_preview_logs_or_errors(
    fake_llm, make_registry, make_target, caplog
):
    caplog.set_level(logging.DEBUG)
    target = make_target(fake_llm.url)
    registry = make_registry([target])
    runtime = registry.get(target["name"])
    # A provider that echoes the key back in its reply and in its error message.
    fake_llm.script(
        Reply(text=f"your key is {FAKE_KEY}"),
        error(401, f"Incorrect API key provided: {FAKE_KEY}"),
        error(500, f"upstream saw {FAKE_KEY}"),
        error(500, f"upstream saw {FAKE_KEY}"),
        error(500, f"upstream saw {FAKE_KEY}"),
        error(500, f"upstream saw {FAKE_KEY}"),
        error(500, f"upstream saw {FAKE_KEY}"),
    )
    reply = await runtime.complete(request_for(multi_turn_prompt()))
    assert_no_key(repr(reply.raw))
    errors: list[ProviderError] = []
    for _ in range(2):
        with pytest.raises(ProviderError) as caught:
            await runtime.complete(request_for())
        errors.append(caught.value)
    for failure in errors:
        assert_no_key(failure.detail)
        assert_no_key(repr(failure.extra))
        assert "[redacted]" in failure.detail
    preview = registry.preview([target["name"]], request_for(role=CallRole.JUDGE,
                                                             schema=VERDICT_SCHEMA))  # fmt: skip
    assert_no_key(preview[target["name"]].model_dump_json())
    assert_no_key(repr(registry.describe()))
    assert caplog.records
    assert_no_key(caplog.text)
    # The key did go where it belongs: in the request headers.
    assert all(any(FAKE_KEY in value for value in r.headers.values()) for r in fake_llm.requests)


def test_cli_command_secrets_are_kept_out_of_the_preview(make_registry):
    registry = make_registry([
        {"name": "agent", "provider": "cli",
         "command_template": "my-agent --token ${{ FAKE_KEY }} {PROMPT_FILE}"},
    ])  # fmt: skip
    preview = registry.preview(["agent"], request_for())["agent"]
    assert_no_key(preview.model_dump_json())
    assert preview.body["argv"][2] == "[redacted]"


_TEXT = st.text(alphabet=st.sampled_from('ab sk-_./\\"\n\u00e9key0123456789AIza'), max_size=30)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


@given(
    payload=_JSON,
    secrets=st.lists(st.text(alphabet='ab/\\"-_.sk0123456789', min_size=1), max_size=2),
    ascii_only=st.booleans(),
)
def test_a_reply_skipped_by_the_fast_path_had_nothing_to_scrub(
    payload: object, secrets: list[str], ascii_only: bool
) -> None:
    """The raw-bytes shortcut never keeps a secret or key-like word that scrub would remove,
    whatever JSON escapes the body was written with (``ensure_ascii``: every non-ASCII
    character as a unicode escape)."""
    body = {"reply": f"it is {'/'.join(secrets)}!", "rest": payload}  # the secrets echoed
    content = json.dumps(body, ensure_ascii=ascii_only).encode()
    assert scrubbed(body, content, secrets) == scrub(body, secrets)
    hidden = b'{"reply": "\\u0073k-0123456789"}'  # a key-like word written as escapes
    assert scrubbed(json.loads(hidden), hidden, []) == {"reply": "[redacted]"}
