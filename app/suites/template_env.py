"""``{{ env.NAME }}`` in a suite's templates: the request's ``env``, never the service's.

AgentV and promptfoo read their process environment; this service never gives a suite its
own (it holds the service's keys), as with ``${{ NAME }}``
(``app/suites/documents/environment.py``). ``read_document`` reads a suite inside
``request_env``; ``templates.render`` puts it in every template's scope as ``env``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar


class RequestEnv(dict[str, str]):
    """The request's ``env`` as a suite's templates see it: ``{{ env.NAME }}``."""


REQUEST_ENV: ContextVar[RequestEnv | None] = ContextVar("template_request_env", default=None)
"""The request's ``env`` while a suite is read (None elsewhere: ``env`` is then undefined)."""


@contextmanager
def request_env(env: Mapping[str, str]) -> Iterator[None]:
    """Within the block, ``{{ env.NAME }}`` in templates reads ``env`` (the request's)."""
    token = REQUEST_ENV.set(RequestEnv(env))
    try:
        yield
    finally:
        REQUEST_ENV.reset(token)
