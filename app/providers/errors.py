"""Provider failures: the second documented part of the service's error tree (``app.errors``).

ServiceError
 +-- ProviderError (502)              a provider call failed
 |    +-- ProviderTimeout (504)       an attempt or the call's deadline ran out
 |    +-- ProviderRateLimited (503)   429 after every retry; ``Retry-After`` when known
 |    +-- ProviderUnavailable (502)   5xx, 408/409 or a connection error after every retry
 |    +-- ProviderRejected (502)      a non-retryable 4xx; carries the upstream status
 |    |    +-- ProviderQuotaExhausted quota or billing exhausted (never retried)
 |    +-- ProviderResponseInvalid     the reply did not parse as the wire format says
 |         +-- ProviderReplyTooLarge  the decoded reply passed its size limit (never retried)
 +-- InvalidRequest (422)
      +-- UnknownTarget               a target name that is not configured
      +-- InlineTargetRefused         an inline target that is disabled or unsafe

Messages name the target and the provider's own message, never a key: adapters pass every
upstream text through ``redact`` before it reaches an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, ClassVar

from app.errors import InvalidRequest, ServiceError
from app.providers.base import CallAttempt

_KEY_LIKE = re.compile(r"\b(?:sk|key|AIza)[-_A-Za-z0-9*.]{8,}")


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Remove every secret and anything that looks like an API key from ``text``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return _KEY_LIKE.sub("[redacted]", text)


def looks_like_key(text: str) -> bool:
    """Whether ``text`` holds something ``redact`` would remove as an API key."""
    return _KEY_LIKE.search(text) is not None


def remove_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every given secret replaced, and nothing else changed.

    For what a provider answered: unlike ``redact`` it leaves key-like words alone, since an
    answer may rightly hold them.
    """
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, "[redacted]")
    return text


def remove_secrets_json(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of a JSON value with ``remove_secrets`` applied to its keys and strings."""
    if isinstance(value, dict):
        return {
            remove_secrets(str(key), secrets): remove_secrets_json(item, secrets)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [remove_secrets_json(item, secrets) for item in value]
    if isinstance(value, str):
        return remove_secrets(value, secrets)
    return value


class ProviderError(ServiceError):
    """A provider call failed; the detail names the target and the provider's message.

    Attributes:
        target: the target's name.
        upstream_status: the HTTP status the provider answered, when there was one.
        retryable: whether the retry policy may try again.
        retry_after: seconds the provider asked us to wait, when it said so.
        upstream_message: the provider's own error message (secrets removed), when it sent one.
        attempts: every request the call made (set by the target's runtime).
    """

    status = 502
    slug = "provider-error"
    title = "Provider call failed"
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        detail: str,
        *,
        target: str,
        upstream_status: int | None = None,
        retry_after: float | None = None,
        retryable: bool | None = None,
        upstream_message: str | None = None,
    ) -> None:
        extra: dict[str, object] = {"target": target}
        if upstream_status is not None:
            extra["upstream_status"] = upstream_status
        super().__init__(detail, extra=extra)
        self.target = target
        self.upstream_status = upstream_status
        self.retry_after = retry_after
        self.retryable = self.default_retryable if retryable is None else retryable
        self.upstream_message = upstream_message
        self.attempts: tuple[CallAttempt, ...] = ()

    @property
    def reason(self) -> str:
        """The detail without its leading ``target 'name':`` (what this one try found)."""
        return self.detail.removeprefix(f"target {self.target!r}: ")


class ProviderTimeout(ProviderError):
    """An attempt (or the whole call) took longer than its time limit."""

    status = 504
    slug = "provider-timeout"
    title = "Provider timed out"
    default_retryable = True


class ProviderRateLimited(ProviderError):
    """The provider kept answering 429; ``Retry-After`` tells the caller when to retry."""

    status = 503
    slug = "provider-rate-limited"
    title = "Provider rate limit reached"
    default_retryable = True

    def __init__(
        self,
        detail: str,
        *,
        target: str,
        retry_after: float | None = None,
        upstream_status: int | None = 429,
        upstream_message: str | None = None,
    ) -> None:
        super().__init__(
            detail,
            target=target,
            upstream_status=upstream_status,
            retry_after=retry_after,
            upstream_message=upstream_message,
        )
        if retry_after is not None:
            self.headers["Retry-After"] = str(max(1, math.ceil(retry_after)))


class ProviderUnavailable(ProviderError):
    """A server error, conflict or connection failure that may pass on retry."""

    slug = "provider-unavailable"
    title = "Provider unavailable"
    default_retryable = True


class ProviderRejected(ProviderError):
    """The provider refused the request (400, 401, 403, 404, 422...): retrying cannot help."""

    slug = "provider-rejected"
    title = "Provider rejected the request"


class ProviderQuotaExhausted(ProviderRejected):
    """The account's quota or budget is spent; fails fast, never retried."""

    slug = "provider-quota-exhausted"
    title = "Provider quota exhausted"


class ProviderResponseInvalid(ProviderError):
    """The provider answered with a body that is not what its wire format promises."""

    slug = "provider-response-invalid"
    title = "Provider response not valid"


class ProviderReplyTooLarge(ProviderResponseInvalid):
    """The provider's reply, decoded, was larger than ``provider_max_reply_bytes``."""

    slug = "provider-reply-too-large"
    title = "Provider reply too large"


class UnknownTarget(InvalidRequest):
    """A request named a target that is not configured."""

    slug = "unknown-target"
    title = "Unknown target"

    def __init__(self, name: str, known: Iterable[str], providers: Iterable[str] = ()) -> None:
        names = sorted(known)
        detail = f"unknown target {name!r}; configured targets: {', '.join(names) or '(none)'}"
        if providers:
            detail += f"; providers previewed without a target: {', '.join(providers)}"
        super().__init__(detail, extra={"target": name, "known_targets": names})
        self.name = name


class EmbeddingsTargetMisused(InvalidRequest):
    """A run names an embeddings (or moderation) target as its candidate or judge.

    Neither answers a prompt; both share this problem type.
    """

    slug = "embeddings-target-misused"
    title = "Embeddings target cannot answer"

    def __init__(self, name: str, role: str, kind: str = "embeddings") -> None:
        what = {
            "embeddings": "an embeddings target (it turns texts into vectors for 'similar' "
            "graders)",
            "moderation": "a moderation target (it flags texts for 'moderation' graders)",
        }.get(kind, "a classifier target (it scores texts for 'classifier' graders)")
        detail = f"target {name!r} is {what}: it cannot be the run's {role}"
        super().__init__(detail, extra={"target": name})


class InlineTargetRefused(InvalidRequest):
    """An inline target was sent while they are disabled, or it points somewhere unsafe."""

    slug = "inline-target-refused"
    title = "Inline target refused"
