"""Grader lists of every dialect, the fields of each grader kind, and the programs graders name."""
