"""A dump file's bytes to the text the parser reads: line ends made LF, ASCII kept as
bytes (decoded a record at a time later), anything else decoded as UTF-8 with bad
bytes reported; binary and empty files refused. (The bytes are read by
:mod:`hlotop.loading.input_bytes`.)"""

from __future__ import annotations

from hlotop.loading.errors import LoadError
from hlotop.model import Diagnostic
from hlotop.parse import scan

_SNIFF_BYTES = 8192


def read_text(path: str, data: bytes, diagnostics: list[Diagnostic]) -> str | bytes:
    """A dump's text, with LF line ends: its bytes as they are if they are all ASCII
    (as XLA writes them; :func:`~hlotop.parse.dump.parse_text` decodes only the parts
    it reads line by line, so a big dump is not held twice), else decoded as UTF-8,
    invalid bytes replaced and reported at their line. A binary file (many control
    bytes) or an empty one raises :class:`LoadError`."""
    if not data or data.isspace():  # not data.strip(): a copy of the whole file
        raise LoadError(path, "the file is empty")
    if looks_binary(data[:_SNIFF_BYTES]):
        raise LoadError(path, "a binary file, not a text dump")
    # A CR first, alone: one byte is found by memchr, a two-byte CRLF by a search ten
    # times as long (40 ms of a 35 MB dump with none).
    if scan.contains(data, b"\r"):
        if scan.contains(data, b"\r\n"):
            data = data.replace(b"\r\n", b"\n")  # CRLF and LF dumps read the same
        elif not scan.contains(data, b"\n"):
            data = data.replace(b"\r", b"\n")  # old Mac line ends: CR alone
    if scan.is_ascii(data):
        return data
    try:
        return scan.decode_utf8(data)  # a piece at a time: a browser's keys wait for it
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        diagnostics.append(
            Diagnostic(
                path, line, "invalid UTF-8; undecodable bytes are shown as U+FFFD", "warning"
            )
        )
        return scan.decode_utf8(data, errors="replace")


_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r") + b"\x7f"


def looks_binary(sample: bytes) -> bool:
    """More than 10% control bytes: an executable, a proto, an image. A text dump with a
    stray NUL is damaged, not binary: it opens, and the line is reported."""
    control = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    return control * 10 > len(sample)
