"""Errors of the durable runs layer (subclasses of the service's error tree)."""

from __future__ import annotations

from app.errors import Conflict, NotFound


class RunNotFound(NotFound):
    """No run has this id."""

    slug = "run-not-found"
    title = "Run not found"


class RunStateConflict(Conflict):
    """The run is not in a state that allows the operation (e.g. deleting a running run)."""

    slug = "run-state-conflict"
    title = "Run state does not allow this"


class IdempotencyConflict(Conflict):
    """An ``Idempotency-Key`` was reused with a different body."""

    slug = "idempotency-key-reused"
    title = "Idempotency-Key reused with another body"
