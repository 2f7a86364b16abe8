"""AgentV's agent workspace: its folders, hooks and the repositories checked out into it."""
