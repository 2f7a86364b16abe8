"""Observability: structured JSON logs, Prometheus metrics, request-context middleware.

Must not import the HTTP routes, the runs package or the provider adapters: those layers
call into this one (``bind_log_context``, ``Metrics.record_provider_call``), never the
other way round. Optional parts of ``Services`` are read with ``getattr`` at scrape time.
"""
