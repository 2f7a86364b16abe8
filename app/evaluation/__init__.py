"""Running cases: format -> candidate -> evaluators -> one result record per case.

May import formatting, providers, evaluators and suites; must not import FastAPI or the
database layer (the durable runs layer calls into this package, not the other way round).
"""
