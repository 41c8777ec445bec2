"""The head of a big dump, to show while the whole of it loads.

XLA prints the allocations first (``BufferAssignment:``, FORMATS.md 3.2-3.3: the
combined file, or a split module's ``-buffer-assignment.txt``); the value records and
the live ranges come after them. Reading only the first half megabyte and cutting it before
its last, possibly incomplete, allocation gives the first few thousand allocations in
well under a second, whatever the size of the dump: the browser shows them at once and
swaps in the whole dump when :func:`hlotop.loading.loader.load` returns.
"""

from __future__ import annotations

import os

from hlotop.analysis.analyze import analyze
from hlotop.loading.loader import (
    LoadError,
    ModuleDump,
    module_files,
    module_name,
    resolve,
    split_module_prefix,
)
from hlotop.model import Diagnostic, DumpFile
from hlotop.parse.dump import parse_text

PREVIEW_BYTES = 1 << 19
# Ends of the allocation section: everything before them is whole allocations.
_AFTER_ALLOCATIONS = ("\nTotal bytes used:", "\nUsed values:", "\nHloLiveRange")


def preview(path: str | os.PathLike, max_bytes: int = PREVIEW_BYTES) -> ModuleDump | None:
    """The allocations printed in the first ``max_bytes`` bytes of the dump ``path``
    names (as for :func:`hlotop.loading.loader.load`), as a :class:`ModuleDump` whose
    ``preview`` is (bytes read, bytes in the module's files); it has no value records
    and no live ranges, and no diagnostics (the whole load reports them).

    Returns None when a preview would not help or cannot be made: standard input, a
    dump of at most ``2 * max_bytes`` bytes (the whole load is quick), a head with no
    whole allocation, or any problem opening it (the whole load then says what it is).
    Raises nothing; never reads more than ``max_bytes`` bytes.
    """
    if str(path) == "-":
        return None
    try:
        main = resolve(path)
        files = module_files(main)
        total = sum(f.stat().st_size for f, _ in files)
        if split_module_prefix(main) is not None:
            main = next((f for f, kind in files if kind == "buffer-assignment"), None)
            if main is None:
                return None
        if total <= 2 * max_bytes:
            return None
        with open(main, "rb") as f:
            head = f.read(max_bytes)
    except (LoadError, OSError):
        return None
    text = _whole_allocations(head.decode("utf-8", errors="replace").replace("\r\n", "\n"))
    if text is None:
        return None
    label = str(main)
    sections = parse_text(label, text, [])
    if not sections.allocations:
        return None
    ignored: list[Diagnostic] = []
    return ModuleDump(
        module_name(main),
        (DumpFile(label, "buffer-assignment"),),
        sections,
        [],
        analyze(sections, ignored, label),
        preview=(len(head), total),
    )


def _whole_allocations(text: str) -> str | None:
    """``text`` up to the end of its allocation section, or up to the start of its last
    allocation (which may be cut short); None if that leaves no allocation."""
    ends = [at for at in (text.find(m) for m in _AFTER_ALLOCATIONS) if at >= 0]
    if ends:
        return text[: min(ends) + 1]
    last = text.rfind("\nallocation ")
    return text[: last + 1] if last > 0 else None
