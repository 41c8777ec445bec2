"""Byte counts in the units XLA prints them.

XLA formats sizes with ``tsl::strings::HumanReadableNumBytes`` (``36.0KiB``,
``40.00MiB``), which truncates with integer division before rounding. No
general-purpose library (``humanize``, Rich's ``filesize``) reproduces that text
exactly, and hlotop's users compare its figures with the dump's own, so the rule is
reproduced here, in the one place where bytes become text.
"""

from __future__ import annotations

import re

_UNITS = "KMGTPE"


def human_bytes(num_bytes: int) -> str:
    """Format ``num_bytes`` (int, bytes) exactly as XLA's ``HumanReadableNumBytes``.

    Below 1024 the result is ``"<n>B"``. Otherwise the value is divided by 1024 with
    integer division while it is at least 1024*1024, then printed as ``n/1024.0``
    with one decimal for KiB and two for MiB and above: 36864 -> ``"36.0KiB"``,
    41943040 -> ``"40.00MiB"``, 1348651528 -> ``"1.26GiB"``. Negative values get a
    ``-`` prefix. Raises nothing.
    """
    if num_bytes < 0:
        return "-" + human_bytes(-num_bytes)
    if num_bytes < 1024:
        return f"{num_bytes}B"
    unit = 0
    n = num_bytes
    while n >= 1024 * 1024 and unit < len(_UNITS) - 1:
        n //= 1024
        unit += 1
    precision = 1 if unit == 0 else 2
    return f"{n / 1024.0:.{precision}f}{_UNITS[unit]}iB"


def with_commas(n: int) -> str:
    """An exact number (bytes, values, allocations, records) with a comma every three
    digits: 41943040 -> ``"41,943,040"``. Every pane and report writes exact numbers
    so, in one form (XLA prints plain digits, and its stack-trace breakdown spaces:
    ``FormatBytesWithSpaces``; a screen that mixed ``2 095`` and ``2,095`` read as two
    kinds of number). Raises nothing."""
    return f"{n:,}"


_SCALE = {
    "B": 1,
    "KiB": 1 << 10,
    "MiB": 1 << 20,
    "GiB": 1 << 30,
    "TiB": 1 << 40,
    "PiB": 1 << 50,
    "EiB": 1 << 60,
}
# HumanReadableNumBytes's form: a decimal number (no exponent, inf or nan) and a unit.
_NUMBER, _UNIT = r"-?\d+(?:\.\d+)?", r"B|[KMGTPE]iB"
HUMAN_BYTES_RE = rf"{_NUMBER}(?:{_UNIT})"  # as a dump prints it: 36.0KiB (no groups)
_HUMAN_BYTES = re.compile(rf"\s*({_NUMBER})({_UNIT})\s*")


def parse_human_bytes(text: str) -> int:
    """Read a ``HumanReadableNumBytes`` string back into bytes (int).

    The result is approximate for KiB and above, since XLA's text is rounded:
    ``"22.5KiB"`` -> 23040. Raises ``ValueError`` when ``text`` is not of that form
    (``"1e3MiB"``, ``"infGiB"``).
    """
    m = _HUMAN_BYTES.fullmatch(text)
    if m is not None:
        number, unit = m.groups()
        if unit == "B" and "." not in number:
            return int(number)
        return round(float(number) * _SCALE[unit])
    raise ValueError(f"not a byte count in XLA's units: {text!r}")
