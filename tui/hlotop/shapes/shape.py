"""Shapes and layouts as XLA prints them, and their logical size in bytes.

The grammar that reads them is :mod:`hlotop.shapes.grammar`; this module only holds the
result and the arithmetic (``ShapeUtil::ByteSizeOf`` with 8-byte pointers).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

POINTER_BYTES = 8

# ShapeUtil::ByteSizeOfPrimitiveType. Sub-byte types take a whole byte unless the
# layout packs them with E(n).
ELEMENT_BYTES = {
    "pred": 1,
    "s1": 1,
    "u1": 1,
    "s2": 1,
    "u2": 1,
    "s4": 1,
    "u4": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
    "token": 0,
}


def element_bytes(element_type: str) -> int:
    """Bytes per element of ``element_type`` (``"bf16"`` -> 2). FP8/FP4 variants
    (``f8e4m3fn``, ``f4e2m1fn`` ...) are 1. Unknown types raise ``KeyError``."""
    if element_type in ELEMENT_BYTES:
        return ELEMENT_BYTES[element_type]
    if element_type.startswith(("f8", "f4", "f6", "s1", "u1")):
        return 1
    raise KeyError(element_type)


@dataclass(frozen=True, slots=True)
class Tile:
    """One tile of a tiled layout: ``T(8,128)`` -> ``(8, 128)``; ``*`` is ``-1``."""

    dims: tuple[int, ...]

    def __str__(self) -> str:
        return "(" + ",".join("*" if d < 0 else str(d) for d in self.dims) + ")"


@dataclass(frozen=True, slots=True)
class Layout:
    """``{minor_to_major:attributes}`` (``Layout::Print``)."""

    minor_to_major: tuple[int, ...]
    tiles: tuple[Tile, ...] = ()
    memory_space: int = 0
    element_size_bits: int | None = None
    other: tuple[str, ...] = ()  # L(..), #(..), *(..), SC(..), P(..), M(..), D(..) as text

    @property
    def tiling(self) -> str:
        return "T" + "".join(str(t) for t in self.tiles) if self.tiles else ""

    def __str__(self) -> str:
        attrs = self.tiling + "".join(self.other)
        if self.element_size_bits:
            attrs += f"E({self.element_size_bits})"
        if self.memory_space:
            attrs += f"S({self.memory_space})"
        m2m = ",".join(str(d) for d in self.minor_to_major)
        return "{" + m2m + (":" + attrs if attrs else "") + "}"


@dataclass(frozen=True, slots=True)
class ArrayShape:
    element_type: str
    dims: tuple[int, ...]  # a dynamic "<=N" dimension holds its bound N, "?" holds 0
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None

    @property
    def is_tuple(self) -> bool:
        return False

    def __str__(self) -> str:
        dims = ",".join(
            ("<=" if dyn and d else "?" if dyn else "") + (str(d) if d or not dyn else "")
            for d, dyn in zip(self.dims, self.dynamic or (False,) * len(self.dims), strict=False)
        )
        text = f"{self.element_type}[{dims}]"
        if self.layout is not None:
            lay = str(self.layout)
            if lay != "{}":
                text += lay
        return text

    def logical_bytes(self) -> int:
        """Bytes of the elements, ignoring tiling padding (``ByteSizeOf``)."""
        if self.element_type == "opaque":
            return POINTER_BYTES
        n = prod(self.dims)
        if self.layout is not None and self.layout.element_size_bits:
            return (n * self.layout.element_size_bits + 7) // 8
        try:
            return n * element_bytes(self.element_type)
        except KeyError:
            return 0

    @property
    def memory_space(self) -> int:
        return self.layout.memory_space if self.layout else 0


@dataclass(frozen=True, slots=True)
class TupleShape:
    elements: tuple[Shape, ...]

    @property
    def is_tuple(self) -> bool:
        return True

    def __str__(self) -> str:
        parts = []
        for i, e in enumerate(self.elements):
            parts.append((f"/*index={i}*/" if i and i % 5 == 0 else "") + str(e))
        return "(" + ", ".join(parts) + ")"

    def logical_bytes(self) -> int:
        """A tuple's own buffer is its table of element pointers (8 bytes each)."""
        return POINTER_BYTES * len(self.elements)

    @property
    def memory_space(self) -> int:
        return 0


@dataclass(frozen=True, slots=True)
class BufferShape:
    """``b(<shape>)``: newer XLA's buffer shapes."""

    inner: Shape

    @property
    def is_tuple(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"b({self.inner})"

    def logical_bytes(self) -> int:
        return self.inner.logical_bytes()

    @property
    def memory_space(self) -> int:
        return self.inner.memory_space


Shape = ArrayShape | TupleShape | BufferShape


def subshape(shape: Shape, index: tuple[int, ...]) -> Shape | None:
    """The element of ``shape`` at ShapeIndex ``index``, or None if it has none."""
    for i in index:
        if not isinstance(shape, TupleShape) or i >= len(shape.elements):
            return None
        shape = shape.elements[i]
    return shape
