"""Grammar of shapes, layouts and ShapeIndexes (``ShapeUtil::HumanString[WithLayout]``,
``Layout::Print``, ``ShapeIndex::ToString``; FORMATS.md section 4).

This is the one place where the dump's structure really nests (tuples of tuples,
``P(<shape>)`` inside a layout), so it is fine-grained parsy. Shapes are kept as text in
the model and parsed on demand through :func:`parse_shape`, which caches by text:
a large dump repeats a few hundred distinct shapes many thousands of times.
"""

from __future__ import annotations

import re
from functools import lru_cache

from parsy import ParseError, Parser, alt, forward_declaration, regex, seq, string

from hlotop.shapes.shape import ArrayShape, BufferShape, Layout, Shape, Tile, TupleShape

integer = regex(r"\d+").map(int).desc("an integer")

shape_index: Parser = (
    (string("{") >> integer.sep_by(string(",")) << string("}"))
    .map(tuple)
    .desc("a ShapeIndex like {} or {0,1}")
)

element_type = regex(r"[a-z][a-z0-9]*").desc("an element type like f32")

_dim = alt(
    regex(r"<=(\d+)", group=1).map(lambda d: (int(d), True)),
    string("?").result((0, True)),
    integer.map(lambda d: (d, False)),
).desc("a dimension")

_tile_dim = alt(string("*").result(-1), integer)
_tile = (string("(") >> _tile_dim.sep_by(string(",")) << string(")")).map(
    lambda ds: Tile(tuple(ds))
)

_shape = forward_declaration()

# Layout attributes, in Layout::Print's order. Each yields (key, value).
_attribute = alt(
    (string("T") >> _tile.at_least(1)).map(lambda ts: ("T", tuple(ts))),
    regex(r"S\((\d+)\)", group=1).map(lambda s: ("S", int(s))),
    regex(r"E\((\d+)\)", group=1).map(lambda e: ("E", int(e))),
    (string("P(") >> _shape << string(")")).map(lambda s: ("P", "P(…)")),
    regex(r"SC(\(\d+:[\d,]*\))+").map(lambda t: ("other", t)),
    regex(r"(D|L|#|\*|M)\([^()]*\)").map(lambda t: ("other", t)),
).desc("a layout attribute like T(8,128) or S(1)")


def _make_layout(minor_to_major, attributes) -> Layout:
    tiles: tuple = ()
    memory_space = 0
    bits = None
    other: list[str] = []
    for key, value in attributes or ():
        if key == "T":
            tiles = value
        elif key == "S":
            memory_space = value
        elif key == "E":
            bits = value
        else:
            other.append(value)
    return Layout(tuple(minor_to_major), tiles, memory_space, bits, tuple(other))


layout: Parser = seq(
    string("{") >> integer.sep_by(string(",")),
    (string(":") >> _attribute.many()).optional(),
).combine(_make_layout) << string("}").desc("'}' closing the layout")


def _make_array(etype, dims, lay) -> ArrayShape:
    return ArrayShape(etype, tuple(d for d, _ in dims), tuple(dyn for _, dyn in dims), lay)


array_shape: Parser = seq(
    element_type,
    string("[") >> _dim.sep_by(string(",")) << string("]"),
    layout.optional(),
).combine(_make_array)

_tuple_element = regex(r"/\*index=\d+\*/").optional() >> _shape
tuple_shape: Parser = (
    (string("(") >> _tuple_element.sep_by(string(", ")) << string(")"))
    .map(lambda es: TupleShape(tuple(es)))
    .desc("a tuple shape")
)

buffer_shape: Parser = (string("b(") >> _shape << string(")")).map(BufferShape)

_shape.become(alt(tuple_shape, buffer_shape, array_shape).desc("a shape like f32[8,128]{1,0}"))
shape: Parser = _shape

_SIMPLE_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([0-9,]*)\](?:\{([0-9,]*)\})?\Z")


_BRACKETS = re.compile(r"[()\[\]{}]|, ")
LAYOUT_RE = r"\{[^{}]*\}"  # a layout as printed: {1,0}, {1,0:T(8,128)S(1)}
INDEX_COMMENT_RE = r"/\*index=\d+\*/"  # printed before every fifth element of a tuple
_INDEX_COMMENT = re.compile(INDEX_COMMENT_RE)
_LAYOUTS = re.compile(LAYOUT_RE)
_LAYOUTS_AND_COMMENTS = re.compile(f"{LAYOUT_RE}|{INDEX_COMMENT_RE}")


