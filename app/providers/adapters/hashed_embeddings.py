"""Deterministic embeddings from hashed words: the mock embeddings target's, and the fake server's.

Each word (lower-cased run of letters and digits) adds +1 or -1 to one of ``DIMENSIONS``
coordinates chosen by its BLAKE2b hash; the vector is scaled to length 1. Texts sharing words
are close (same text: cosine 1), texts sharing none are near orthogonal, and the same text
always gives the same vector on every machine (no model, no randomness). A text without a
word gives the zero vector.
"""

from __future__ import annotations

import hashlib
import math
import re

DIMENSIONS = 64
MODEL = "hashed-words-64"
"""The model name the mock target and the fake server report."""
_WORD = re.compile(r"\w+")


def hashed_embedding(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    """The unit vector of ``text``'s hashed words (the zero vector when it has none)."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        number = int.from_bytes(digest, "big")
        vector[number % dimensions] += 1.0 if (number >> 32) & 1 else -1.0
    length = math.sqrt(sum(value * value for value in vector))
    return [value / length for value in vector] if length else vector


def word_count(text: str) -> int:
    """The tokens an embedding of ``text`` is counted as using (its words)."""
    return len(_WORD.findall(text))
