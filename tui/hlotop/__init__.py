"""hlotop: a terminal browser for XLA buffer-assignment dumps.

As a library::

    from hlotop import load
    module = load("module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt")
    module.allocations[0].size        # bytes
    module.analysis.peak_step         # schedule step, computed with XLA's rule

The package is layered; each layer imports only those below it (checked in CI by
import-linter, see pyproject.toml): ``ui`` (the Textual browser, the only layer that
imports Textual) → ``report`` (``--summary``, ``--json``) → ``loading`` (files to a
module) → ``analysis`` (pure functions over the model) → ``parse`` (the line forms)
→ ``model`` (the dump in XLA's terms) → ``shapes`` (shapes, layouts, byte sizes).
``cli`` and ``process`` (GC and fork policy) sit on top, as entry points.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from hlotop.version import __version__

__all__ = ["LoadError", "load", "__version__"]

if TYPE_CHECKING:
    from hlotop.model import ModuleDump


def load(path: str | os.PathLike, **options: Any) -> ModuleDump:
    """:func:`hlotop.loading.loader.load` for a program that uses hlotop as a library,
    with the process policy of an entry point: the cyclic GC paused while the model is
    built (it makes millions of objects and no cycles). Never forks."""
    from hlotop.loading import loader
    from hlotop.process import gc_paused

    with gc_paused():
        return loader.load(path, **options)


def __getattr__(name: str):
    # Imported on first use, so `hlotop --version` and the grammar modules load fast.
    if name == "LoadError":
        from hlotop.loading import loader

        return loader.LoadError
    raise AttributeError(f"module 'hlotop' has no attribute {name!r}")
