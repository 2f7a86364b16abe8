"""``evalx``: the command-line client of the service, for CI (runs, reports, a regression gate).

A client: it talks HTTP to a server (``--server``), or starts the service in this process
on the embedded defaults (``--embedded``) and talks HTTP to that. Nothing here is imported by
the service.
"""
