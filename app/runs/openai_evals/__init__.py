"""The OpenAI Evals surface's evals, files and runs, and runs imported from it."""
