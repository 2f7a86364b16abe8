"""Signing secrets of webhook endpoints registered through the API, encrypted at rest.

A registered endpoint's secret must be read back to sign each delivery, so it cannot be
kept as a digest; it is kept encrypted instead, never in the clear. The key is the
operator's ``EVAL_WEBHOOK_SECRETS_KEY`` (a setting, never in the database): HKDF-SHA256
turns it into an AES-256-GCM key, and each secret is sealed with a fresh 96-bit nonce and
its endpoint's id as associated data, so a sealed secret copied onto another endpoint's row
does not open. The stored form is ``v1.`` + base64url(nonce + ciphertext + tag).
"""

from __future__ import annotations

import base64
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

VERSION = "v1."
NONCE_BYTES = 12
MIN_KEY_CHARS = 32
"""The shortest ``EVAL_WEBHOOK_SECRETS_KEY`` accepted (``openssl rand -base64 32`` is 44)."""
_INFO = b"eval-execution webhook endpoint secrets v1"


class SealedSecretError(Exception):
    """A stored secret that does not open with this key (another key, or a damaged row)."""


class SecretBox:
    """Seals and opens endpoint secrets with the operator's key."""

    def __init__(self, key: str) -> None:
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO)
        self._aead = AESGCM(derived.derive(key.encode("utf-8")))

    def seal(self, secret: str, endpoint_id: str) -> str:
        """The stored form of ``secret``, bound to ``endpoint_id``."""
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, secret.encode("utf-8"), endpoint_id.encode())
        return VERSION + base64.urlsafe_b64encode(nonce + sealed).decode("ascii")

    def open(self, stored: str, endpoint_id: str) -> str:
        """The secret ``seal`` stored for ``endpoint_id``.

        Raises:
            SealedSecretError: It was sealed with another key, for another endpoint, or
                the row is damaged.
        """
        if not stored.startswith(VERSION):
            raise SealedSecretError("the stored secret is not in a known form")
        try:
            raw = base64.urlsafe_b64decode(stored.removeprefix(VERSION))
            plain = self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], endpoint_id.encode())
        except (InvalidTag, ValueError):
            raise SealedSecretError(
                "the stored secret does not open with EVAL_WEBHOOK_SECRETS_KEY (the key was "
                "changed since the endpoint was registered?)"
            ) from None
        return plain.decode("utf-8")
