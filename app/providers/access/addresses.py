"""Where an inline target may connect: its host resolved once, every address checked, pinned.

The host is resolved the way the system resolver reads it (``getaddrinfo``, which takes
``0x7f.1`` and ``2130706433`` for addresses), every address it gives is checked, legacy
spellings of an address are then refused by name, and the target's client connects only to
the checked addresses: its resolver answers
from the checked list, so no second lookup can point the connection somewhere else. TLS and
the ``Host`` header keep the name the URL gave.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult

from app.providers.adapters.http import tls_context
from app.providers.errors import InlineTargetRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
LOOKUP_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class PinnedHost:
    """A host name and the checked addresses its connections may use."""

    host: str
    port: int
    infos: tuple[tuple[socket.AddressFamily, str], ...]


async def lookup(host: str, port: int) -> list[tuple[socket.AddressFamily, str]]:
    """Every (family, address) ``host`` resolves to, as the system resolver gives them."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [(family, str(sockaddr[0])) for family, _, _, _, sockaddr in infos]


def _embedded_ipv4(address: IPAddress) -> IPAddress:
    """The IPv4 address inside an IPv4-mapped or 6to4 IPv6 address, else the address."""
    if isinstance(address, ipaddress.IPv6Address):
        return address.ipv4_mapped or address.sixtofour or address
    return address


def legacy_ipv4(host: str) -> str | None:
    """The dotted-quad address a legacy IPv4 spelling means (``0x7f.1``), else ``None``.

    The system resolver reads hex, octal, short and whole-number forms as addresses; the
    HTTP client refuses them at connect time, so they are refused up front, by name.
    """
    try:
        packed = socket.inet_aton(host)
    except (OSError, UnicodeError, ValueError):
        return None
    canonical = socket.inet_ntoa(packed)
    return None if canonical == host else canonical


def refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why an inline target may not connect to ``address``; ``None`` if it may."""
    for candidate in {address, _embedded_ipv4(address)}:
        if candidate.is_link_local:
            return "is link-local (the cloud metadata range)"
        if not allow_private and (
            candidate.is_loopback
            or candidate.is_private
            or candidate.is_reserved
            or candidate.is_unspecified
            or candidate.is_multicast
        ):
            return "is not a public address"
    return None


async def pin_host(url: httpx.URL, *, allow_private: bool) -> PinnedHost:
    """Resolve the URL's host once and check every address it resolves to.

    Raises:
        InlineTargetRefused: The host does not resolve, or one of its addresses is refused.
    """
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        infos = await asyncio.wait_for(lookup(host, port), LOOKUP_TIMEOUT_SECONDS)
    except (OSError, UnicodeError, TimeoutError) as exc:
        raise InlineTargetRefused(
            f"inline target host {host!r} does not resolve ({type(exc).__name__})"
        ) from None
    if not infos:
        raise InlineTargetRefused(f"inline target host {host!r} does not resolve")
    for _, text in infos:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        reason = refusal(address, allow_private=allow_private)
        if reason is not None:
            raise InlineTargetRefused(
                f"inline target host {host!r} resolves to {address}, which {reason}"
            )
    canonical = legacy_ipv4(host)
    if canonical is not None:
        raise InlineTargetRefused(
            f"inline target host {host!r} is a legacy spelling of {canonical}; "
            f"write the address as {canonical}"
        )
    return PinnedHost(host=host, port=port, infos=tuple(dict.fromkeys(infos)))


class PinnedResolver(AbstractResolver):
    """A resolver that answers only for the pinned host, from its checked addresses."""

    def __init__(self, pinned: PinnedHost) -> None:
        self._pinned = pinned

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """The checked addresses of the pinned host (any other host is refused)."""
        if host.lower().rstrip(".") != self._pinned.host.lower().rstrip("."):
            raise OSError(f"host {host!r} is not the inline target's host")
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=address_family,
                proto=socket.IPPROTO_TCP,
                flags=socket.AI_NUMERICHOST,
            )
            for address_family, address in self._pinned.infos
            if family in (socket.AF_UNSPEC, address_family)
        ]

    async def close(self) -> None:
        """Nothing to release."""


def pinned_connector(pinned: PinnedHost) -> Callable[[], aiohttp.BaseConnector]:
    """An adapter's connection pool that connects only to the pinned host's checked addresses."""

    def connector() -> aiohttp.BaseConnector:
        return aiohttp.TCPConnector(
            resolver=PinnedResolver(pinned), ssl=tls_context(), use_dns_cache=False
        )

    return connector
