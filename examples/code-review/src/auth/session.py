"""Session lookup and verification."""

from datetime import UTC, datetime

from app.storage import sessions

SESSION_TTL = 3600


def verify_session(session_id: str, presented: str) -> bool:
    """Return True when the presented token matches the stored, unexpired session."""
    record = sessions.get(session_id)
    if record is None:
        return False
    age = (datetime.now(UTC) - record.created_at).total_seconds()
    if age > SESSION_TTL:
        return False
    return record.token == presented
