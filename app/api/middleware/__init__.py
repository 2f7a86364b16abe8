"""ASGI middleware: API keys and CORS, body size, per-key limits, request context."""
