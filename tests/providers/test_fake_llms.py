"""The tests' shared fake LLM server (``testkit.fake_llm.FakeLLMs``): one fake per test."""

from __future__ import annotations

import httpx

from testkit.fake_llm import serve_fake_llms

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_each_block_gets_a_fresh_fake_and_nothing_is_served_between_blocks() -> None:
    with serve_fake_llms() as fakes:
        with fakes.serving() as first:
            first.responder = lambda _: None
            first.latency = 0.01
            assert httpx.post(f"{first.url}/v1/chat/completions", json=CHAT).status_code == 200
        # A request after its block ended (its test is over) is refused, not recorded anywhere.
        late = httpx.post(f"{fakes.url}/v1/chat/completions", json=CHAT)
        assert late.status_code == 503
        with fakes.serving() as second:
            assert second.url == first.url
            assert (second.requests, second.responder, second.latency) == ([], None, 0.0)
            assert httpx.post(f"{second.url}/v1/chat/completions", json=CHAT).status_code == 200
        assert len(first.requests) == 1
        assert len(second.requests) == 1
