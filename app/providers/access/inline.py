"""Targets sent inside a request: refused unless enabled, and only to addresses allowed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import ValidationError

from app.providers.access.addresses import pin_host, pinned_connector
from app.providers.adapters.http import ConnectorFactory
from app.providers.errors import InlineTargetRefused
from app.settings import Settings
from app.settings.targets import (
    ENV_VARIABLE,
    TARGET_ADAPTER,
    TargetConfig,
    canonical_provider,
    describe_problems,
)

_USERINFO = re.compile(r"//[^/@]*@")
_METADATA_HOSTS = frozenset({"metadata", "metadata.google.internal", "instance-data"})


def check_inline_url(url: str, *, allow_private: bool) -> httpx.URL:
    """The URL as the HTTP client reads it, if it is http(s) and names no well-known local host.

    Addresses are checked once the host is resolved (``pin_host``).

    Raises:
        InlineTargetRefused: The URL is not an http(s) URL with a host, carries credentials,
            or names a local or metadata host.
    """
    shown = _USERINFO.sub("//", url)  # credentials are never echoed
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InlineTargetRefused(
            f"inline target base URL {shown!r} is not valid: {_USERINFO.sub('//', str(exc))}"
        ) from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InlineTargetRefused(
            f"inline target base URL {shown!r} must be an http(s) URL with a host"
        )
    if parsed.userinfo:
        raise InlineTargetRefused("inline target base URL must not carry credentials")
    host = parsed.host.lower().rstrip(".")
    local = host == "localhost" or host.endswith(".localhost")
    if host in _METADATA_HOSTS or (local and not allow_private):
        raise InlineTargetRefused(f"inline target host {host!r} is not allowed")
    return parsed


@dataclass(frozen=True)
class InlineTarget:
    """A checked inline target and its connections, pinned to its checked addresses."""

    config: TargetConfig
    connector: ConnectorFactory | None


async def inline_target(config: Mapping[str, Any], settings: Settings) -> InlineTarget:
    """Validate a target sent in a request; refused unless the operator enabled them.

    Inline targets may not run programs (``cli``) nor read the environment (``${{ VAR }}``);
    their URL must pass ``check_inline_url`` and its host ``pin_host``, and their calls go
    only to the addresses checked. The key stays a ``SecretStr``: never echoed.
    """
    if not settings.allow_inline_targets:
        raise InlineTargetRefused("inline targets are disabled on this service")
    provider = canonical_provider(config.get("provider"))
    if provider == "cli":
        raise InlineTargetRefused("inline targets cannot use the cli provider")
    if ENV_VARIABLE.search(repr(dict(config))):
        raise InlineTargetRefused("inline targets cannot read environment variables")
    try:
        target = TARGET_ADAPTER.validate_python({**config, "provider": provider})
    except ValidationError as exc:
        problems = describe_problems(exc)
        raise InlineTargetRefused(f"inline target is not valid: {problems}") from None
    url = target.endpoint_url()
    if url is None:
        return InlineTarget(config=target, connector=None)
    allow_private = settings.inline_target_allow_private
    pinned = await pin_host(
        check_inline_url(url, allow_private=allow_private), allow_private=allow_private
    )
    return InlineTarget(config=target, connector=pinned_connector(pinned))
