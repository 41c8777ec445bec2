"""What if the batch or sequence size changed: compiles of one program at several sizes
(:mod:`hlotop.analysis.fit_sizes` finds each one's size), each figure fitted as
``a + b * size`` (:mod:`hlotop.analysis.linear_fit`), what the fits give at other
sizes, and the largest size that fits a capacity.

The figures fitted, each where every compile has it:

* ``peak_bytes``: XLA's peak (:attr:`hlotop.model.Analysis.peak_bytes`, the sum of the
  dump's ``Live ranges at N (peak)`` list);
* ``required_bytes``: argument + output - alias + temp device bytes, the need the
  capacity analysis measures a program by (:func:`hlotop.analysis.capacity.
  required_bytes`, XLA's lower bound for running an executable in
  ``xla/pjrt/compiled_memory_stats.h``; on TPU of its HBM alone). The largest size
  that fits a capacity is worked out on this figure;
* JAX's ``memory_analysis()`` sizes by their JAX names (``temp_size_in_bytes`` ...) and,
  on CPU and GPU, ``peak_memory_in_bytes`` (:mod:`hlotop.analysis.memory_stats`);
* apart, each memory space's allocation bytes (:attr:`hlotop.model.MemorySpace.
  total_bytes`): on TPU, what grows in VMEM is left out of the need.

What grows with the size: the values live at each compile's XLA peak grouped by keys
(``scope`` by default), as ``hlotop diff`` groups them, each group's bytes fitted; and
the values matched from compile to compile as ``hlotop diff`` matches them
(:func:`hlotop.analysis.diff.match_values`), each value matched in every compile with
its allocated bytes fitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hlotop.analysis.capacity import required_bytes
from hlotop.analysis.diff import match_values
from hlotop.analysis.fit_sizes import Compile, SizeDimension, Sizes, find_sizes
from hlotop.analysis.grouping import group_live_set
from hlotop.analysis.labels import NOT_A_PARAMETER, Labeller
from hlotop.analysis.linear_fit import Largest, Line, Prediction, fit_line, largest_fitting_size
from hlotop.analysis.linear_fit import predict as predict_line
from hlotop.model import ModuleDump, ValueInfo
from hlotop.model.memory_space import HOST_MEMORY_SPACE

FIGURE_PEAK = "peak_bytes"
FIGURE_REQUIRED = "required_bytes"
CAPACITY_FIGURE = FIGURE_REQUIRED  # the figure the largest fitting size is worked out on


def figures_of(module: ModuleDump) -> dict[str, int]:
    """The figures of one compile that are fitted (names in the module's docstring),
    in bytes; a figure the dump cannot give is left out."""
    a = module.analysis
    out: dict[str, int] = {}
    if a.peak_step is not None:
        out[FIGURE_PEAK] = a.peak_bytes
    need = required_bytes(module)
    if need is not None:
        out[FIGURE_REQUIRED] = need
    if a.memory_stats is not None:
        out.update(a.memory_stats.as_dict())
        if a.memory_stats.peak_memory_in_bytes is not None:
            out["peak_memory_in_bytes"] = a.memory_stats.peak_memory_in_bytes
    return out


@dataclass(frozen=True, slots=True)
class GroupFit:
    """A group of the values live at XLA's peak and its bytes fitted over the sizes
    (0 where a compile has no such group)."""

    key: tuple[str, ...]
    line: Line


@dataclass(frozen=True, slots=True)
class SpaceFit:
    """A memory space's allocation bytes (the sizes of its allocations) fitted."""

    color: int
    name: str  # XLA's name for the colour on the platform (HBM, VMEM, default ...)
    line: Line


@dataclass(frozen=True, slots=True)
class ValueFit:
    """A value matched in every compile: its name and shape in the largest and its
    allocated bytes fitted."""

    name: str
    shape: str
    matched_by: tuple[str, ...]  # the key that matched each compile to the next
    line: Line


@dataclass(frozen=True, slots=True)
class SizeFit:
    """Compiles of one program at several sizes, fitted. ``compiles`` and ``sizes`` in
    ascending size (compiles at one size in the order given); ``dimensions``' extents
    in the same order."""

    compiles: tuple[Compile, ...]
    sizes: tuple[int, ...]
    sizes_given: bool
    dimensions: tuple[SizeDimension, ...]
    figures: dict[str, Line]  # figure name -> its line, in figures_of's order
    platform: str  # the first compile's (hlotop.model.memory_space.PLATFORMS)
    spaces: tuple[SpaceFit, ...]  # those every compile has, colours ascending
    keys: tuple[str, ...]
    accounting: str
    groups: tuple[GroupFit, ...]  # the largest growth (b) first, then key
    values: tuple[ValueFit, ...]  # those whose bytes change, the largest growth first

    @property
    def program(self) -> str:
        return self.compiles[0].program

    def growing_elsewhere(self) -> tuple[SpaceFit, ...]:
        """On TPU, the memory spaces the need (:data:`FIGURE_REQUIRED`, HBM alone)
        leaves out whose bytes grow faster with the size than the need does: the
        on-chip memories (VMEM, SMEM ...; host memory is not the device's). While they
        hold what grows, the need grows slowly; once one is full, the compiler places
        values in HBM and the need grows faster than its line. () elsewhere (CPU and
        GPU count every device memory space) and without the need."""
        need = self.figures.get(FIGURE_REQUIRED)
        if self.platform != "tpu" or need is None:
            return ()
        return tuple(
            s
            for s in self.spaces
            if s.color not in (0, HOST_MEMORY_SPACE) and s.line.b > 0 and s.line.b > need.b
        )


def _parameter_name(labeller: Labeller):
    """``name_of((parameter, ShapeIndex))`` for :func:`find_sizes`: the parameter's
    pytree path in ``labeller``'s module, from its value's op_name, or ""."""
    module = labeller.module

    def name_of(key: tuple[int, tuple[int, ...]]) -> str:
        a = module.analysis
        for alloc in module.allocations:
            if (alloc.parameter, tuple(alloc.parameter_shape_index or ())) != key:
                continue
            for slot in alloc.values:
                info = a.by_id.get(slot.value.id)
                if info is not None:
                    name = labeller.label(info, "param")
                    return "" if name == NOT_A_PARAMETER else name
        return ""

    return name_of


def _group_fits(
    compiles: Sequence[Compile],
    sizes: Sequence[int],
    labellers: Sequence[Labeller],
    keys: Sequence[str],
    accounting: str,
) -> tuple[GroupFit, ...]:
    if any(c.module.analysis.peak_step is None for c in compiles):
        return ()
    groupings = [
        group_live_set(c.module, keys, accounting=accounting, labeller=lab)
        for c, lab in zip(compiles, labellers, strict=True)
    ]
    bytes_of = [{row.key: row.bytes for row in g.rows} for g in groupings]
    all_keys = sorted({k for b in bytes_of for k in b})
    fits = [GroupFit(k, fit_line(sizes, [b.get(k, 0) for b in bytes_of])) for k in all_keys]
    fits.sort(key=lambda g: (-g.line.b, g.key))
    return tuple(fits)


def _value_fits(
    compiles: Sequence[Compile], sizes: Sequence[int], labellers: Sequence[Labeller]
) -> tuple[ValueFit, ...]:
    # value id in the compile reached so far -> the chain of its matches
    chains: dict[int, tuple[list[ValueInfo], list[str]]] = {}
    for i in range(len(compiles) - 1):
        old, new = compiles[i].module, compiles[i + 1].module
        pairs = match_values(old, new, labellers[i], labellers[i + 1])
        reached: dict[int, tuple[list[ValueInfo], list[str]]] = {}
        for a, b, key in pairs:
            if a is None or b is None or key is None:
                continue
            before = chains.get(a.value.id) if i else ([a], [])
            if before is not None:  # matched in every compile so far
                reached[b.value.id] = ([*before[0], b], [*before[1], key])
        chains = reached
    fits = []
    for infos, keys in chains.values():
        line = fit_line(sizes, [info.allocated_bytes for info in infos])
        if line.b or len(set(line.bytes)) > 1:
            fits.append(ValueFit(infos[-1].value.label, infos[-1].shape or "?", tuple(keys), line))
    fits.sort(key=lambda v: (-v.line.b, v.name))
    return tuple(fits)


def fit_compiles(
    compiles: Sequence[Compile],
    sizes: Sequence[int] | None = None,
    keys: Sequence[str] = ("scope",),
    accounting: str = "logical",
) -> SizeFit:
    """Fit ``compiles`` (two or more of one program) over their sizes: ``sizes`` (one
    a compile, in the order given) or found from their entry parameters
    (:func:`hlotop.analysis.fit_sizes.find_sizes`). ``keys`` and ``accounting``: how
    the values live at each XLA peak are grouped (:func:`hlotop.analysis.grouping.
    group_live_set`). Reads every module's records (the values are labelled).

    Raises :class:`hlotop.analysis.fit_sizes.SizeError` when the compiles are not of
    one program or their sizes cannot be found; ValueError for an unknown key or
    accounting."""
    labellers = [Labeller(c.module) for c in compiles]
    found: Sizes = find_sizes(compiles, sizes, _parameter_name(labellers[-1]))
    order = sorted(range(len(compiles)), key=lambda i: found.sizes[i])
    ordered = tuple(compiles[i] for i in order)
    labellers = [labellers[i] for i in order]
    size_list = tuple(found.sizes[i] for i in order)
    dimensions = tuple(
        SizeDimension(
            d.parameter, d.shape_index, d.name, d.dimension, tuple(d.extents[i] for i in order)
        )
        for d in found.dimensions
    )
    for labeller in labellers:  # every value is labelled: one pass over the records
        labeller.read_records()
    per_compile = [figures_of(c.module) for c in ordered]
    names = [n for n in per_compile[0] if all(n in f for f in per_compile)]
    figures = {n: fit_line(size_list, [f[n] for f in per_compile]) for n in names}
    spaces = [{s.color: s for s in c.module.analysis.memory_spaces} for c in ordered]
    space_fits = tuple(
        SpaceFit(color, space.name, fit_line(size_list, [s[color].total_bytes for s in spaces]))
        for color, space in sorted(spaces[0].items())
        if all(color in s for s in spaces)
    )
    return SizeFit(
        ordered,
        size_list,
        found.given,
        dimensions,
        figures,
        ordered[0].module.analysis.platform,
        space_fits,
        tuple(keys),
        accounting,
        _group_fits(ordered, size_list, labellers, keys, accounting),
        _value_fits(ordered, size_list, labellers),
    )


def predict(fit: SizeFit, size: int) -> dict[str, Prediction]:
    """Each fitted figure at ``size`` (:func:`hlotop.analysis.linear_fit.predict`)."""
    return {name: predict_line(line, size) for name, line in fit.figures.items()}


def largest(fit: SizeFit, capacity_bytes: int) -> Largest | None:
    """The largest size whose :data:`CAPACITY_FIGURE` is at most ``capacity_bytes``
    (:func:`hlotop.analysis.linear_fit.largest_fitting_size`); None when the compiles
    do not give that figure (no allocations)."""
    line = fit.figures.get(CAPACITY_FIGURE)
    return None if line is None else largest_fitting_size(line, capacity_bytes)
