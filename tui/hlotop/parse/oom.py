"""XLA's out-of-memory texts read into reports (FEATURES.md, "OOM texts"; the model is
:mod:`hlotop.model.oom`, whose ``OOM_FORMATS`` names each format and its printer).

A text is first made into its messages' lines (:mod:`hlotop.parse.oom_text`: log
prefixes, colour codes, markup and wraps undone, each line keeping its number in the
file). Its blocks are then read each on its own (:mod:`hlotop.parse.oom_blocks`): a
headline of any format, the GPU runtime's stats and peak buffers, libtpu's usage table
and largest allocations, the BFC allocator's statistics. Last they are put together,
in the text's order, into one report per message: a headline starts a report, and
each block after it that belongs to that kind of message joins it (a second block of
a kind starts another); a block with no headline before it that it belongs to makes a
report of its own, read from what it holds (``headline`` False). A file may hold
several messages: every one is reported, a copy of one (a traceback repeating a log
line) once, with the lines it is repeated on.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from hlotop.model import oom as model
from hlotop.model.oom import BLOCK_NAMES, OomReport
from hlotop.parse import oom_forms as forms
from hlotop.parse.oom_assembly import drafts_of, report_of
from hlotop.parse.oom_blocks import read_blocks
from hlotop.parse.oom_text import logical_lines, undecorated
from hlotop.parse.tokens import Sink


def find_ooms(text: str, path: str = "") -> list[OomReport]:
    """Every OOM message in ``text`` (the formats of
    :data:`hlotop.model.oom.OOM_FORMATS`, however wrapped), in the text's order; a
    message printed twice (a log line and the traceback repeating it) once, its
    ``repeats`` naming the lines of the copies. ``path`` names the text in the reports
    and their diagnostics. Raises nothing."""
    sink = Sink(path)
    blocks = read_blocks(logical_lines(text), sink)
    drafts = drafts_of(blocks)
    reports: list[OomReport] = []
    seen: dict[tuple[Any, ...], int] = {}
    for n, draft in enumerate(drafts):
        first = draft.blocks[0].line
        after = drafts[n + 1].blocks[0].line if n + 1 < len(drafts) else None
        diagnostics = tuple(
            d for d in sink.diagnostics if first <= d.line and (after is None or d.line < after)
        )
        report = report_of(draft, path, diagnostics)
        key = report.figures()
        if key in seen:
            copied = reports[seen[key]]
            reports[seen[key]] = replace(copied, repeats=(*copied.repeats, report.line))
            continue
        seen[key] = len(reports)
        reports.append(report)
    return reports


_ORDER = list(model.OOM_FORMATS)


def parse_oom(text: str, path: str) -> OomReport | None:
    """The OOM that ``text`` (a log, an issue comment, a traceback...) reports: of the
    messages :func:`find_ooms` finds, the most telling: a TPU compile report first,
    then the GPU runtime's BufferAssignment report... in the order of
    :data:`~hlotop.model.oom.OOM_FORMATS`, the remat pass's warning and the GPU
    scheduler's last, a BFC allocator's retry that "is not a failure" after all; among
    equals the one with a headline, then most entries, then the first. None when
    ``text`` holds no OOM message. ``path`` names the text in the report. Raises
    nothing."""
    reports = find_ooms(text, path)
    return primary(reports)


def primary(reports: list[OomReport]) -> OomReport | None:
    """The most telling of ``reports`` (see :func:`parse_oom`), None if there are none."""

    def rank(r: OomReport) -> tuple[bool, int, bool, int]:
        retry = "not a failure" in r.message
        return retry, _ORDER.index(r.format), not r.headline, -len(r.entries)

    return min(reports, key=rank) if reports else None


def looks_like_oom(text: str) -> bool:
    """Whether ``text`` holds the first words of an OOM headline or the key of an OOM
    text's block (``Peak buffers:``, ``Stats:`` with ``Limit:``, ``Total hbm usage``...),
    also where ANSI codes, HTML escapes or a hard wrap cut them: a quick test (a few
    regular-expression scans) for a file of any size. True does not promise that
    :func:`find_ooms` reads a report. Raises nothing."""
    if forms.SNIFF.search(text) or _BLOCKS.search(text):
        return True
    plain = undecorated(text)
    return forms.SNIFF.search(plain) is not None or _BLOCKS.search(plain) is not None


_BLOCKS = re.compile(
    r"BufferAssignment OOM Debugging|BufferAssignment stats:|Peak buffers:|Buffer \d+:\s*$"
    r"|Largest program allocations in|Total \w+ usage >=|Program \w+ requirement"
    r"|Stats:\s*$|^\s*Limit:\s+\d|Total size in pool:",
    re.M,
)


def refusal(text: str, path: str) -> str | None:
    """Why ``text``, which :func:`looks_like_oom`, yields no report: the block nearest
    to one that it saw (``saw a BFC 'Stats:' block but no figure it could read at line
    12``), or the headline words it found with no figure after them. None when it holds
    neither. Raises nothing."""
    sink = Sink(path)
    lines = logical_lines(text)
    for block in read_blocks(lines, sink):
        if not block.read_anything():
            name = BLOCK_NAMES.get(block.kind, block.kind)
            why = f"saw a {name} but no figure it could read at line {block.line}"
            if sink.diagnostics:
                why += f" ({sink.diagnostics[0].message}, line {sink.diagnostics[0].line})"
            return why
    for line in lines:
        m = forms.SNIFF.search(line.text)
        if m is not None:
            words = " ".join(m[0].split())
            return f"saw '{words}' at line {line.line} but no message of a known form after it"
    return None
