"""Graders of the tool calls a target reports (AgentV trajectories, promptfoo asserts)."""
