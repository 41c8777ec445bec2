"""The tables of the JSON documents of whole dump directories, as
:mod:`hlotop.report.json_table` is ``hlotop --json``'s: ``hlotop --json DIR`` (every
module ranked, :data:`MODULES_KINDS`) and ``hlotop diff --json OLD_DIR NEW_DIR`` (two
runs compared program by program, :data:`MODULES_DIFF_KINDS`). Each document and its
JSON Schema (``modules.schema.json``, ``modules-diff.schema.json``;
:mod:`hlotop.report.documents`) are made from its table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Any

from hlotop.loading.directory import ModuleFigures, ModulePair, collapse_identical, platform_ranks
from hlotop.model import MemoryStats
from hlotop.report.capacity_text import over_capacity
from hlotop.report.json_build import DocumentBuilder, write_document
from hlotop.report.json_table import Bool, Enum, Int, Key, Kind, List, Map, Null, Obj, Str
from hlotop.report.modules_report import largest_by_platform

STATS = Map(Int(), keys=Enum(MemoryStats.FIELDS))  # memory_analysis()'s sizes, JAX's names


@dataclass(frozen=True, slots=True)
class Modules:
    """``hlotop DIR``: the directory as named, its modules' figures (ranked) and the
    capacity given (``--capacity``: bytes and what they are), or None."""

    directory: str
    figures: list[ModuleFigures]
    capacity: tuple[int, str] | None = None
    # --group-by: module path -> its grouped live set (grouping_json's dict) or why it
    # has none; None without --group-by
    groups: dict[str, Any] | None = None
    # --summary --group-by: the largest program's grouped tables, drawn under the ranking
    drawn: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class ModulesDiff:
    """``hlotop diff OLD_DIR NEW_DIR``: the directories as named, their programs paired
    and the lines of ``--fail-over``'s gate."""

    old: str
    new: str
    pairs: list[ModulePair]
    over: list[str]


def _delta(old: int | None, new: int | None) -> int | None:
    return None if old is None or new is None else new - old


def _figure(f: ModuleFigures | None, name: str) -> int | None:
    """Figure ``name`` of module ``f``; None without the module."""
    return None if f is None else getattr(f, name)


def _rows(m: Modules) -> list[tuple[int, ModuleFigures, int, Any]]:
    """Each row: its rank within its platform, its module, how many it stands for, and
    its grouped live set (a dict), why it has none (a str), or None (no --group-by)."""
    rows = collapse_identical(m.figures)
    ranks = platform_ranks([f for f, _ in rows])
    groups = m.groups
    return [
        (rank, f, count, None if groups is None else groups.get(str(f.entry.path), "not read"))
        for rank, (f, count) in zip(ranks, rows, strict=True)
    ]


def _largest(m: Modules, what: str) -> dict[str, tuple[ModuleFigures, int]]:
    """Each platform's module with the largest figure ``what`` and its bytes."""
    return {p: top[what] for p, top in largest_by_platform(m.figures).items() if what in top}


NAMES: dict[str, Any] = {
    "rows": _rows,
    "largest": _largest,
    "over_capacity": over_capacity,
    "delta": _delta,
    "figure": _figure,
}

_FIGURES = (
    Key("peak_step", Null(Int()), "x.peak_step", "XLA's peak step, or null"),
    Key(
        "peak_bytes",
        Null(Int()),
        "x.peak_bytes",
        "XLA's peak: the sum of its printed peak list, or null",
    ),
    Key(
        "total_bytes_used",
        Null(Int()),
        "x.total_bytes_used",
        "its 'Total bytes used' (a report-only module's: its report's total), or null",
    ),
)
_MEMORY_STATS = Key(
    "memory_stats",
    Null(STATS),
    "x.memory_stats.as_dict() if x.memory_stats else None",
    "JAX's memory_analysis() sizes, or null",
)
_ERROR = Key("error", Null(Str()), "x.error", "why it could not be read; null when it was")

