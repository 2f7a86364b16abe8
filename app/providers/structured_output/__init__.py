"""Structured output: JSON Schemas per API dialect, the form a call uses, samples."""
