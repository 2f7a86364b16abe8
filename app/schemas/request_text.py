r"""Request bodies FastAPI parses itself: every string must be Unicode text.

JSON can spell a lone surrogate (``"\ud800"``), which is no character: no text holding one
can be stored or sent on. Bodies read by the service's own reader are checked there; these
models check theirs when validated, so such a body is a 422 naming the field, never a 500.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, model_validator

from app.errors import DocumentError
from app.suites.parsing import refuse_lone_surrogates


class TextRequest(BaseModel):
    """A request model that refuses lone surrogates in any key or string it is given."""

    @model_validator(mode="before")
    @classmethod
    def _refuse_lone_surrogates(cls, data: Any) -> Any:
        try:
            return refuse_lone_surrogates(data)
        except DocumentError as exc:
            raise ValueError(exc.detail) from None
