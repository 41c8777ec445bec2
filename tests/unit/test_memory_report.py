"""The memory-usage report, both eras, read from real JAX dumps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import SAMPLES, swept
from hlotop import load
from hlotop.units import human_bytes, parse_human_bytes

ERA_A = next((SAMPLES / "jax" / "jax-0.7.2" / "mlp_train").glob("*-buffer-assignment.txt"))
ERA_B_REPORT = next(
    (SAMPLES / "jax" / "jax-0.10.2" / "tuple_outputs").glob("*-memory-usage-report.txt")
)


def test_era_a_lists_allocations_with_their_tables():
    m = load(ERA_A)
    assert [f.kind for f in m.files] == ["combined", "memory-usage-report"]
    report = m.memory_usage_report
    assert (report.era, report.total_bytes, report.hidden_allocations) == ("A", 917336, 0)
    assert len(report.allocations) == len(m.allocations) == 38
    first = report.allocations[0]
    assert (first.index, first.size) == (37, 442368)  # "size 432.0KiB"
    assert first.summary == "allocation 37: size 432.0KiB, preallocated-temp:"
    # Before jax 0.8.1 XLA lists shapes, and rows of equal size, in hash order.
    row = first.rows[0]
    assert (row.offset, row.used_by_n_values, row.percent) == (0, 2, 58.0)
    assert sorted(row.shapes) == [(1, "f32[256,256]"), (1, "f32[64,256]")]
    counted = next(r for r in first.rows if r.offset == 393216)
    assert sorted(counted.shapes) == [(1, "f32[32,128]"), (2, "f32[32,256]")]
    assert len(first.rows) == 13
    assert {0, 262144, 294912, 327680, 360448, 393216, 409600, 425984} <= {
        r.offset for r in first.rows
    }
    # Sorted by size descending, as XLA lists them.
    sizes = [a.size for a in report.allocations]
    assert sizes == sorted(sizes, reverse=True)


def test_era_b_groups_tables_by_memory_space_and_opens_the_module():
    m = load(ERA_B_REPORT)  # naming the report opens the whole split module
    assert {f.kind for f in m.files} == {
        "buffer-assignment",
        "values",
        "live-range",
        "memory-usage-report",
        "module-text",
    }
    report = m.memory_usage_report
    assert report.era == "B"
    (space,) = report.memory_spaces
    assert (space.name, space.color, space.total_bytes) == ("default", 0, 170120)
    assert len(space.allocations) == 26
    third = space.allocations[2]
    assert [(r.offset, r.used_by_n_values, r.shapes) for r in third.rows] == [
        (0, 2, ((2, "f32[16,256]"),)),
        (16384, 1, ((1, "f32[]"),)),
    ]
    assert Path(ERA_B_REPORT).read_text().count("Memory Space:") == 1


def _rows_shapes_text() -> list[str]:
    """The shapes list of every table row of every sample's memory-usage report."""
    texts = []
    for report in sorted(swept("*-memory-usage-report.txt")):
        for line in report.read_text().splitlines():
            fields = line.split("; ")
            if len(fields) >= 5 and fields[3].strip().isdigit():
                texts.append("; ".join(fields[4:]))
    return texts


def test_a_shapes_list_splits_at_the_commas_between_its_shapes_only():
    from hlotop.parse.memory_report import _items_at_depth_0, _split_shapes

    tpu = "f32[8,128]{1,0:T(8,128)S(1)}, 3×bf16[2]{0:T(256)(128)}"
    assert _split_shapes(tpu) == (
        (1, "f32[8,128]{1,0:T(8,128)S(1)}"),
        (3, "bf16[2]{0:T(256)(128)}"),
    )
    assert _split_shapes("2×(f32[], s32[2]), f32[4,5]{1,0}") == (
        (2, "(f32[], s32[2])"),
        (1, "f32[4,5]{1,0}"),
    )
    assert _split_shapes("(f32[2], /*index=1*/(s32[], u8[3]))") == (
        (1, "(f32[2], /*index=1*/(s32[], u8[3]))"),
    )
    # On every row of every sample: str.split where it is taken, the same items as
    # the bracket-counting split.
    texts = _rows_shapes_text()
    assert len(texts) > 1000 and any("(" in t for t in texts)
    for text in texts:
        items = _items_at_depth_0(text)
        assert [
            rest if n == 1 and rest == item else f"{n}×{rest}"
            for (n, rest), item in zip(_split_shapes(text), items, strict=True)
        ] == items


def test_every_printed_size_reads_back_to_bytes_that_print_the_same():
    """Each size XLA printed in the samples' memory-usage reports (``36.0KiB``,
    ``805.95MiB``, ``0B``) reads back to a byte count that XLA's formatting prints as
    the same text."""
    reports = sorted(swept("*-memory-usage-report.txt"))
    assert len(reports) >= 50
    sizes = set()
    for path in reports:
        sizes.update(re.findall(r"(?<![\w.])-?\d+(?:\.\d+)?(?:B|[KMGTPE]iB)\b", path.read_text()))
    assert len(sizes) > 100 and {"0B", "36.0KiB"} <= sizes
    for text in sizes:
        assert human_bytes(parse_human_bytes(text)) == text, text
    assert parse_human_bytes("22.5KiB") == 23040 and parse_human_bytes(" -1.50MiB ") == -1572864


@pytest.mark.parametrize("text", ["1e3MiB", "infGiB", "nanKiB", "--5B", "5 KiB", "5kib", "KiB", ""])
def test_a_size_not_in_xlas_form_is_refused(text):
    with pytest.raises(ValueError, match="not a byte count"):
        parse_human_bytes(text)
