"""Reading one file of a dump: its bytes, decoded and parsed into its sections
(:func:`hlotop.parse.dump.parse_text`), a file that holds no dump refused, one cut
short said so; a split module's sibling that cannot be read is a warning, not a
refusal; and how a worker reads a ``-live-range.txt``, its stack-trace tree last."""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import AnyStr

from hlotop.loading.ahead import Later
from hlotop.loading.decode import read_text
from hlotop.loading.errors import LoadError
from hlotop.loading.file_bytes import FileBytes
from hlotop.loading.input_bytes import read_file
from hlotop.model import Diagnostic, ParsedSections
from hlotop.parse import scan
from hlotop.parse.dump import ReadHooks, parse_text
from hlotop.parse.live_range import UNAVAILABLE
from hlotop.parse.stack_trace import TreeApart

_NO_HOOKS = ReadHooks()


def kind_of(parsed: ParsedSections, named: str | None) -> str:
    """Which part of a module the file holds: its ``named`` kind (a split module's
    file name says it), else what its sections say."""
    if parsed.saw_buffer_assignment and parsed.saw_used_values:
        return "combined"
    if named:
        return named
    if parsed.saw_buffer_assignment:
        return "combined"  # a pre-2019 or cut-short file: only the allocations
    if parsed.saw_used_values:
        return "values"
    if parsed.live_range is not None or parsed.live_range_unavailable:
        return "live-range"
    return "memory-usage-report"


def is_dump(parsed: ParsedSections) -> bool:
    """Whether the file had any section of a dump."""
    return bool(
        parsed.saw_buffer_assignment
        or parsed.saw_used_values
        or parsed.live_range is not None
        or parsed.live_range_unavailable
        or parsed.memory_usage_report is not None
        or parsed.total_bytes_used is not None
    )


def parse_file(
    label: str,
    data: bytes | list[bytes],
    source: FileBytes | None,
    diagnostics: list[Diagnostic],
    hooks: ReadHooks = _NO_HOOKS,
) -> ParsedSections:
    """Parse one file's bytes. Given as a one-item list, the bytes are released as soon
    as they are decoded, so a big dump is not held twice while it is parsed. With
    ``source`` (the file the bytes were read from), value records whose text is those
    bytes unchanged are read back from the file when asked for, not held."""
    raw = data.pop() if isinstance(data, list) else data
    # The records can be read back from the file at the text's offsets only if decoding
    # changed nothing else: no line ends rewritten, no undecodable bytes replaced.
    same_offsets = source is not None and not scan.contains(raw, b"\r")
    before = len(diagnostics)
    text = read_text(label, raw, diagnostics)
    same_offsets = same_offsets and len(diagnostics) == before
    del raw  # a decoded text is not held twice while it is parsed
    if same_offsets and source is not None:
        hooks = replace(hooks, source=source)
    # Handed on in a list, and not kept here: the parser drops the text once it is cut
    # into lines. (Either kind of text; the type checker follows one at a time.)
    if isinstance(text, bytes):
        held_bytes = [text]
        del text
        return _parse_decoded(label, held_bytes, diagnostics, hooks)
    held_str = [text]
    del text
    return _parse_decoded(label, held_str, diagnostics, hooks)


def read_bytes(path: Path) -> tuple[list[bytes], FileBytes | None]:
    """A file's bytes (as a one-item list, see :func:`parse_file`) and the file to read
    them back from, taken first (none for a compressed file: its text is not its
    bytes). Raises :class:`LoadError`."""
    try:
        source: FileBytes | None = FileBytes(path)
    except OSError:  # read_file says why
        source = None
    data, compressed = read_file(path)
    return [data], None if compressed else source


def _parse_decoded(
    label: str, text: list[AnyStr], diagnostics: list[Diagnostic], hooks: ReadHooks
) -> ParsedSections:
    """Parse one file's text (as :func:`~hlotop.loading.decode.read_text` gives it, in a
    one-item list: taken out and dropped by the parser as soon as it can be)."""
    # The file's diagnostics go straight into the caller's list (a stack-trace tree
    # read apart says where its own go among them), and are taken out again if the
    # file is no dump.
    before = len(diagnostics)
    whole = text[0]
    head = whole[: len(UNAVAILABLE)]
    start = head.decode("ascii") if isinstance(head, bytes) else head
    # Whether the file ends with a line end, and its last line if not: known before the
    # text goes.
    cut_short = not whole.endswith(scan.newline_of(whole)) and not start.startswith(UNAVAILABLE)
    last = scan.count_lines(whole, 0, len(whole)) + 1 if cut_short else 0
    del whole
    parsed = parse_text(label, text, diagnostics, hooks)
    if not is_dump(parsed):
        del diagnostics[before:]
        raise LoadError(
            label,
            "not an XLA buffer-assignment dump (no 'BufferAssignment:', "
            "'Used values:' or 'HloLiveRange' section) nor an out-of-memory error text",
        )
    if cut_short:
        diagnostics.append(
            Diagnostic(
                label,
                last,
                "truncated: the file does not end with a "
                "newline, so it was probably cut short here",
                "warning",
            )
        )
    return parsed


def parse_sibling(
    label: str, path: Path, diagnostics: list[Diagnostic], hooks: ReadHooks = _NO_HOOKS
) -> ParsedSections | None:
    """A sibling that cannot be read is a warning: the rest of the module still opens."""
    try:
        return parse_file(label, *read_bytes(path), diagnostics, hooks)
    except LoadError as err:
        diagnostics.append(Diagnostic(label, 0, f"sibling file skipped: {err.reason}", "warning"))
        return None


def live_ranges_then_tree(label: str, path: Path, diagnostics: list[Diagnostic]) -> Later:
    """A split module's ``-live-range.txt`` as a worker reads it: all but its
    stack-trace tree now, the tree's lines set aside (:class:`TreeApart`); then the
    tree, read while the process that takes the rest works out the figures (none
    needs the tree: 0.1 s of the worker's at 46 MB). The sections, and diagnostics, are
    those of :func:`parse_sibling` once :func:`hlotop.loading.loader`'s ``_with_tree`` has put the tree back."""
    apart = TreeApart()
    sections = parse_sibling(label, path, diagnostics, ReadHooks(tree_apart=apart))
    return Later(sections, partial(apart.read, label))
