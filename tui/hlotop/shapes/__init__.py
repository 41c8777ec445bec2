"""Shapes and layouts as XLA prints them (``f32[8,128]{1,0:T(8,128)S(1)}``): the value
types (:mod:`hlotop.shapes.shape`), their logical byte sizes, and the one grammar that
reads them (:mod:`hlotop.shapes.grammar`). A leaf: the model and the parser use it, it
uses neither."""

from hlotop.shapes.grammar import (
    parse_shape,
    parse_shape_prefix,
    plain_shape_text,
    try_parse_shape,
    without_layouts,
)
from hlotop.shapes.shape import (
    POINTER_BYTES,
    ArrayShape,
    BufferShape,
    Layout,
    Shape,
    Tile,
    TupleShape,
    subshape,
)

shape_of = try_parse_shape  # shape text -> Shape, or None if it does not read (cached)

__all__ = [
    "POINTER_BYTES",
    "ArrayShape",
    "BufferShape",
    "Layout",
    "Shape",
    "Tile",
    "TupleShape",
    "parse_shape",
    "parse_shape_prefix",
    "plain_shape_text",
    "shape_of",
    "subshape",
    "try_parse_shape",
    "without_layouts",
]
