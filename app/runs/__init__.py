"""Durable runs: evaluation jobs stored in a database that survive restarts.

``RunStore`` is the only code that talks to the database; ``RunSupervisor`` owns the
background tasks that execute runs; ``executor`` runs one case as a function of
(run id, case id) through the store. Must not import FastAPI (the HTTP layer imports this
package, not the other way round).
"""
