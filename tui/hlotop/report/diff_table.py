"""The one table of ``hlotop diff --json``'s document (two compiles of one program), as
:mod:`hlotop.report.json_table` is ``hlotop --json``'s: each kind of object, its keys,
the expression that gets each value, its JSON type and what it means. The document
(:func:`diff_json`) and its JSON Schema (``diff.schema.json``,
:mod:`hlotop.report.documents`) are both made from it.
"""

from __future__ import annotations

from typing import IO, Any

from hlotop.analysis.diff import CLASSES, MATCH_KEYS, ModuleDiff
from hlotop.analysis.grouping import ACCOUNTINGS, GROUP_KEYS
from hlotop.model import MemoryStats
from hlotop.report.json_build import DocumentBuilder, write_document
from hlotop.report.json_table import Bool, Enum, Int, Key, Kind, List, Map, Null, Obj, Str

STATS = Enum((*MemoryStats.FIELDS, "peak_memory_in_bytes"))  # JAX's names


def stats_delta(diff: ModuleDiff) -> dict[str, int]:
    """NEW's ``memory_analysis()`` sizes minus OLD's; a figure only one side has
    (``peak_memory_in_bytes``) has none."""
    old, new = diff.old.memory_stats, diff.new.memory_stats
    return {
        k: new.get(k, 0) - old.get(k, 0)
        for k in new or old
        if not (new and old) or (k in new and k in old)
    }


def space_delta(diff: ModuleDiff) -> dict[str, int]:
    """NEW's occupied peak of each memory space minus OLD's (0 where one has none)."""
    spaces = diff.old.space_peaks.keys() | diff.new.space_peaks.keys()
    return {
        s: diff.new.space_peaks.get(s, 0) - diff.old.space_peaks.get(s, 0) for s in sorted(spaces)
    }


