"""The size (batch, sequence length) of each of several compiles of one program, found
from their entry parameters' shapes, as the allocation lines print them
(``BufferAllocation::ToString``: ``parameter N, shape |f32[8,128]| at ShapeIndex {}``).

The compiles must be of one program: the same program name (the caller's; the
command takes :func:`hlotop.loading.directory.program_of`'s, the module name less the
number the run gave it), and the same entry parameters (number and ShapeIndex) with the same
element types and ranks. A dimension whose extent differs between the compiles is a
*varying dimension*; every one of them must change in proportion (batch 8 -> 16 and a
flattened batch x sequence 1024 -> 2048), and the size of each compile is the extent
of the smallest of them (8 -> 16 there). Sizes given by the user (``--sizes``) replace
the found ones; the compiles must still be of one program.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from hlotop.model import ModuleDump, shape_of
from hlotop.shapes import ArrayShape


@dataclass(frozen=True, slots=True)
class Compile:
    """One compile: the path it was named by, its module and its program's name."""

    path: str
    module: ModuleDump
    program: str


class SizeError(ValueError):
    """The compiles are not of one program, or no one size tells them apart."""


@dataclass(frozen=True, slots=True)
class SizeDimension:
    """A dimension of an entry parameter whose extent differs between the compiles."""

    parameter: int
    shape_index: tuple[int, ...]
    name: str  # the parameter's pytree path where the dump says it, else ""
    dimension: int  # which dimension of its shape (0: the first printed)
    extents: tuple[int, ...]  # in each compile, in the order given

    def describe(self) -> str:
        """``parameter 64 (batch/inputs) dim 0``."""
        index = "{" + ",".join(map(str, self.shape_index)) + "}" if self.shape_index else ""
        name = f" ({self.name})" if self.name else ""
        return f"parameter {self.parameter}{index}{name} dim {self.dimension}"


@dataclass(frozen=True, slots=True)
class Sizes:
    """The size of each compile (in the order given) and where it came from: found
    (``given`` false) from ``dimensions``, or given; ``dimensions``: every varying
    dimension when they change in proportion, else ()."""

    sizes: tuple[int, ...]
    given: bool
    dimensions: tuple[SizeDimension, ...]


Parameters = dict[tuple[int, tuple[int, ...]], str]  # (number, ShapeIndex) -> shape text


def entry_parameters(module: ModuleDump) -> Parameters:
    """Each entry parameter's shape (without layout) by (parameter number, ShapeIndex),
    from the allocation lines. Raises nothing."""
    out: Parameters = {}
    for alloc in module.allocations:
        if alloc.parameter is not None and alloc.parameter_shape:
            out[(alloc.parameter, tuple(alloc.parameter_shape_index or ()))] = alloc.parameter_shape
    return out


def _where(key: tuple[int, tuple[int, ...]]) -> str:
    number, index = key
    return f"parameter {number}" + ("{" + ",".join(map(str, index)) + "}" if index else "")


def _check_one_program(compiles: Sequence[Compile], params: Sequence[Parameters]) -> None:
    one = compiles[0]
    for c in compiles[1:]:
        if c.program != one.program:
            raise SizeError(
                f"compiles of different programs: {one.path} is {one.program}, "
                f"{c.path} is {c.program}"
            )
    first = params[0]
    for c, other in zip(compiles[1:], params[1:], strict=True):
        only = sorted(first.keys() ^ other.keys())
        if only:
            side = one.path if only[0] in first else c.path
            raise SizeError(
                f"compiles of different programs: {_where(only[0])} is only in {side} "
                f"({len(first)} entry parameters against {len(other)})"
            )
        for key, text in first.items():
            a, b = shape_of(text), shape_of(other[key])
            kinds = [
                (s.element_type, len(s.dims)) if isinstance(s, ArrayShape) else str(s)
                for s in (a, b)
            ]
            if kinds[0] != kinds[1]:
                raise SizeError(
                    f"compiles of different programs: {_where(key)} is {text} in "
                    f"{one.path} but {other[key]} in {c.path}"
                )


def _varying(params: Sequence[Parameters], name_of: Callable) -> list[SizeDimension]:
    out = []
    for key in sorted(params[0]):
        shapes = [shape_of(p[key]) for p in params]
        if not all(isinstance(s, ArrayShape) for s in shapes):
            continue
        dims = [s.dims for s in shapes if isinstance(s, ArrayShape)]
        for d in range(len(dims[0])):
            extents = tuple(x[d] for x in dims)
            if len(set(extents)) > 1:
                out.append(SizeDimension(key[0], key[1], name_of(key), d, extents))
    return out


def _proportional(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    if 0 in a or 0 in b:
        return a == b
    return all(Fraction(x, a[0]) == Fraction(y, b[0]) for x, y in zip(a, b, strict=True))


def find_sizes(
    compiles: Sequence[Compile],
    given: Sequence[int] | None = None,
    name_of: Callable[[tuple[int, tuple[int, ...]]], str] | None = None,
) -> Sizes:
    """The size of each of ``compiles`` (two or more; see the module's docstring):
    ``given`` (one positive integer a compile) if given, else found from
    the varying dimensions. ``name_of((parameter, ShapeIndex))``: a
    parameter's name for the messages and :class:`SizeDimension` (default: none).

    Raises SizeError, its message naming the compiles and parameters: compiles of
    different programs; ``given`` of another length or not positive; no varying
    dimension, or varying dimensions out of proportion (without ``given``); fewer than
    two distinct sizes."""
    if len(compiles) < 2:
        raise SizeError("give two compiles at least")
    params = [entry_parameters(c.module) for c in compiles]
    _check_one_program(compiles, params)
    varying = _varying(params, name_of or (lambda key: ""))
    base = min(varying, key=lambda v: (min(v.extents), v.parameter, v.dimension), default=None)
    apart = next((v for v in varying if base and not _proportional(base.extents, v.extents)), None)
    dimensions = tuple(varying) if base is not None and apart is None else ()
    if given is not None:
        if len(given) != len(compiles):
            raise SizeError(f"{len(given)} sizes given for {len(compiles)} compiles")
        if any(s < 1 for s in given):
            raise SizeError(f"sizes are positive integers: {', '.join(map(str, given))}")
        sizes = tuple(given)
    elif base is None:
        raise SizeError(
            "no entry parameter's shape differs between the compiles, so no size tells "
            "them apart; give each compile's size with --sizes"
        )
    elif apart is not None:
        raise SizeError(
            f"two dimensions change out of proportion: {base.describe()} is "
            f"{', '.join(map(str, base.extents))} and {apart.describe()} is "
            f"{', '.join(map(str, apart.extents))}; vary one size at a time, or give "
            "each compile's size with --sizes"
        )
    else:
        sizes = base.extents
    if len(set(sizes)) < 2:
        raise SizeError(f"every compile is at size {sizes[0]}: a fit needs two sizes at least")
    return Sizes(sizes, given is not None, dimensions)
