"""Graders and transforms a suite writes as code.

Programs run in the sandbox (``programs``); JavaScript runs in the embedded engine.
"""
