"""The routes: one module per resource, each a thin adapter to one service call."""
