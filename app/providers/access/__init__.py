"""Who may reach which target.

Inline targets, their addresses, reachability checks, and the code graders' proxy.
"""
