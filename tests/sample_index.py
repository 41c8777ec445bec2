"""One entry file per module of every dump in sample_dumps/ (the tests that sweep
every sample read this list)."""

from __future__ import annotations

from pathlib import Path

from conftest import SAMPLES, swept
from hlotop.loading.loader import split_module_prefix


def _modules() -> list[Path]:
    """One entry file per module: the -buffer-assignment.txt, or a seed's only file."""
    out = []
    for path in sorted(swept("*.txt")):
        if path.name.endswith("after_optimizations.txt"):
            continue  # a module's HLO text, read only for its stack frames
        if path.relative_to(SAMPLES).parts[0] == "oom":
            continue  # out-of-memory error texts, not dumps (tests/test_oom.py)
        split = split_module_prefix(path)
        if split is None or split[1] == "buffer-assignment":
            out.append(path)
    return out


MODULES = _modules()
