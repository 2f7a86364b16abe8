"""``/v1``: the OpenAI Evals API (evals, runs, output items, files) over the same engine.

Errors on these paths are OpenAI's ``{"error": {message, type, param, code}}``
(``errors.py``), so the official SDK raises its own error classes.
"""
