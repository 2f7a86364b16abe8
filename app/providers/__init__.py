"""Provider layer: named targets, their adapters, limits, retries and the provider preview.

Adapters: mock, OpenAI (and compatible servers), Azure OpenAI, Anthropic, Gemini and CLI.

Providers take a ``ProviderRequest`` and return a ``ProviderResponse``; they know nothing of
suites or evaluators. Must not import ``app.evaluators``, ``app.suites``, ``app.runs`` or
``fastapi``.
"""
