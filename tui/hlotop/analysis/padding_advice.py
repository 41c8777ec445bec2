"""Tiling-padding advice for TPU values: which dimension pads a value's slot, to what,
and what a shape aligned to its tile would save.

It reads a value's shape with layout as ``ShapeUtil::HumanStringWithLayout`` and
``Layout::Print`` write it in the buffer-assignment dump's ``value:`` lines
(``bf16[4,8,513,5120]{3,2,1,0:T(8,128)(2,1)}``; FORMATS.md section 4), and the slot size
XLA printed beside it (``size=``). The padded size follows ``ShapeUtil::ArraySize``
(``xla/shape_util.cc``): only the first tile counts ("we assume the sub-tiles won't
cause additional padding"); its dims, read from the right, round up the shape's
dims in ``minor_to_major`` order (the minor-most to the tile's last dim, 128 lanes; the
second-minor to its second-last, 8/4/2/1 rows); a tile with more dims than the shape
rounds a size-1 dimension beyond the rank (a scalar under ``T(128)`` takes 128 elements);
the rest are not rounded. Then ``L(n)`` rounds the element count, and bytes are
elements x the element's bytes (``E(n)`` bits when set; ``pred`` is 1 byte).

What the real TPU samples show (tests/test_padding_advice.py): this rule gives the
printed slot size of every tiled array value. The packing sub-tiles ``(2,1)`` (16-bit)
and ``(4,1)`` (8-bit, ``pred``) add nothing: ``bf16[4,8,513,5120]{...:T(8,128)(2,1)}``
takes 4*8*520*5120*2 bytes (513 rounds to 8 rows, not 16) and ``pred[32,513]{0,1:
T(8,128)(4,1)}`` takes 128*520*1. A ``pred[]{:T(512)}`` takes 512 bytes because its tile
holds 512 one-byte elements, the same 512 bytes as ``f32[]{:T(128)}``. Slots larger than
their value without a tile are not tiling padding and get no advice: tuple index tables
(8 bytes a pointer, rounded up), ``s32[2]{0:S(4)}`` sync flags and thread-local ``s32[]``
in 4096-byte slots. Split configs ``SC(...)`` are not modelled (none in the samples).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from math import prod

from hlotop.model import ValueInfo
from hlotop.shapes import ArrayShape, BufferShape, Layout, parse_shape, try_parse_shape
from hlotop.shapes.shape import element_bytes

_ROLES = ("minor-most", "second-minor", "third-minor")
_TAIL = re.compile(r"L\((\d+)\)")


@dataclass(frozen=True, slots=True)
class DimPadding:
    """One dimension the first tile rounds up. Sizes in elements, bytes in bytes."""

    dim: int | None  # index in the shape's [d0,d1,...]; None: a size-1 dim beyond the rank
    role: str  # its place under the tile: "minor-most", "second-minor", ...
    unit: str  # what the tile counts along it: "lanes", "rows" or "elements"
    size: int  # logical elements along it (1 beyond the rank)
    tile: int  # the tile's size along it
    rounded: int  # size rounded up to a multiple of tile
    # Bytes of the slot in this dimension's padding: allocated * (rounded - size) /
    # rounded. Causes overlap at the corners, so their sum can exceed the padding.
    wasted_bytes: int
    more_elements: int  # elements the same slot holds if this dim were `rounded`
    smaller: int  # the largest multiple of tile below size (0: none)
    smaller_saves_bytes: int  # slot bytes saved if this dim were `smaller`

    @property
    def reason(self) -> str:
        """One sentence: why this dimension pads, and what a better size would do."""
        if self.dim is None:
            return (
                f"the tile's {self.tile} {self.unit} reach beyond the shape's rank: its "
                f"size 1 there is padded to {self.rounded}, wasting {self.wasted_bytes} "
                f"bytes; a leading dim of {self.rounded} would fill the same slot with "
                f"{self.more_elements} more elements"
            )
        text = (
            f"dim {self.dim} (size {self.size}) is the {self.role} dimension, rounded up "
            f"to {self.rounded} (a multiple of the tile's {self.tile} {self.unit}), "
            f"wasting {self.wasted_bytes} bytes; as {self.rounded} it fills the same "
            f"slot and holds {self.more_elements} more elements"
        )
        if self.smaller:
            text += f"; as {self.smaller} it saves {self.smaller_saves_bytes} bytes"
        return text


@dataclass(frozen=True, slots=True)
class PaddingAdvice:
    """Why one value's slot is larger than its elements, under TPU tiling. Bytes."""

    value_id: int | None  # the HloValue's id; None for a shape given alone
    label: str  # instruction name and ShapeIndex, "fusion.3{1}"; the shape if alone
    shape: str  # the value's shape with layout, as the dump prints it
    memory_space: int  # the layout's S(n) (the value's colour for a ValueInfo)
    logical_bytes: int  # ByteSizeOf: elements x element bytes
    allocated_bytes: int  # the slot size XLA printed
    tiled_bytes: int  # the size by ShapeUtil::ArraySize's rule (see the module doc)
    tiling: str  # "T(8,128)(2,1)"
    causes: tuple[DimPadding, ...]  # minor-most first; () if the tile rounds nothing
    # The logical dims rounded as the first tile rounds them, same layout; dims beyond
    # the rank that a tile rounds above 1 become leading dims (f32[] -> f32[128]).
    aligned_shape: str

    @property
    def padding_bytes(self) -> int:
        """Slot bytes beyond the logical ones: what an aligned shape would put to use."""
        return self.allocated_bytes - self.logical_bytes

    @property
    def explained(self) -> bool:
        """True when the tiling rule gives exactly the slot size XLA printed."""
        return self.tiled_bytes == self.allocated_bytes


