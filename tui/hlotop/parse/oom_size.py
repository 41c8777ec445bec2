"""Sizes as out-of-memory texts print them, read into :class:`~hlotop.model.oom.Size`
with their text kept.

XLA prints ``HumanReadableNumBytes`` (``4.50GiB``, ``38.7KiB``, ``12B``:
``tsl/platform/numbers.cc``, reproduced by :func:`hlotop.units.human_bytes`); libtpu
prints the same figures without the ``iB`` (``30.21G``, ``530.00M``, ``481.0K``,
``3.84T``, ``3.47E``), and these are binary units too: in the samples an unpadded
``f32[4,128,128,9,18]`` (42467328 bytes) is printed ``40.50M`` and a
``bf16[256000,3072]`` (1572864000 bytes) ``1.46G`` (decimal would be 42.47M and 1.57G).
A size is exact where the text prints bytes (``17528955952 bytes``, ``(rounded to
N)``, ``(N bytes)``, ``N bytes (6.94GiB)``, ``12B``, a bare count), or where a shape
fixes them (:func:`fixed_by_shape`); else its bytes are the rounded figure read back.
"""

from __future__ import annotations

import re

from hlotop.model.oom import Size
from hlotop.shapes import shape_of
from hlotop.units import human_bytes

_NUM = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:[KMGTPE]i?B?|B|bytes)"
# A size as printed, with the exact count some printers add in parentheses.
SIZE_RE = rf"{_NUM}\s?{_UNIT}?(?:\s?\((?:rounded to\s?)?{_NUM}\s?{_UNIT}?\))?"
_SIZE_TOKEN = re.compile(rf"(?P<num>{_NUM})\s?(?P<unit>{_UNIT})?")
_POWER = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_SPACES = re.compile(r"\s+")


def read_size(text: str) -> Size:
    """The :class:`Size` ``text`` prints: ``4.50GiB``, ``30.21G``, ``12B``,
    ``17528955952 bytes``, ``27.93GiB (rounded to 29995136256)``, ``7,450,374,152
    bytes (6.94GiB)`` or a bare count. A figure in bytes is exact and gives the bytes;
    a rounded one reads as ``round(value * 1024**k)`` (``K``..``E`` binary, with or
    without ``iB``). Raises ``ValueError`` when ``text`` holds no size."""
    printed = _SPACES.sub(" ", text.strip())
    rounded = None
    for m in _SIZE_TOKEN.finditer(printed):
        num, unit = m["num"].replace(",", ""), m["unit"]
        if unit in ("B", "bytes") or (unit is None and "." not in num):
            if "." not in num:
                return Size(printed, int(num), True)
            rounded = rounded if rounded is not None else round(float(num))
            continue
        if rounded is None:
            scale = 1024 ** _POWER[unit[0]] if unit else 1
            rounded = round(float(num) * scale)
    if rounded is None:
        raise ValueError(f"not a size: {text!r}")
    return Size(printed, rounded, False)


def size_bytes(text: str) -> int:
    """The bytes of :func:`read_size` (exact or read from the rounded figure)."""
    return read_size(text).bytes


def size_or_none(text: str) -> Size | None:
    """:func:`read_size`, or None for ``unknown``/``unknown size``."""
    return None if text.strip().startswith("unknown") else read_size(text)


def printed_as(n: int, text: str) -> bool:
    """Whether ``n`` bytes print as ``text`` (``4.50GiB``, or libtpu's ``4.50G``):
    ``HumanReadableNumBytes``, with or without the ``iB``."""
    human = human_bytes(n)
    printed = text.strip()
    return printed == human or (human.endswith("iB") and printed == human[:-2])


def shape_bytes(shape: str | None) -> int | None:
    """Bytes of the elements of ``shape`` as printed (``ShapeUtil::ByteSizeOf``, no
    tiling padding; a tuple is its table of pointers), None when it does not read."""
    if not shape:
        return None
    parsed = shape_of(shape.strip())
    return parsed.logical_bytes() if parsed is not None else None


def is_tiled(shape: str | None) -> bool:
    """Whether ``shape``'s layout has tiles (``{1,0:T(8,128)}``): its buffer may be
    padded beyond its elements' bytes."""
    return bool(shape) and ":T(" in (shape or "")


def fixed_by_shape(size: Size | None, n: int | None) -> Size | None:
    """``size`` with its bytes fixed to ``n`` (the shape's, exact) when it is rounded
    and ``n`` prints as it does; else ``size`` unchanged."""
    if size is None or size.exact or n is None or not printed_as(n, size.text):
        return size
    return Size(size.text, n, True, "shape")


def derived(formula: str, big: Size | None, small: Size | None) -> Size | None:
    """``big - small`` as a derived :class:`Size` whose text is ``formula``: exact when
    both are; None when either is missing or the difference is not positive."""
    if big is None or small is None or big.bytes <= small.bytes:
        return None
    return Size(formula, big.bytes - small.bytes, big.exact and small.exact, "derived")