MODULES_KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "document",
            "hlotop --json DIR: every module of a dump directory, ranked within its "
            "platform by XLA's peak, and the largest figures of each platform.",
            (
                Key("directory", Str(), "x.directory", "the directory as named"),
                Key("modules", List(Obj("module")), "rows(x)", "the modules, ranked"),
                Key(
                    "largest_peak",
                    Map(Obj("largest")),
                    "largest(x, 'peak')",
                    "each platform's largest XLA peak",
                ),
                Key(
                    "largest_report_total",
                    Map(Obj("largest")),
                    "largest(x, 'report')",
                    "each platform's largest total of a report-only module",
                ),
                Key(
                    "largest_resident",
                    Map(Obj("largest")),
                    "largest(x, 'resident')",
                    "each platform's largest argument + output - alias (what stays on "
                    "the device between calls)",
                ),
                Key(
                    "capacity",
                    Null(Obj("capacity")),
                    "None if x.capacity is None else x",
                    "the modules against --capacity, or null",
                ),
            ),
        ),
        Kind(
            "module",
            "A module of the directory (a row: the modules of one program compiled alike are one).",
            (
                Key("name", Str(), "f.entry.name", "the module's name"),
                Key("files", List(Str()), "[str(p) for p in f.entry.files]", "its files"),
                Key("platform", Str(), "f.entry.platform", "tpu, gpu, cpu or unknown"),
                Key("rank", Int(), "rank", "its rank within its platform, from 1"),
                Key(
                    "report_only",
                    Bool(),
                    "f.entry.report_only",
                    "whether it is known by its memory-usage report alone",
                ),
                Key("total_bytes_used", Null(Int()), "f.total_bytes_used", _FIGURES[2].doc),
                Key("peak_step", Null(Int()), "f.peak_step", _FIGURES[0].doc),
                Key("peak_bytes", Null(Int()), "f.peak_bytes", _FIGURES[1].doc),
                Key("allocations", Int(), "f.allocations", "how many allocations"),
                Key(
                    "memory_stats",
                    Null(STATS),
                    "f.memory_stats.as_dict() if f.memory_stats else None",
                    _MEMORY_STATS.doc,
                ),
                Key(
                    "identical",
                    Int(),
                    "count",
                    "how many modules of the same program compiled alike the row stands for",
                ),
                Key(
                    "required_bytes",
                    Null(Int()),
                    "f.required_bytes",
                    "what it needs on its device (argument + output - alias + temp; on "
                    "TPU of HBM alone), or null",
                ),
                Key(
                    "headroom_bytes",
                    Null(Int()),
                    "capacity[0] - f.required_bytes if capacity is not None "
                    "and f.required_bytes is not None else None",
                    "the capacity less required_bytes (--capacity), or null",
                ),
                Key("error", Null(Str()), "f.error", _ERROR.doc),
                Key(
                    "groups",
                    Null(Obj("module_groups")),
                    "made if isinstance(made, dict) else None",
                    "its live set at its peak grouped (--group-by): the --top largest rows "
                    "(10 by default) and the rest; null without --group-by or when it has "
                    "none",
                ),
                Key(
                    "groups_error",
                    Null(Str()),
                    "made if isinstance(made, str) else None",
                    "why it has no groups (no live ranges, a report alone); null otherwise",
                ),
            ),
            lets=(("rank", "x[0]"), ("f", "x[1]"), ("count", "x[2]"), ("made", "x[3]")),
        ),
        Kind(
            "module_groups",
            "A module's grouped live set at its peak (as hlotop --json --group-by's "
            "groups), its largest rows and the rest.",
            (
                Key("step", Int(), "x['step']", "the schedule step grouped (XLA's peak)"),
                Key("keys", List(Str()), "x['keys']", "the grouping keys, outermost first"),
                Key("accounting", Str(), "x['accounting']", "logical or occupied"),
                Key("total_bytes", Int(), "x['total_bytes']", "the step's bytes grouped"),
                Key("rows", List(Obj("group_row")), "x['rows']", "the largest groups"),
                Key("rest", Obj("groups_rest"), "x['rest']", "the groups left out, summed"),
            ),
        ),
        Kind(
            "group_row",
            "A group of a module's live set.",
            (
                Key("key", List(Str()), "x['key']", "its label for each grouping key"),
                Key("bytes", Int(), "x['bytes']", "the bytes of its values"),
                Key("values", Int(), "x['values']", "how many values"),
            ),
        ),
        Kind(
            "groups_rest",
            "The groups left out of rows, summed (zeros when none were).",
            (
                Key("groups", Int(), "x['groups']", "how many groups"),
                Key("bytes", Int(), "x['bytes']", "their bytes"),
                Key("values", Int(), "x['values']", "their values"),
            ),
        ),
        Kind(
            "largest",
            "A platform's module with the largest figure.",
            (
                Key("module", Str(), "x[0].entry.name", "the module's name"),
                Key("bytes", Int(), "x[1]", "its figure"),
            ),
        ),
        Kind(
            "capacity",
            "The modules against a capacity (--capacity).",
            (
                Key("capacity_bytes", Int(), "x.capacity[0]", "the device memory given"),
                Key("label", Str(), "x.capacity[1]", "what the capacity is (a device, a size)"),
                Key(
                    "over",
                    List(Str()),
                    "[f.entry.name for f in over_capacity(x.figures, x.capacity[0])]",
                    "the modules that need more",
                ),
            ),
        ),
    )
}

