"""The one table of ``hlotop fit --json``'s document, as :mod:`hlotop.report.json_table`
is ``hlotop --json``'s: for each kind of object its keys, each with the expression that
gets its value, its JSON type and what it means. The document is built from it
(:func:`fit_json`), and so is its JSON Schema, shipped in the package as
``fit.schema.json`` beside this module (a test checks that the file is what the table
makes, and validates documents against it). After changing the table::

    python -m hlotop.report.json_schema --write

A key's ``get`` is a Python expression over ``x`` (the object of that kind) and the
names of :data:`NAMES`. Bytes are integers; a line's coefficients and residuals are
numbers (``a`` in bytes, ``b`` in bytes per unit of size).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hlotop.analysis.diff import MATCH_KEYS
from hlotop.analysis.fit import CAPACITY_FIGURE, FIGURE_PEAK, FIGURE_REQUIRED, SizeFit
from hlotop.analysis.grouping import ACCOUNTINGS, GROUP_KEYS
from hlotop.analysis.linear_fit import LINEARITY_THRESHOLD, SOURCES, Largest, Prediction, source
from hlotop.model import MemoryStats
from hlotop.report.json_build import DocumentBuilder, write_document
from hlotop.report.json_table import (
    Bool,
    Enum,
    Int,
    Key,
    Kind,
    List,
    Map,
    Null,
    Number,
    Obj,
    Str,
)

MEMORY_STATS = (*MemoryStats.FIELDS, "peak_memory_in_bytes")  # JAX's names


@dataclass(frozen=True, slots=True)
class FitReport:
    """What ``hlotop fit`` reports: the fit, each ``--at`` size's figures (in the order
    asked) and, with ``--capacity``, the largest fitting size and the capacity's
    label."""

    fit: SizeFit
    at: tuple[tuple[int, dict[str, Prediction]], ...] = ()
    capacity: tuple[Largest, str] | None = None


def _residuals(line) -> list[float]:
    return [float(r) for r in line.residuals]


NAMES: dict[str, Any] = {
    "FIGURE_PEAK": FIGURE_PEAK,
    "FIGURE_REQUIRED": FIGURE_REQUIRED,
    "CAPACITY_FIGURE": CAPACITY_FIGURE,
    "MEMORY_STATS": MEMORY_STATS,
    "LINEARITY_THRESHOLD": LINEARITY_THRESHOLD,
    "residuals": _residuals,
    "source": source,
}

STATS_NAME = Enum(MEMORY_STATS)
LINE_KEYS = (
    Key("a", Number(), "float(x.line.a)", "the line's bytes at size 0 (a)"),
    Key("b", Number(), "float(x.line.b)", "the line's bytes per unit of size (b)"),
    Key(
        "max_relative_residual",
        Number(),
        "float(x.line.max_relative_residual)",
        "the largest |bytes - (a + b * size)| / bytes over the compiles",
    ),
    Key("bytes", List(Int()), "list(x.line.bytes)", "the bytes at each compiled size"),
)

KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "document",
            "hlotop fit --json: compiles of one program at several sizes, each figure "
            "fitted as a + b * size.",
            (Key("fit", Obj("fit"), "x", "the fit"),),
        ),
        Kind(
            "fit",
            "The compiles, their sizes, the fitted figures and what they give.",
            (
                Key("program", Str(), "x.fit.program", "the program the compiles compile"),
                Key(
                    "compiles",
                    List(Obj("compile")),
                    "zip(x.fit.compiles, x.fit.sizes)",
                    "the compiles, in ascending size",
                ),
                Key("sizes", List(Int()), "list(x.fit.sizes)", "each compile's size, ascending"),
                Key(
                    "sizes_given",
                    Bool(),
                    "x.fit.sizes_given",
                    "whether the sizes were given (--sizes) rather than found",
                ),
                Key(
                    "size_dimensions",
                    List(Obj("size_dimension")),
                    "x.fit.dimensions",
                    "the entry parameters' dimensions that change with the size (in "
                    "proportion; the smallest is the size); [] when none do so",
                ),
                Key(
                    "linearity_threshold",
                    Number(),
                    "float(LINEARITY_THRESHOLD)",
                    "a line with a larger max_relative_residual (3 sizes or more) is not "
                    "linear and not extrapolated",
                ),
                Key(
                    "peak_bytes",
                    Null(Obj("line")),
                    "x.fit.figures.get(FIGURE_PEAK)",
                    "XLA's peak fitted; null without live ranges",
                ),
                Key(
                    "required_bytes",
                    Null(Obj("line")),
                    "x.fit.figures.get(FIGURE_REQUIRED)",
                    "argument + output - alias + temp device bytes (on TPU, HBM) fitted: "
                    "what --capacity measures; null without allocations",
                ),
                Key(
                    "memory_stats",
                    Map(Obj("line"), keys=STATS_NAME),
                    "{k: v for k, v in x.fit.figures.items() if k in MEMORY_STATS}",
                    "JAX's memory_analysis() sizes fitted, by JAX's names",
                ),
                Key(
                    "memory_spaces",
                    List(Obj("space_fit")),
                    "x.fit.spaces",
                    "each memory space's allocation bytes fitted, colours ascending",
                ),
                Key("at", List(Obj("at")), "x.at", "the figures at each --at size, as asked"),
                Key(
                    "capacity",
                    Null(Obj("capacity")),
                    "x.capacity",
                    "the largest size that fits --capacity, or null",
                ),
                Key(
                    "largest_fitting_size",
                    Null(Int()),
                    "x.capacity[0].size if x.capacity else None",
                    "capacity.largest_fitting_size, or null",
                ),
                Key(
                    "groups",
                    Obj("groups"),
                    "x.fit",
                    "the values live at each XLA peak, grouped, each group's bytes fitted",
                ),
                Key(
                    "values",
                    List(Obj("value_fit")),
                    "x.fit.values",
                    "the values matched in every compile whose allocated bytes change, "
                    "each fitted, the largest growth (b) first",
                ),
            ),
        ),
        Kind(
            "compile",
            "One compile.",
            (
                Key("path", Str(), "x[0].path", "the path it was named by"),
                Key("module", Str(), "x[0].module.name", "its module's name"),
                Key("size", Int(), "x[1]", "its size"),
            ),
        ),
        Kind(
            "size_dimension",
            "A dimension of an entry parameter that changes with the size.",
            (
                Key("parameter", Int(), "x.parameter", "the entry parameter's number"),
                Key("shape_index", List(Int()), "list(x.shape_index)", "its ShapeIndex"),
                Key("name", Str(), "x.name", "its pytree path, or '' where the dump has none"),
                Key("dimension", Int(), "x.dimension", "which dimension (0: the first printed)"),
                Key("extents", List(Int()), "list(x.extents)", "its extent in each compile"),
            ),
        ),
        Kind(
            "line",
            "A figure fitted as a + b * size by least squares over the compiles.",
            (
                *(Key(k.name, k.type, k.get.replace("x.line.", "x."), k.doc) for k in LINE_KEYS),
                Key(
                    "residuals",
                    List(Number()),
                    "residuals(x)",
                    "bytes - (a + b * size) at each compiled size",
                ),
                Key(
                    "checked",
                    Bool(),
                    "x.checked",
                    "whether the compiles check the line: 3 distinct sizes or more (with 2 "
                    "the line is exact and unchecked)",
                ),
                Key(
                    "linear",
                    Bool(),
                    "x.linear",
                    "unchecked, or max_relative_residual within linearity_threshold",
                ),
            ),
        ),
        Kind(
            "at",
            "The figures at one size asked for (--at).",
            (
                Key("size", Int(), "x[0]", "the size"),
                Key(
                    "source",
                    Enum(SOURCES),
                    "source(sizes, x[0])",
                    "compiled (a compile's own figures), interpolated or extrapolated",
                ),
                Key(
                    "peak_bytes",
                    Null(Int()),
                    "x[1][FIGURE_PEAK].bytes if FIGURE_PEAK in x[1] else None",
                    "XLA's peak, or null (not fitted, or refused: see notes)",
                ),
                Key(
                    "required_bytes",
                    Null(Int()),
                    "x[1][FIGURE_REQUIRED].bytes if FIGURE_REQUIRED in x[1] else None",
                    "argument + output - alias + temp, or null",
                ),
                Key(
                    "memory_stats",
                    Map(Null(Int()), keys=STATS_NAME),
                    "{k: p.bytes for k, p in x[1].items() if k in MEMORY_STATS}",
                    "JAX's sizes, by JAX's names (null: refused)",
                ),
                Key(
                    "notes",
                    Map(Str()),
                    "{k: p.refused or p.warning for k, p in x[1].items() if p.refused or p.warning}",
                    "figure -> why it is refused (null) or in doubt",
                ),
            ),
        ),
        Kind(
            "capacity",
            "The largest size whose required_bytes fits a capacity.",
            (
                Key("capacity_bytes", Int(), "x[0].capacity_bytes", "the capacity"),
                Key("label", Str(), "x[1]", "what the capacity is (a device, a size)"),
                Key(
                    "figure",
                    Enum((CAPACITY_FIGURE,)),
                    "CAPACITY_FIGURE",
                    "the figure held to the capacity",
                ),
                Key(
                    "largest_fitting_size",
                    Null(Int()),
                    "x[0].size",
                    "the largest size whose figure is at most the capacity; null: see note",
                ),
                Key(
                    "source",
                    Null(Enum(SOURCES)),
                    "x[0].source",
                    "how the size was had, or null",
                ),
                Key("bytes", Null(Int()), "x[0].bytes", "the figure at that size"),
                Key(
                    "next_bytes",
                    Null(Int()),
                    "x[0].next_bytes",
                    "the figure at the next size (over the capacity)",
                ),
                Key("note", Null(Str()), "x[0].note", "why there is no size, or it is in doubt"),
                Key(
                    "growing_elsewhere",
                    List(Str()),
                    "[s.name for s in report.fit.growing_elsewhere()]",
                    "on TPU, the on-chip memory spaces (VMEM ...) whose bytes grow with the "
                    "size, which the figure leaves out: once one is full the compiler places "
                    "values in HBM and the figure grows faster than its line",
                ),
            ),
        ),
        Kind(
            "groups",
            "The values live at each compile's XLA peak, grouped as hlotop diff groups.",
            (
                Key("keys", List(Enum(GROUP_KEYS)), "list(x.keys)", "the grouping keys"),
                Key("accounting", Enum(ACCOUNTINGS), "x.accounting", "which bytes are summed"),
                Key(
                    "rows",
                    List(Obj("group_fit")),
                    "x.groups",
                    "each group (0 bytes where a compile has none), the largest growth first",
                ),
            ),
        ),
        Kind(
            "group_fit",
            "A group's bytes fitted.",
            (Key("key", List(Str()), "list(x.key)", "one label per grouping key"), *LINE_KEYS),
        ),
        Kind(
            "space_fit",
            "A memory space's allocation bytes fitted.",
            (
                Key("color", Int(), "x.color", "its colour (memory space number)"),
                Key("name", Str(), "x.name", "XLA's name for it on the platform"),
                *LINE_KEYS,
            ),
        ),
        Kind(
            "value_fit",
            "A value matched in every compile (as hlotop diff matches) and its allocated "
            "bytes fitted.",
            (
                Key("name", Str(), "x.name", "its name in the largest compile"),
                Key("shape", Str(), "x.shape", "its shape in the largest compile"),
                Key(
                    "matched_by",
                    List(Enum(MATCH_KEYS)),
                    "list(x.matched_by)",
                    "the key that matched each compile to the next",
                ),
                *LINE_KEYS,
            ),
        ),
    )
}
DOCUMENT = "document"


_BUILDER = DocumentBuilder(KINDS, "fit")


def fit_json(report: FitReport) -> dict[str, Any]:
    """The ``hlotop fit --json`` document of ``report`` (shape: :data:`KINDS`)."""
    names = {**NAMES, "sizes": report.fit.sizes, "report": report}
    return _BUILDER.build(DOCUMENT, report, names)


def write_fit_json(report: FitReport, out) -> None:
    """Write :func:`fit_json` to ``out``, newline-terminated."""
    write_document(fit_json(report), out)
