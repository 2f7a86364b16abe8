"""The program sandbox: every program a suite names runs through ``Sandbox.run`` (bubblewrap).

``sandbox`` is the entry point, ``command`` builds the ``bwrap`` command line, ``limits``
holds the resource limits, ``process`` starts and reaps the process under a time limit and
an output cap, ``forwarder`` runs inside the sandbox to reach the target proxy, ``scrub``
removes secrets from what a program wrote, ``folders`` names and sweeps scratch folders.
"""

from app.sandbox.command import PROXY_URL, Identity, Mounts
from app.sandbox.folders import new_folder, sweep_stale
from app.sandbox.limits import Limits
from app.sandbox.sandbox import (
    Finished,
    Sandbox,
    SandboxError,
    SandboxOutputTooLarge,
    SandboxTimeout,
    SandboxUnavailable,
)

__all__ = [
    "PROXY_URL",
    "Finished",
    "Identity",
    "Limits",
    "Mounts",
    "Sandbox",
    "SandboxError",
    "SandboxOutputTooLarge",
    "SandboxTimeout",
    "SandboxUnavailable",
    "new_folder",
    "sweep_stale",
]
