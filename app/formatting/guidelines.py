"""Which file references are guideline files: glob patterns with ``**`` over posix paths."""

from __future__ import annotations

from functools import lru_cache

from wcmatch import glob

# GLOBSTAR: `**/` matches zero or more folders; DOTGLOB: dot-folders such as `.github/` match.
_FLAGS = glob.GLOBSTAR | glob.DOTGLOB


def match_path(path: str) -> str:
    """The form of ``path`` that patterns are matched against.

    ``/`` separators, no ``./``, and ``..`` parts resolved with any left at the start
    dropped, so ``**/*.instructions.md`` matches ``../prompts/x.instructions.md`` as it
    matches the file it names (AgentV matches the resolved path).
    """
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    path = path.lstrip("/")
    if ".." not in path.split("/"):
        return path
    kept: list[str] = []
    for part in path.split("/"):
        if part == ".." and kept and kept[-1] != "..":
            kept.pop()
        elif part not in (".", ""):
            kept.append(part)
    while kept and kept[0] == "..":
        kept.pop(0)
    return "/".join(kept)


class GuidelineMatcher:
    """Decides whether a referenced path is a guideline file; caches every answer."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        self._compiled = glob.compile(list(patterns), flags=_FLAGS) if patterns else None
        self._answers: dict[str, bool] = {}

    def __call__(self, path: str) -> bool:
        """Whether ``path`` (as the case wrote it) matches one of the patterns."""
        answer = self._answers.get(path)
        if answer is None:
            answer = bool(self._compiled and self._compiled.match(match_path(path)))
            self._answers[path] = answer
        return answer


@lru_cache(maxsize=64)
def guideline_matcher(patterns: tuple[str, ...]) -> GuidelineMatcher:
    """A shared matcher for a set of patterns (matchers are immutable apart from their cache)."""
    return GuidelineMatcher(patterns)
