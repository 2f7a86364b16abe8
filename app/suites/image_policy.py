"""Images by URL only where the operator allows them.

An ``image_url`` part's ``http(s)`` URL is fetched by the provider, not by this service: a
hosted API fetches it from the internet on the operator's account, and a model server on the
operator's own network would fetch it from inside that network. So, as for hosted tools, a
suite may send images by URL only when the operator sets ``EVAL_IMAGE_URLS=true``; otherwise
each case's first such part is refused by name. A ``data:`` URI carries its image itself and
is always allowed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from app.formatting.images import ImagePart
from app.formatting.messages import Message
from app.suites.documents.findings import Findings
from app.suites.model import EvalCase, EvalSuite
from app.suites.reading import CaseOrigin

SETTING = "EVAL_IMAGE_URLS"


def _messages(case: EvalCase) -> Iterator[Message]:
    yield from case.input_messages
    for _, messages in case.prompt_inputs:
        yield from messages
    for turn in case.conversation.turns if case.conversation else ():
        yield from turn.input_messages


def remote_image(case: EvalCase) -> ImagePart | None:
    """The case's first image given by an ``http(s)`` URL, if any."""
    for message in _messages(case):
        for part in message.content if isinstance(message.content, list) else ():
            if isinstance(part, ImagePart) and part.remote:
                return part
    return None


def refuse_unallowed(
    suite: EvalSuite, origins: Mapping[str, CaseOrigin], findings: Findings, *, allowed: bool
) -> None:
    """Refuse every case with an image by URL unless ``allowed``."""
    if allowed:
        return
    for case in suite.cases:
        image = remote_image(case)
        if image is None:
            continue
        origin = origins.get(case.id)
        findings.error(
            origin.path if origin else (),
            f"case {case.id!r} sends the image {image.url[:200]!r} by URL: the provider would "
            f"fetch it (from wherever it runs); the operator allows images by URL with "
            f"{SETTING}=true (a data: URI is always allowed)",
        )
