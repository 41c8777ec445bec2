"""hlotop's version (read by the build, the --json document, the cache and crash logs)."""

__version__ = "0.1.0"
