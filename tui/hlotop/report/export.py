"""``hlotop --export csv|tsv|folded``: the live set at a step, grouped or per value, as
text other tools read: CSV or TSV (spreadsheets, pandas) and collapsed stacks
(``a;b;c bytes``: speedscope, flamelens, inferno).

The bytes are the grouping's (:mod:`hlotop.analysis.grouping`): the rows add up to its
``total_bytes`` under its ``accounting``.

Every label is dump text (an op_name, a path): whether the export goes to a terminal, a
file or a pipe, its control characters are written as ``\\xNN`` escapes, tab and newline
as ``\\t`` and ``\\n`` (:func:`hlotop.safe_text.printable`). Nothing of the text is
dropped, but no C0 or C1 control reaches the reader: a crafted op_name's ESC sequence
set a terminal's title, wrote its clipboard (OSC 52) and cleared its screen, and its
tab or newline split a TSV row or a collapsed stack.
"""

from __future__ import annotations

import csv
import io
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from hlotop.analysis.group_stacks import frames_of
from hlotop.analysis.grouping import GROUP_KEYS, Grouping
from hlotop.analysis.labels import Labeller
from hlotop.safe_text import printable

FORMATS = ("csv", "tsv", "folded")
FOLDED_KEYS = ("phase", "scope", "opcode")  # the stack of a value when none is given


def write_groups(grouping: Grouping, out: IO[str], fmt: str = "csv") -> None:
    """One row per group: its key parts (control characters escaped), ``bytes``,
    ``share`` (of the total, percent, two decimals) and ``values`` (how many). ``fmt``:
    ``csv`` or ``tsv``. Raises ValueError for another format."""
    writer = _writer(out, fmt)
    writer.writerow([*grouping.keys, "bytes", "share", "values"])
    for row in grouping.rows:
        writer.writerow(
            [
                *map(printable, row.key),
                row.bytes,
                _share(row.bytes, grouping.total_bytes),
                len(row.values),
            ]
        )


def write_values(grouping: Grouping, labeller: Labeller, out: IO[str], fmt: str = "csv") -> None:
    """One row per live value, in XLA's order (bytes descending): its id, name,
    ``bytes`` (counted under the grouping's accounting), logical and allocated bytes,
    its live range's first and last step and its label for every group key (names and
    labels with control characters escaped). ``fmt``: ``csv`` or ``tsv``. Raises
    ValueError for another format."""
    writer = _writer(out, fmt)
    writer.writerow(
        ["id", "value", "bytes", "logical_bytes", "allocated_bytes", "start", "end", *GROUP_KEYS]
    )
    values = sorted(
        (info for row in grouping.rows for info in row.values),
        key=lambda i: (-i.logical_bytes, i.value.name, i.value.shape_index or (), i.value.id),
    )
    for info in values:
        live = info.live
        writer.writerow(
            [
                info.value.id,
                printable(info.value.label),
                grouping.bytes_of[info.value.id],
                info.logical_bytes,
                info.allocated_bytes,
                live.start if live else "",
                live.end if live else "",
                *(printable(labeller.label(info, key)) for key in GROUP_KEYS),
            ]
        )


def write_folded(
    grouping: Grouping, labeller: Labeller, out: IO[str], keys: Sequence[str] = ()
) -> None:
    """Collapsed stacks: one line ``frame;frame;... bytes`` per distinct stack, the
    frames being each value's labels for ``keys`` (default :data:`FOLDED_KEYS`), a
    scope split at its ``/`` into frames. Lines in stack order; their bytes add up to
    the grouping's total. ``;`` in a label becomes ``,`` (it separates frames), a space
    ``_`` (one ends the stack), a control character an escape."""
    keys = tuple(keys) or FOLDED_KEYS
    stacks: dict[str, int] = defaultdict(int)
    for row in grouping.rows:
        for info in row.values:
            labels = [labeller.label(info, key) for key in keys]
            frames = [
                printable(f).replace(";", ",").replace(" ", "_") for f, _ in frames_of(keys, labels)
            ]
            stacks[";".join(frames or ["(all)"])] += grouping.bytes_of[info.value.id]
    for stack in sorted(stacks):
        if stacks[stack]:
            out.write(f"{stack} {stacks[stack]}\n")


def export_directory(dump_path: str) -> Path:
    """Where the browser writes its exports: ``$HLOTOP_EXPORT_DIR`` if set, else the
    current directory, unless that is the dump's own folder (hlotop never writes
    there): then ``~/hlotop-exports``."""
    chosen = os.environ.get("HLOTOP_EXPORT_DIR")
    here = Path(chosen) if chosen else Path.cwd()
    dump_dir = Path(dump_path).resolve().parent if dump_path not in ("", "-") else None
    if dump_dir is not None and here.resolve() == dump_dir:
        return Path.home() / "hlotop-exports"
    return here


def to_text(write, *args) -> str:
    """What ``write(*args, out)`` writes, as a string."""
    out = io.StringIO()
    write(*args, out)
    return out.getvalue()


def _share(part: int, total: int) -> str:
    return f"{100 * part / total:.2f}" if total else "0.00"


def _writer(out: IO[str], fmt: str):
    if fmt not in ("csv", "tsv"):
        raise ValueError(f"unknown table format {fmt!r} (csv or tsv)")
    return csv.writer(out, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
