"""Repository URLs as the operator's git settings and suites' workspaces name them.

URLs are compared as repositories, not as text: the scheme and host in lower case, without
a trailing ``/`` or ``.git``. A URL that carries a password, or a user name over HTTP, is
refused without being repeated (suites are stored with their runs), as is one with
``.``/``..`` path segments (which could step out of an allowed prefix) or a transport git
would run a program for (``ext::``). Imports nothing of the app.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

SCHEMES = frozenset({"https", "http", "ssh", "git", "file"})
"""URL schemes a repository may use (besides ``user@host:path``, which is ssh)."""
_SCP_LIKE = re.compile(r"^(?P<user>[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>[^/].*)$")


class RepositoryRefused(ValueError):
    """A repository URL may not be cloned here (the message says why, without secrets)."""


@dataclass(frozen=True)
class RepositoryUrl:
    """A checked repository URL.

    Attributes:
        text: The URL as the suite wrote it (no credentials: those are refused).
        protocol: The git transport it uses (``https``, ``ssh``, ...).
        identity: What names the repository whatever the spelling.
    """

    text: str
    protocol: str
    identity: str


def parse_url(url: str) -> RepositoryUrl:
    """``url`` checked as a repository a workspace may name.

    Raises:
        RepositoryRefused: Not a git URL this service takes, or one carrying credentials.
    """
    text = url.strip()
    if not text or text.startswith("-") or any(ch.isspace() or ord(ch) < 32 for ch in text):
        raise RepositoryRefused(f"{text!r} is not a repository URL")
    if "::" in text.partition("://")[0]:
        raise RepositoryRefused(f"{text!r}: remote helpers (transport::address) are not accepted")
    scp = _SCP_LIKE.match(text) if "://" not in text else None
    if scp is not None:
        identity = f"ssh://{scp['host'].lower()}/{scp['path']}"
        return RepositoryUrl(text, "ssh", _trimmed(identity))
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise RepositoryRefused(
            f"{redacted(text)!r}: scheme {scheme or 'none'!r} is not one of "
            f"{', '.join(sorted(SCHEMES))}"
        )
    if parts.password is not None or (parts.username and scheme in {"http", "https"}):
        raise RepositoryRefused(
            f"{redacted(text)!r}: credentials in a repository URL are not accepted (the "
            "suite is stored with the run); the operator gives git its credentials"
        )
    segments = unquote(parts.path).split("/")
    if "." in segments or ".." in segments:
        raise RepositoryRefused(f"{text!r}: '.' and '..' path segments are not accepted")
    user = f"{parts.username}@" if parts.username else ""
    host = (parts.hostname or "").lower()
    port = f":{parts.port}" if parts.port else ""
    identity = f"{scheme}://{user}{host}{port}{parts.path}"
    return RepositoryUrl(text, "ssh" if scheme == "ssh" else scheme, _trimmed(identity))


def redacted(url: str) -> str:
    """``url`` with any user name and password replaced by ``***``."""
    if "://" not in url:
        return url
    scheme, _, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if "@" not in authority:
        return url
    return f"{scheme}://***@{authority.rpartition('@')[2]}{slash}{path}"


def _trimmed(identity: str) -> str:
    identity = identity.rstrip("/")
    return identity.removesuffix(".git").rstrip("/")


def git_environment(protocol: str) -> dict[str, str]:
    """The environment git clones in: the service's own, made safe.

    The service's ``HOME``, proxies, CA files and credential helpers stay; inherited
    ``GIT_*`` variables go; prompts are off and ``protocol`` is the only transport allowed.
    """
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    return inherited | {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "true",
        "SSH_ASKPASS": "true",
        "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
        "GIT_ALLOW_PROTOCOL": protocol,
        "LC_ALL": "C",
    }
