"""Where a workspace's repositories may be cloned from: the operator's mirrors and remotes.

A suite names a repository by URL, and the service clones nothing the operator has not
allowed: a URL listed in ``git_mirrors`` is cloned from the local copy it maps to (no
network), a URL under one of the ``git_remotes`` prefixes from the URL itself; any other
is refused, naming both settings (``app.settings.git`` says how URLs are compared).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.settings import Settings
from app.settings.git import RepositoryRefused, RepositoryUrl, parse_url

NOT_ALLOWED = (
    "this server clones only repositories its operator allows: list the URL in "
    "EVAL_GIT_MIRRORS (mapped to a local copy) or its prefix in EVAL_GIT_REMOTES"
)


@dataclass(frozen=True)
class GitSources:
    """The operator's repository policy.

    Attributes:
        mirrors: Repository identity -> local folder to clone it from.
        remotes: Identities of URL prefixes cloned over the network (each ends with ``/``).
    """

    mirrors: Mapping[str, str] = field(default_factory=dict)
    remotes: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> GitSources:
        """The policy of ``EVAL_GIT_MIRRORS`` and ``EVAL_GIT_REMOTES``."""
        return cls.of(settings.git_mirrors, settings.git_remotes)

    @classmethod
    def of(cls, mirrors: Mapping[str, str | Path], remotes: Sequence[str] = ()) -> GitSources:
        """The policy of mirrors (URL -> folder) and remote prefixes as the operator writes."""
        return cls(
            mirrors={parse_url(url).identity: str(folder) for url, folder in mirrors.items()},
            remotes=tuple(parse_url(prefix).identity + "/" for prefix in remotes),
        )

    def source_of(self, url: RepositoryUrl) -> str:
        """Where to clone ``url`` from: a mirror's folder, or the URL itself.

        Raises:
            RepositoryRefused: The operator allows neither.
        """
        mirror = self.mirrors.get(url.identity)
        if mirror is not None:
            if not Path(mirror).is_dir():
                raise RepositoryRefused(
                    f"{url.text!r}: its local copy (EVAL_GIT_MIRRORS) is missing on this server"
                )
            return mirror
        if any((url.identity + "/").startswith(prefix) for prefix in self.remotes):
            return url.text
        raise RepositoryRefused(f"{url.text!r} is not allowed: {NOT_ALLOWED}")


NO_REPOSITORIES = GitSources()
"""The policy that allows no repository (no mirrors, no remotes)."""