def _element_bits(shape: ArrayShape) -> int:
    lay = shape.layout
    if lay is not None and lay.element_size_bits:
        return lay.element_size_bits
    return 8 * element_bytes(shape.element_type)


def _tail_alignment(layout: Layout) -> int:
    for attribute in layout.other:
        m = _TAIL.fullmatch(attribute)
        if m:
            return int(m.group(1))
    return 1


def _round_up(size: int, tile: int) -> int:
    return -(-size // tile) * tile if tile > 0 else size  # a combined '*' tile: as is


def advise_shape(
    shape_text: str, allocated_bytes: int, *, value_id: int | None = None, label: str = ""
) -> PaddingAdvice | None:
    """Advice for one array value: ``shape_text`` with layout as the dump's ``value:``
    line prints it (``"f32[]{:T(128)}"``), ``allocated_bytes`` its slot's ``size=``.

    Returns None when there is no tiling padding: ``allocated_bytes`` is not above the
    logical bytes, the shape is a tuple (an index table), or its layout has no ``T(...)``.
    Otherwise the advice, even when the rule does not reproduce the slot size
    (:attr:`PaddingAdvice.explained` is then False). Raises ``parsy.ParseError`` when
    ``shape_text`` is not a shape and ``KeyError`` for an unknown element type.
    """
    shape = parse_shape(shape_text)
    if isinstance(shape, BufferShape):
        shape = shape.inner
    if not isinstance(shape, ArrayShape) or shape.layout is None or not shape.layout.tiles:
        return None
    logical = shape.logical_bytes()
    if allocated_bytes <= logical:
        return None
    lay = shape.layout
    tile = lay.tiles[0].dims
    m2m = lay.minor_to_major
    rank, depth = len(m2m), max(len(tile), len(m2m))
    # (dim index or None, logical size, tile size) from the minor-most dimension out
    order = [
        (m2m[i] if i < rank else None, shape.dims[m2m[i]] if i < rank else 1) for i in range(depth)
    ]
    tiles = [tile[-1 - i] if i < len(tile) else 1 for i in range(depth)]
    rounded = [_round_up(size, t) for (_, size), t in zip(order, tiles, strict=True)]
    elements = _round_up(prod(rounded), _tail_alignment(lay))
    bits = _element_bits(shape)
    tiled = -(-elements * bits // 8)
    units = ("lanes", "rows") if len(tile) > 1 else ()
    causes: list[DimPadding] = []
    for i, ((dim, size), t, r) in enumerate(zip(order, tiles, rounded, strict=True)):
        if r == size:
            continue
        others = prod(rounded) // r
        smaller = size // t * t
        causes.append(
            DimPadding(
                dim=dim,
                role=_ROLES[i] if i < len(_ROLES) else f"{i + 1}th-minor",
                unit=units[i] if i < len(units) else "elements",
                size=size,
                tile=t,
                rounded=r,
                wasted_bytes=(r - size) * others * bits // 8,
                more_elements=(r - size) * prod(s for j, (_, s) in enumerate(order) if j != i),
                smaller=smaller,
                smaller_saves_bytes=(r - smaller) * others * bits // 8 if smaller else 0,
            )
        )
    return PaddingAdvice(
        value_id=value_id,
        label=label or shape_text,
        shape=shape_text,
        memory_space=lay.memory_space,
        logical_bytes=logical,
        allocated_bytes=allocated_bytes,
        tiled_bytes=tiled,
        tiling=lay.tiling,
        causes=tuple(causes),
        aligned_shape=_aligned(shape, order, rounded),
    )


def _aligned(shape: ArrayShape, order: list[tuple[int | None, int]], rounded: list[int]) -> str:
    """``shape`` with each dim rounded; rounded dims beyond the rank are prepended."""
    dims = list(shape.dims)
    for (dim, _), r in zip(order, rounded, strict=True):
        if dim is not None:
            dims[dim] = r
    extra = [r for (dim, _), r in zip(order, rounded, strict=True) if dim is None]
    while extra and extra[-1] == 1:  # leading 1s the tile does not round stay out
        extra.pop()
    k = len(extra)
    assert shape.layout is not None
    m2m = tuple(d + k for d in shape.layout.minor_to_major) + tuple(range(k - 1, -1, -1))
    new = ArrayShape(
        shape.element_type,
        tuple(reversed(extra)) + tuple(dims),
        (False,) * (k + len(dims)),
        replace(shape.layout, minor_to_major=m2m),
    )
    return str(new)


def advise(info: ValueInfo) -> PaddingAdvice | None:
    """:func:`advise_shape` for a value of a loaded module: its own shape with layout
    (``info.shape``, else its slot's) and its slot size (``info.slot.size``, bytes).
    None when the value has no slot, its shape does not read or has an element type of
    unknown size, or it has no tiling padding. The advice's memory space is the
    value's colour."""
    if info.slot is None:
        return None
    text = info.shape or info.slot.shape
    if try_parse_shape(text) is None:
        return None
    try:
        advice = advise_shape(text, info.slot.size, value_id=info.value.id, label=info.value.label)
    except KeyError:  # an element type without a known size
        return None
    return None if advice is None else replace(advice, memory_space=info.color)


def most_padded_advice(
    infos: Iterable[ValueInfo], count: int, color: int | None = None
) -> list[PaddingAdvice]:
    """Advice for up to ``count`` values with the most tiling padding (bytes: slot
    size minus logical size), most first, then by value id. Over all memory spaces when
    ``color`` is None, else only values of memory space ``color``. Values without tiling
    padding are left out; a slice shared by several values is listed at each."""
    found = []
    for info in infos:
        if color is not None and info.color != color:
            continue
        advice = advise(info)
        if advice is not None:
            found.append(advice)
    found.sort(key=lambda a: (-a.padding_bytes, a.value_id if a.value_id is not None else -1))
    return found[: max(count, 0)]
