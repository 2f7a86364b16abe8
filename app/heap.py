"""The heap a process builds while starting, moved out of the cycle collector's way.

Imports, settings, schemas and the services leave a quarter of a million objects tracked by
the garbage collector, nearly all of them alive until the process ends. Every full
collection walks them all: about 0.15 s each, several of them while a 10 000-case run is
submitted (docs/design.md has the figures). ``gc.freeze()`` moves the objects alive at that
moment to a permanent generation that collections skip; objects made afterwards are
collected as before.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze_startup_heap() -> None:
    """Freeze every object alive now, once per process (later calls do nothing).

    Once, because a process that builds the app again (the tests do) would otherwise freeze
    the garbage of earlier apps for good.
    """
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.collect()  # what start-up left as garbage is freed, not frozen
    gc.freeze()
