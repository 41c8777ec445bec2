"""A figure in bytes as a straight line of the size, ``a + b * size``, fitted by least
squares over compiles at a few sizes; what it predicts at another size, and the
largest size whose figure stays within a capacity.

The arithmetic is exact (:class:`fractions.Fraction`): the sizes and bytes are
integers, so the least-squares line through them has rational coefficients, and a
figure that does grow by the same number of bytes per unit of size gives that number
exactly, its residuals 0 and its largest fitting size without a rounding error.

Linearity. Two sizes give a line through both points: exact, and no check of
whether the figure is linear at all. Three or more distinct sizes check it: each
compile's *relative residual* is how far its figure lies from the line, over its
figure (``|bytes - (a + b * size)| / bytes``). When the largest of them is above
:data:`LINEARITY_THRESHOLD` (0.1%) the fit is *not linear* and is not extrapolated: a
size outside the compiled ones is refused; a size between them is read off the
straight segment between the two compiles around it (which, unlike the line, goes
through them), with a warning.

Why 0.1%, measured on real compiles (a 1-block GPT train step at batch 2, 4, 6, 8, 12
and 16, on CPU and on a TPU v5e: ``sample_dumps/proof/batch``): XLA's figures are not
one line of the batch but a few, each exact. Within one compilation plan every
figure grows by the same bytes per unit of batch (residual 0 bytes: every buffer
that grows is a multiple of the batch); between plans (on CPU from batch 8 on, on the
TPU from 6 on) the figures step and the slope changes. A line over compiles of two
plans leaves small residuals (0.25% at the least: CPU batch 2, 12, 16) yet errs
several times more between them (5.5% at batch 6 there): a residual is a symptom, not
a bound, so any residual above what does not scale with the size (allocation
alignment, TPU tile padding of small arrays) means mixed plans. 0.1% leaves room for
that and is below every mixed fit of those series; a fit within it predicted each
held-out compile between its sizes exactly. Outside its sizes no check sees a change
of plan at a size not compiled: extrapolation is the line's guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import ceil, floor

LINEARITY_THRESHOLD = Fraction(1, 1000)  # the largest relative residual of a linear fit

COMPILED = "compiled"  # a size one of the compiles has: its own figure
INTERPOLATED = "interpolated"  # between the compiled sizes
EXTRAPOLATED = "extrapolated"  # outside them
SOURCES = (COMPILED, INTERPOLATED, EXTRAPOLATED)


@dataclass(frozen=True, slots=True)
class Line:
    """A figure at each compiled size (``sizes`` and ``bytes``, in the same order) and
    the least-squares line ``a + b * size`` through them (``a`` in bytes, ``b`` in
    bytes per unit of size)."""

    sizes: tuple[int, ...]
    bytes: tuple[int, ...]
    a: Fraction
    b: Fraction

    def value_at(self, size: int) -> Fraction:
        """The line's figure at ``size``, in bytes (exact)."""
        return self.a + self.b * size

    @property
    def residuals(self) -> tuple[Fraction, ...]:
        """Each compile's figure less the line's at its size, in bytes."""
        return tuple(y - self.value_at(s) for s, y in zip(self.sizes, self.bytes, strict=True))

    @property
    def relative_residuals(self) -> tuple[Fraction, ...]:
        """Each residual over its compile's figure (a figure of 0 bytes: over the
        largest figure of the series; all 0: 0)."""
        largest = max((abs(y) for y in self.bytes), default=0)
        return tuple(
            abs(r) / (abs(y) or largest) if (y or largest) else Fraction(0)
            for r, y in zip(self.residuals, self.bytes, strict=True)
        )

    @property
    def max_relative_residual(self) -> Fraction:
        return max(self.relative_residuals, default=Fraction(0))

    @property
    def checked(self) -> bool:
        """Whether the compiles check the line (three distinct sizes or more)."""
        return len(set(self.sizes)) >= 3

    @property
    def linear(self) -> bool:
        """Unchecked (two sizes), or no compile further from the line than
        :data:`LINEARITY_THRESHOLD` of its figure."""
        return not self.checked or self.max_relative_residual <= LINEARITY_THRESHOLD

    def source(self, size: int) -> str:
        """How a figure at ``size`` is had: one of :data:`SOURCES`."""
        return source(self.sizes, size)


