"""What crosses an adapter besides text: turns, tool calls, an agent's report."""
