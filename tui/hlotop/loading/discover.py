"""Which files make a module: a split module's siblings (FORMATS.md 1), the one module
in a directory, the dump beside a module's HLO text, and the module's name. Reads
only file names and metadata."""

from __future__ import annotations

import os
from pathlib import Path

from hlotop.loading.errors import LoadError

# Since 2026-04 a module's buffer assignment is split over these files (FORMATS.md 1).

SPLIT_SUFFIXES = {
    "-buffer-assignment.txt": "buffer-assignment",
    "-buffer-assignment-values.txt": "values",
    "-live-range.txt": "live-range",
    "-memory-usage-report.txt": "memory-usage-report",
}


COMPRESSED = ".gz"  # a dump file gzip-compressed (read as it is decompressed)


def split_module_prefix(path: Path) -> tuple[str, str] | None:
    """``module_0001.f.cpu_after_optimizations-live-range.txt`` (or ``.txt.gz``) ->
    (``module_0001.f.cpu_after_optimizations``, ``"live-range"``); None for other names."""
    name = path.name.removesuffix(COMPRESSED)
    for suffix in sorted(SPLIT_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)], SPLIT_SUFFIXES[suffix]
    return None


def module_files(path: Path) -> list[tuple[Path, str | None]]:
    """The files of the module ``path`` belongs to, with their kind where the name
    tells it: the siblings of a split module that exist, in dump order (each as it is
    named, compressed, ``.gz``, or not: the one like ``path`` if both are there)."""
    split = split_module_prefix(path)
    if split is None:
        return [(path, None)]
    prefix, _ = split
    tails = (COMPRESSED, "") if path.name.endswith(COMPRESSED) else ("", COMPRESSED)
    out: list[tuple[Path, str | None]] = []
    for suffix, kind in SPLIT_SUFFIXES.items():
        for tail in tails:
            candidate = path.with_name(prefix + suffix + tail)
            if candidate == path or candidate.exists():
                out.append((candidate, kind))
                break
    return out


ASSIGNMENT = "-buffer-assignment.txt"  # the file a module is opened by
_SUBFOLDERS_LOOKED_AT = 1000  # a folder's subfolders looked into for dumps
_SUBFOLDERS_NAMED = 5


def _find_module_in_dir(directory: Path) -> Path:
    """The one module in ``directory``: its ``-buffer-assignment.txt`` (or ``.gz``),
    or, where there is none, its ``-memory-usage-report.txt`` (a report on its own).
    Raises :class:`LoadError` for none, or several, and ``PermissionError`` for a
    folder that cannot be listed."""
    names = os.listdir(directory)  # PermissionError: said so, not "no dump here"
    candidates = sorted(
        directory / n for n in names if n.endswith((ASSIGNMENT, ASSIGNMENT + COMPRESSED))
    )
    if not candidates:  # a report on its own, if that is all there is
        report = "-memory-usage-report.txt"
        candidates = sorted(directory / n for n in names if n.endswith(report))
    if not candidates:
        raise LoadError(str(directory), _no_dump_here(directory, names))
    if len(candidates) > 1:
        largest = max(candidates, key=lambda p: p.stat().st_size)
        raise LoadError(
            str(directory),
            f"{len(candidates)} modules here; name one, e.g. {largest.name} (the largest)",
        )
    return candidates[0]


def _no_dump_here(directory: Path, names: list[str]) -> str:
    """Why ``directory`` (whose entries are ``names``) opens no module: none here, and
    which of its subfolders hold one (a folder of ``--xla_dump_to`` runs), if any."""
    holding = []
    for name in sorted(names)[:_SUBFOLDERS_LOOKED_AT]:
        sub = directory / name
        try:
            if sub.is_dir() and any(
                n.endswith((ASSIGNMENT, ASSIGNMENT + COMPRESSED)) for n in os.listdir(sub)
            ):
                holding.append(name)
        except OSError:
            continue
    reason = f"no *{ASSIGNMENT} dump in this directory"
    if not holding:
        return reason
    shown = ", ".join(f"{n}/" for n in holding[:_SUBFOLDERS_NAMED])
    more = (
        f" and {len(holding) - _SUBFOLDERS_NAMED} more" if len(holding) > _SUBFOLDERS_NAMED else ""
    )
    which = "its subfolder" if len(holding) == 1 else f"{len(holding)} of its subfolders"
    return f"{reason}; {which} {shown}{more} hold{'s' if len(holding) == 1 else ''} dumps: name one"


def resolve(path: str | os.PathLike) -> Path:
    """The dump file a user's ``path`` names: the path itself, the one module in a
    directory, or the buffer assignment beside a module's HLO text. Raises
    :class:`LoadError` for a missing path or a directory without exactly one module."""
    p = Path(path)
    try:
        if p.is_dir():
            return _find_module_in_dir(p)
        if not p.exists():
            if p.is_symlink():
                raise LoadError(
                    str(p), "a symbolic link that leads nowhere (a loop, or its target is missing)"
                )
            raise LoadError(str(p), "no such file or directory")
        if not p.is_file():  # a FIFO or a device would be read forever
            raise LoadError(str(p), "not a regular file")
        sibling = p.with_name(p.stem + "-buffer-assignment.txt")
        if split_module_prefix(p) is None and sibling.exists():
            return sibling  # the module's HLO text was named
    except PermissionError:  # a folder that cannot be listed: not "no dump here"
        raise LoadError(str(p), "permission denied") from None
    except OSError as err:  # a name too long, ...
        raise LoadError(str(p), err.strerror or str(err)) from None
    return p


def module_name(path: Path) -> str:
    """The module's name: a split module's common prefix, else the file's stem (of
    its name less ``.gz``)."""
    split = split_module_prefix(path)
    return split[0] if split else Path(path.name.removesuffix(COMPRESSED)).stem