def source(sizes: Sequence[int], size: int) -> str:
    """How a figure at ``size`` is had from compiles at ``sizes``: one of
    :data:`SOURCES`."""
    if size in sizes:
        return COMPILED
    return INTERPOLATED if min(sizes) < size < max(sizes) else EXTRAPOLATED


def fit_line(sizes: Sequence[int], values: Sequence[int]) -> Line:
    """The least-squares line through ``(sizes[i], values[i])`` (sizes: positive
    integers; values: bytes). Raises ValueError when the lengths differ or there are
    fewer than two distinct sizes (no line)."""
    if len(sizes) != len(values):
        raise ValueError(f"{len(sizes)} sizes for {len(values)} figures")
    if len(set(sizes)) < 2:
        raise ValueError("a line needs compiles at two sizes at least")
    n = len(sizes)
    sx, sy = sum(sizes), sum(values)
    sxx = sum(s * s for s in sizes)
    sxy = sum(s * y for s, y in zip(sizes, values, strict=True))
    b = Fraction(n * sxy - sx * sy, n * sxx - sx * sx)
    a = (sy - b * sx) / n
    return Line(tuple(sizes), tuple(values), a, b)


@dataclass(frozen=True, slots=True)
class Prediction:
    """A figure at ``size``: its bytes (a compile's own at a compiled size, else the
    line's, rounded to the byte), or None with the reason it is ``refused``."""

    size: int
    source: str  # one of SOURCES
    bytes: int | None
    refused: str | None = None
    warning: str | None = None  # given, but by a line that is not linear


def _round(x: Fraction) -> int:
    return floor(x + Fraction(1, 2))


def not_linear(line: Line) -> str:
    """Why ``line`` is not extrapolated, in words."""
    return (
        f"not linear: a compile lies {float(line.max_relative_residual):.2%} off the line, "
        f"more than {float(LINEARITY_THRESHOLD):.1%}"
    )


def _compiled(line: Line) -> list[tuple[int, int]]:
    """(size, figure) of each compiled size, ascending (the first compile of a size)."""
    first: dict[int, int] = {}
    for size, y in zip(line.sizes, line.bytes, strict=True):
        first.setdefault(size, y)
    return sorted(first.items())