def without_layouts(text: str) -> str:
    """``text`` (one shape or more, as XLA prints them) without their layouts:
    ``f32[8,128]{1,0:T(8,128)}`` -> ``f32[8,128]``; a tuple's index comments stay."""
    return _LAYOUTS.sub("", text)


def plain_shape_text(text: str) -> str:
    """``text`` without its layouts and a tuple's index comments (``/*index=5*/``):
    what two prints of one shape may differ in. ``(f32[2]{0}, /*index=5*/s32[])`` ->
    ``(f32[2], s32[])``."""
    return _LAYOUTS_AND_COMMENTS.sub("", text)


_OPEN, _CLOSE = "([{", ")]}"


# A tuple inside a tuple: an element that starts with "(" (or a buffer of one, "b((").
# Without one, ", " stands only between elements: a shape's dims, layout, tiling and
# index comments have no space.
_NESTED = re.compile(r"(?:^|, |\()\(")


def _tuple_elements(body: str) -> list[str] | None:
    """The texts of a tuple's elements (``body`` is the text between its parentheses),
    split at the ", " that stand outside any bracket; None if the brackets do not
    balance. Without a tuple inside, split by ``str.split`` (a 12 000-element while
    loop state took 40 ms token by token)."""
    if _NESTED.search(body) is None and all(
        body.count(a) == body.count(b) for a, b in zip(_OPEN, _CLOSE, strict=True)
    ):
        return body.split(", ") if body else []
    elements: list[str] = []
    depth = start = 0
    for m in _BRACKETS.finditer(body):
        token = m.group()
        if token == ", ":
            if depth == 0:
                elements.append(body[start : m.start()])
                start = m.end()
        elif token in _OPEN:
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                return None
    if depth:
        return None
    if body:
        elements.append(body[start:])
    return elements


def _without_index_comment(element: str) -> str:
    """A tuple element without the ``/*index=5*/`` XLA prints before every fifth."""
    m = _INDEX_COMMENT.match(element)
    return element[m.end() :] if m else element


@lru_cache(maxsize=65536)
def parse_shape(text: str) -> Shape:
    """Parse a whole shape, with or without layout: ``"f32[8,128]{1,0:T(8,128)}"`` ->
    :class:`ArrayShape`; ``"(f32[1], u32[])"`` -> :class:`TupleShape`.

    Plain arrays are read by one match, and a tuple is split into its elements, each
    parsed (and cached) on its own: a big model's while-loop state is one tuple of
    thousands of elements with a few dozen distinct texts, which the character-level
    grammar (:data:`shape`) took seconds to read. Everything else, and what these
    shortcuts cannot split, goes to the grammar; a test checks they agree on every
    shape of every sample dump.

    Raises ``parsy.ParseError`` (with the column) when ``text`` is not a shape.
    """
    m = _SIMPLE_ARRAY.match(text)
    if m:  # the common case, without a parser per character
        dims = tuple(int(d) for d in m.group(2).split(",")) if m.group(2) else ()
        lay = None
        if m.group(3) is not None:
            m2m = tuple(int(d) for d in m.group(3).split(",")) if m.group(3) else ()
            lay = Layout(m2m)
        return ArrayShape(m.group(1), dims, (False,) * len(dims), lay)
    if text.startswith("(") and text.endswith(")"):
        elements = _tuple_elements(text[1:-1])
        if elements is not None:
            return TupleShape(tuple(parse_shape(_without_index_comment(e)) for e in elements))
    return shape.parse(text)


def parse_shape_prefix(text: str) -> tuple[Shape, str]:
    """Parse the shape at the start of ``text`` and return it with the rest of the text.

    Used for ``%name = <shape> opcode(...)``. Raises ``parsy.ParseError``.
    """
    return shape.parse_partial(text)


def try_parse_shape(text: str) -> Shape | None:
    """:func:`parse_shape`, or None when ``text`` is not a shape."""
    try:
        return parse_shape(text)
    except ParseError:
        return None