MODULES_DIFF_KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "document",
            "hlotop diff --json OLD_DIR NEW_DIR: two whole dump runs compared program by "
            "program, each module by its first look.",
            (
                Key("old", Str(), "x.old", "OLD's directory as named"),
                Key("new", Str(), "x.new", "NEW's directory as named"),
                Key(
                    "programs",
                    List(Obj("program")),
                    "x.pairs",
                    "each program either run compiled, the largest XLA peak first",
                ),
                Key(
                    "over",
                    List(Str()),
                    "x.over",
                    "the --fail-over gate's lines (empty without it, or when nothing grew more)",
                ),
            ),
        ),
        Kind(
            "program",
            "A program and its module in each run.",
            (
                Key("program", Str(), "x.program", "the program (module name less its number)"),
                Key("old", Null(Obj("side")), "x.old", "its module in OLD, or null"),
                Key("new", Null(Obj("side")), "x.new", "its module in NEW, or null"),
                Key("delta", Obj("delta"), "x", "NEW minus OLD"),
            ),
        ),
        Kind(
            "side",
            "A program's module in one run.",
            (
                Key("module", Str(), "x.entry.name", "the module's name"),
                *_FIGURES,
                _MEMORY_STATS,
                _ERROR,
            ),
        ),
        Kind(
            "delta",
            "NEW's figures minus OLD's; null where a side lacks the figure.",
            (
                Key(
                    "peak_bytes",
                    Null(Int()),
                    "delta(figure(x.old, 'peak_bytes'), figure(x.new, 'peak_bytes'))",
                    "the change of XLA's peak",
                ),
                Key(
                    "total_bytes_used",
                    Null(Int()),
                    "delta(figure(x.old, 'total_bytes_used'), figure(x.new, 'total_bytes_used'))",
                    "the change of Total bytes used",
                ),
            ),
        ),
    )
}
DOCUMENT = "document"
_MODULES = DocumentBuilder(MODULES_KINDS, "modules")
_MODULES_DIFF = DocumentBuilder(MODULES_DIFF_KINDS, "modules-diff")


def modules_json(modules: Modules) -> dict[str, Any]:
    """The ``hlotop --json DIR`` document (shape: :data:`MODULES_KINDS`)."""
    return _MODULES.build(DOCUMENT, modules, {**NAMES, "capacity": modules.capacity})


def modules_diff_json(diff: ModulesDiff) -> dict[str, Any]:
    """The ``hlotop diff --json OLD_DIR NEW_DIR`` document (:data:`MODULES_DIFF_KINDS`)."""
    return _MODULES_DIFF.build(DOCUMENT, diff, NAMES)


def write_modules_json(modules: Modules, out: IO[str]) -> None:
    write_document(modules_json(modules), out)


def write_modules_diff_json(diff: ModulesDiff, out: IO[str]) -> None:
    write_document(modules_diff_json(diff), out)
