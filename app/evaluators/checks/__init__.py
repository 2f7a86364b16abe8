"""Graders that need no judge: text, JSON, fields, reference metrics, run figures."""
