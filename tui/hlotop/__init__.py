"""hlotop: a terminal browser for XLA buffer-assignment dumps.

As a library::

    from hlotop import load
    module = load("module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt")
    module.allocations[0].size        # bytes
    module.analysis.peak_step         # schedule step, computed with XLA's rule

The core (``parse``, ``model``, ``analysis``, ``loader``, ``search``, ``summary``,
``export``) never imports Textual; only the browser does (``app``, ``widgets``,
``screens``, ``bindings``, ``messages``, ``commands``).
"""

__version__ = "0.1.0"

__all__ = ["LoadError", "load", "__version__"]


def __getattr__(name: str):
    # Imported on first use, so `hlotop --version` and the grammar modules load fast.
    if name in ("load", "LoadError"):
        from hlotop.loading import loader

        return getattr(loader, name)
    raise AttributeError(f"module 'hlotop' has no attribute {name!r}")