def _between(line: Line, size: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The compiled (size, figure) just below ``size`` and just above it (``size``
    strictly between the compiled sizes)."""
    points = _compiled(line)
    k = next(k for k, (s, _) in enumerate(points) if s > size)
    return points[k - 1], points[k]


def _on_segment(low: tuple[int, int], high: tuple[int, int], size: int) -> Fraction:
    """The figure at ``size`` on the straight segment between two compiles."""
    (s0, y0), (s1, y1) = low, high
    return y0 + Fraction(y1 - y0, s1 - s0) * (size - s0)


def predict(line: Line, size: int) -> Prediction:
    """``line``'s figure at ``size`` (a positive integer). A compiled size gives its
    compile's figure (the first, if several); another size the line's, rounded to the
    byte. When the line is not linear: refused outside the compiled sizes; between
    them read off the segment between the two compiles around it (nearer than a line
    that misses them), with a warning. Refused where the line falls below 0 bytes.
    Raises nothing."""
    source = line.source(size)
    if source == COMPILED:
        return Prediction(size, source, line.bytes[line.sizes.index(size)])
    if line.linear:
        value = line.value_at(size)
        if value < 0:
            return Prediction(size, source, None, "the line falls below 0 bytes here")
        return Prediction(size, source, _round(value))
    if source == EXTRAPOLATED:
        low, high = min(line.sizes), max(line.sizes)
        refused = f"{not_linear(line)}; not extrapolated outside {low}..{high}"
        return Prediction(size, source, None, refused)
    below, above = _between(line, size)
    warning = f"{not_linear(line)}; read off the compiles at {below[0]} and {above[0]}"
    return Prediction(size, source, _round(_on_segment(below, above, size)), None, warning)


@dataclass(frozen=True, slots=True)
class Largest:
    """The largest size whose figure is at most ``capacity_bytes``: ``size`` (None
    when there is none to give) with its figure ``bytes`` and the next size's
    ``next_bytes`` (over the capacity), how it was had (``source``, one of
    :data:`SOURCES`) and, where the size is None or in doubt, why (``note``)."""

    capacity_bytes: int
    size: int | None
    source: str | None
    bytes: int | None = None
    next_bytes: int | None = None
    note: str | None = None


def _figure(line: Line, size: int, rounding) -> int:
    """A compiled size's own figure, else the line's rounded by ``rounding``."""
    if size in line.sizes:
        return line.bytes[line.sizes.index(size)]
    return rounding(line.value_at(size))


def _largest_between_compiles(line: Line, capacity_bytes: int) -> Largest:
    """:func:`largest_fitting_size` of a line that is not linear: read off the segment
    between the largest compile that fits and the next, which is over."""
    low, high = min(line.sizes), max(line.sizes)
    points = _compiled(line)
    fitting = [p for p in points if p[1] <= capacity_bytes]
    over = [p for p in points if p[1] > capacity_bytes]
    if not over:
        note = (
            f"none given: {not_linear(line)}; not extrapolated outside {low}..{high}; "
            f"the largest compiled size, {high}, fits"
        )
        return Largest(capacity_bytes, None, EXTRAPOLATED, note=note)
    if not fitting:
        note = (
            f"none given: {not_linear(line)}; not extrapolated outside {low}..{high}; "
            f"the smallest compiled size, {low}, is over"
        )
        return Largest(capacity_bytes, None, EXTRAPOLATED, note=note)
    below, above = fitting[-1], over[0]
    if below[0] > above[0]:
        note = (
            f"none given: {not_linear(line)}, and the compiles do not grow steadily: "
            f"{below[0]} fits but {above[0]} is over"
        )
        return Largest(capacity_bytes, None, None, note=note)
    (s0, y0), (s1, y1) = below, above
    size = s0 + floor(Fraction(capacity_bytes - y0) * (s1 - s0) / (y1 - y0))
    size = min(max(size, s0), s1 - 1)

    def figure(s: int, rounding) -> int:
        return dict(points)[s] if s in (s0, s1) else rounding(_on_segment(below, above, s))

    return Largest(
        capacity_bytes,
        size,
        COMPILED if size == s0 else INTERPOLATED,
        figure(size, floor),
        figure(size + 1, ceil),
        f"{not_linear(line)}; read off the compiles at {s0} and {s1}",
    )


def largest_fitting_size(line: Line, capacity_bytes: int) -> Largest:
    """The largest integer size ``s >= 1`` whose figure is at most ``capacity_bytes``,
    by ``line``: the largest with ``a + b * s <= capacity_bytes`` (exact arithmetic),
    then held to what the compiles say, where they agree with each other (a compiled
    size that fits is never above the answer, one that is over never at or below it).
    ``bytes`` is the figure at the answer (the line's rounded down, so never over) and
    ``next_bytes`` at the next size (rounded up, so over); a compiled size gives its
    own. None as the size when the figure does not grow with the size (``b <= 0``:
    every size fits, or none) and when even size 1 is over. A line that is not linear
    gives the size read off the segment between the largest compile that fits and the
    next compile (over), with a warning; None when the answer lies outside the
    compiled sizes (the note says which end) or the compiles do not grow steadily.
    Raises nothing."""
    if not line.linear:
        return _largest_between_compiles(line, capacity_bytes)
    high = max(line.sizes)
    if line.b <= 0:
        fits = line.value_at(high) <= capacity_bytes
        said = "every size fits" if fits else "no size fits"
        note = f"{said}: the figure does not grow with the size"
        return Largest(capacity_bytes, None, None, note=note)
    size = floor((capacity_bytes - line.a) / line.b)
    fitting = [s for s, y in zip(line.sizes, line.bytes, strict=True) if y <= capacity_bytes]
    over = [s for s, y in zip(line.sizes, line.bytes, strict=True) if y > capacity_bytes]
    if not (fitting and over and max(fitting) > min(over)):  # the compiles agree
        if fitting:
            size = max(size, max(fitting))
        if over:
            size = min(size, min(over) - 1)
    if size < 1:
        next_bytes = _figure(line, 1, ceil)
        return Largest(
            capacity_bytes,
            None,
            None,
            next_bytes=next_bytes,
            note="no size fits: even size 1 is over",
        )
    return Largest(
        capacity_bytes,
        size,
        line.source(size),
        _figure(line, size, floor),
        _figure(line, size + 1, ceil),
    )
