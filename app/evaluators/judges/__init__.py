"""Graders where a model decides.

The LLM judge and its rubrics, promptfoo's model-graded family and ``select-best``, and
similarity of embeddings.
"""