NAMES: dict[str, Any] = {
    "CLASSES": CLASSES,
    "MATCH_KEYS": MATCH_KEYS,
    "stats_delta": stats_delta,
    "space_delta": space_delta,
}


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "document",
            "hlotop diff --json: two compiles of one program compared, NEW against OLD.",
            (
                Key("old", Obj("side"), "x.old", "OLD's figures"),
                Key("new", Obj("side"), "x.new", "NEW's figures"),
                Key("delta", Obj("delta"), "x", "NEW's figures minus OLD's (steps left out)"),
                Key("values", Obj("values"), "x", "the values matched, added and removed"),
                Key("groups", Obj("groups"), "x", "the change of the live set by group"),
            ),
        ),
        Kind(
            "side",
            "One compile's figures, in bytes.",
            (
                Key("module", Str(), "x.module.name", "the module's name"),
                Key(
                    "total_bytes_used",
                    Int(),
                    "x.total_bytes",
                    "its 'Total bytes used' (else its allocations' sizes added up)",
                ),
                Key("peak_step", Null(Int()), "x.peak_step", "XLA's peak step, or null"),
                Key("peak_bytes", Int(), "x.peak_bytes", "XLA's peak figure"),
                Key(
                    "memory_stats",
                    Null(Map(Int(), keys=STATS)),
                    "x.memory_stats or None",
                    "JAX's memory_analysis() sizes by JAX's names, or null",
                ),
                Key(
                    "memory_space_peaks",
                    Map(Int()),
                    "x.space_peaks",
                    "each memory space's occupied peak, by its name",
                ),
            ),
        ),
        Kind(
            "delta",
            "NEW's figures minus OLD's.",
            (
                Key(
                    "total_bytes_used",
                    Int(),
                    "x.new.total_bytes - x.old.total_bytes",
                    "the change of Total bytes used",
                ),
                Key(
                    "peak_bytes",
                    Int(),
                    "x.new.peak_bytes - x.old.peak_bytes",
                    "the change of XLA's peak",
                ),
                Key(
                    "memory_stats",
                    Map(Int(), keys=STATS),
                    "stats_delta(x)",
                    "the change of each memory_analysis() size both sides have",
                ),
                Key(
                    "memory_space_peaks",
                    Map(Int()),
                    "space_delta(x)",
                    "the change of each memory space's occupied peak (0 where a side has none)",
                ),
            ),
        ),
        Kind(
            "values",
            "The values of OLD matched to NEW's, without ids or instruction names.",
            (
                Key("matched", Int(), "len(matched)", "how many were matched"),
                Key(
                    "matched_by",
                    Map(Int(), keys=Enum(MATCH_KEYS)),
                    "{k: sum(1 for c in matched if c.matched_by == k) for k in MATCH_KEYS}",
                    "how many each key matched",
                ),
                Key(
                    "changes",
                    Map(Int(), keys=Enum(CLASSES)),
                    "{k: x.count(k) for k in CLASSES}",
                    "how many values of each class of change",
                ),
                Key(
                    "added",
                    List(Obj("value")),
                    "[c.new for c in x.changes if c.change == 'added']",
                    "NEW's values with no match in OLD",
                ),
                Key(
                    "removed",
                    List(Obj("value")),
                    "[c.old for c in x.changes if c.change == 'removed']",
                    "OLD's values with no match in NEW",
                ),
                Key(
                    "changed",
                    List(Obj("change")),
                    "[c for c in matched if c.change != 'unchanged']",
                    "the matched values that changed",
                ),
            ),
            lets=(("matched", "[c for c in x.changes if c.matched_by is not None]"),),
        ),
        Kind(
            "value",
            "A value of one side.",
            (
                Key("id", Int(), "x.value.id", "its id in its compile"),
                Key("name", Str(), "x.value.label", "its name{ShapeIndex}"),
                Key("shape", Null(Str()), "x.shape", "its shape, or null"),
                Key("allocated_bytes", Int(), "x.allocated_bytes", "bytes of its allocation"),
                Key("logical_bytes", Int(), "x.logical_bytes", "bytes of its shape"),
            ),
        ),
        Kind(
            "change",
            "A value matched in both compiles that changed.",
            (
                Key("change", Enum(CLASSES), "x.change", "its class of change"),
                Key("matched_by", Enum(MATCH_KEYS), "x.matched_by", "the key that matched it"),
                Key(
                    "reshaped",
                    Bool(),
                    "x.reshaped",
                    "whether its two shapes differ (each value's shape says which)",
                ),
                Key("old", Obj("value"), "x.old", "the value in OLD"),
                Key("new", Obj("value"), "x.new", "the value in NEW"),
                Key("delta_bytes", Int(), "x.delta_bytes", "NEW's allocated bytes minus OLD's"),
            ),
        ),
        Kind(
            "groups",
            "The values live at each side's XLA peak, grouped, and the change.",
            (
                Key("keys", List(Enum(GROUP_KEYS)), "list(x.keys)", "the grouping keys"),
                Key("accounting", Enum(ACCOUNTINGS), "x.accounting", "which bytes are summed"),
                Key(
                    "rows",
                    List(Obj("group_delta")),
                    "x.groups",
                    "each group, the largest change first",
                ),
            ),
        ),
        Kind(
            "group_delta",
            "A group's bytes live at each side's peak.",
            (
                Key("key", List(Str()), "list(x.key)", "one label per grouping key"),
                Key("old_bytes", Int(), "x.old_bytes", "its bytes in OLD"),
                Key("new_bytes", Int(), "x.new_bytes", "its bytes in NEW"),
                Key("delta_bytes", Int(), "x.delta_bytes", "NEW's minus OLD's"),
            ),
        ),
    )
}
DOCUMENT = "document"
_BUILDER = DocumentBuilder(KINDS, "diff")


def diff_json(diff: ModuleDiff) -> dict[str, Any]:
    """The ``hlotop diff --json`` document of ``diff`` (shape: :data:`KINDS`)."""
    return _BUILDER.build(DOCUMENT, diff, NAMES)


def write_diff_json(diff: ModuleDiff, out: IO[str]) -> None:
    """Write :func:`diff_json` to ``out``, newline-terminated."""
    write_document(diff_json(diff), out)
