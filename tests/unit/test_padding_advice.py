"""The tiling-padding advisor on the real TPU dumps. Expected figures are the slot sizes
XLA printed (read with a plain regex, not hlotop's grammar) and products worked out by
hand in the comments; none is recomputed with the advisor's own rule."""

from __future__ import annotations

import re
from math import prod
from pathlib import Path

import pytest
from parsy import ParseError

from conftest import SAMPLES
from hlotop import load
from hlotop.analysis.padding_advice import advise, advise_shape, most_padded_advice

SEED3 = SAMPLES / "seeds/003_a3085531593bac68.txt"
SEED4 = SAMPLES / "seeds/004_e0d5fae9bf2de249.txt"
TPU = [SEED3, SEED4, *sorted(SAMPLES.glob("tpu/*/*-buffer-assignment.txt"))]
VALUE = re.compile(r"^ value: <(\d+) (\S+)(?: \(phi\))? @(\d+)> \(size=(\d+),offset=\d+\): (.*)$")
ARRAY = re.compile(r"([a-z0-9]+)\[([\d,]*)\](\{.*\})?$")
BYTES = {"pred": 1, "s8": 1, "u8": 1, "bf16": 2, "f16": 2, "s16": 2, "u16": 2}
BYTES |= {"f32": 4, "s32": 4, "u32": 4, "f64": 8, "s64": 8, "u64": 8}


def _id(path: Path) -> str:
    return path.parent.name if path.parent.parent.name == "tpu" else path.name[:3]


def _values(entry: Path) -> list[tuple[int, str, int, int, str]]:
    """(id, label, colour, slot size, shape text) of every ``value:`` line."""
    out = []
    for line in entry.read_text().splitlines():
        m = VALUE.match(line)
        if m:
            out.append((int(m[1]), m[2], int(m[3]), int(m[4]), m[5]))
    return out


def _logical(shape: str) -> int | None:
    """Elements x element bytes of an array shape text; None for a tuple."""
    m = ARRAY.match(shape)
    if m is None:
        return None
    dims = [int(d) for d in m[2].split(",")] if m[2] else []
    return prod(dims) * BYTES[m[1]]


def _info(entry: Path, label: str):
    return next(i for i in load(entry).analysis.values if i.value.label == label)


def test_scalar_takes_a_whole_rank_1_tile():
    # seed 003: " value: <42 p0.1 @0> (size=512,offset=0): f32[]{:T(128)}"
    assert (42, "p0.1", 0, 512, "f32[]{:T(128)}") in _values(SEED3)
    a = advise(_info(SEED3, "p0.1"))
    assert a is not None and a.explained
    assert (a.value_id, a.label, a.memory_space) == (42, "p0.1", 0)
    assert (a.logical_bytes, a.allocated_bytes, a.padding_bytes) == (4, 512, 508)
    assert a.tiling == "T(128)" and a.aligned_shape == "f32[128]{0:T(128)}"
    (c,) = a.causes
    assert (c.dim, c.size, c.tile, c.rounded, c.wasted_bytes) == (None, 1, 128, 128, 508)
    assert (c.more_elements, c.smaller, c.smaller_saves_bytes) == (127, 0, 0)
    assert "beyond the shape's rank" in c.reason and "508 bytes" in c.reason


def test_bf16_second_minor_rounds_to_8_rows_not_16():
    # seed 004 reshape.2: bf16[4,8,513,5120]{3,2,1,0:T(8,128)(2,1)} in 170393600 bytes
    # = 4*8*520*5120*2: 513 rounds to 520 (8 rows); with 16 it would be 528 (173015040).
    shape = "bf16[4,8,513,5120]{3,2,1,0:T(8,128)(2,1)}"
    assert (33, "reshape.2", 0, 170393600, shape) in _values(SEED4)
    a = advise(_info(SEED4, "reshape.2"))
    assert a is not None and a.explained and a.tiling == "T(8,128)(2,1)"
    assert a.padding_bytes == 170393600 - 4 * 8 * 513 * 5120 * 2 == 2293760
    assert a.aligned_shape == "bf16[4,8,520,5120]{3,2,1,0:T(8,128)(2,1)}"
    (c,) = a.causes  # 5120 is already a multiple of 128 lanes
    assert (c.dim, c.role, c.size, c.tile, c.rounded) == (2, "second-minor", 513, 8, 520)
    assert c.wasted_bytes == 4 * 8 * 7 * 5120 * 2 == 2293760
    assert c.more_elements == 4 * 8 * 7 * 5120
    assert (c.smaller, c.smaller_saves_bytes) == (512, 4 * 8 * 8 * 5120 * 2)
    assert c.reason.startswith("dim 2 (size 513) is the second-minor dimension")


def test_bf16_lanes_and_rank_1_tile():
    # v5e_2x2 copy.33 bf16[64,64]{0,1:...} in 16384 = 128 * 64 * 2: the minor-most
    # dimension is dim 0, 64 -> 128 lanes
    path = next(SAMPLES.glob("tpu/v5e_2x2-transformer_sharded/*-buffer-assignment.txt"))
    values = _values(path)
    assert (1745, "copy.33", 1, 16384, "bf16[64,64]{0,1:T(8,128)(2,1)S(1)}") in values
    a = advise(_info(path, "copy.33"))
    assert a is not None and a.explained and a.memory_space == 1
    assert [(c.dim, c.rounded, c.wasted_bytes) for c in a.causes] == [(0, 128, 64 * 64 * 2)]
    assert a.aligned_shape == "bf16[128,64]{0,1:T(8,128)(2,1)S(1)}"
    # v5e_1x1-host_offload fusion.303: bf16[128]{0:T(256)(128)(2,1)S(1)} in 512 = 256 * 2
    path = next(SAMPLES.glob("tpu/v5e_1x1-host_offload/*-buffer-assignment.txt"))
    shape = "bf16[128]{0:T(256)(128)(2,1)S(1)}"
    assert (1350, "fusion.303", 1, 512, shape) in _values(path)
    b = advise(_info(path, "fusion.303"))
    assert b is not None and b.explained and b.aligned_shape.startswith("bf16[256]{0:")
    assert [(c.dim, c.tile, c.unit, c.wasted_bytes) for c in b.causes] == [
        (0, 256, "elements", 256)
    ]


def test_pred_is_one_byte_under_its_tile():
    # seed 004 constant.6: pred[32,513]{0,1:T(8,128)(4,1)} in 66560 = 128 * 520 * 1
    assert (36, "constant.6", 0, 66560, "pred[32,513]{0,1:T(8,128)(4,1)}") in _values(SEED4)
    a = advise(_info(SEED4, "constant.6"))
    assert a is not None and a.explained and a.logical_bytes == 32 * 513
    got = [(c.dim, c.role, c.rounded, c.wasted_bytes) for c in a.causes]
    assert got == [(0, "minor-most", 128, 96 * 520), (1, "second-minor", 520, 128 * 7)]
    assert a.aligned_shape == "pred[128,520]{0,1:T(8,128)(4,1)}"
    # v6e_1x1 lt.5: pred[]{:T(512)S(6)} in 512 bytes: 512 one-byte elements, colour 6
    entry = next(SAMPLES.glob("tpu/v6e_1x1-mlp_adam/*-buffer-assignment.txt"))
    assert (589, "lt.5", 6, 512, "pred[]{:T(512)S(6)}") in _values(entry)
    b = advise(_info(entry, "lt.5"))
    assert b is not None and b.explained and b.memory_space == 6
    assert (b.padding_bytes, b.causes[0].rounded, b.aligned_shape) == (
        511,
        512,
        "pred[512]{0:T(512)S(6)}",
    )


def test_both_dims_by_hand():
    # f32[100,100] under T(8,128): 104 rows x 128 lanes x 4 = 53248 bytes
    a = advise_shape("f32[100,100]{1,0:T(8,128)}", 53248)
    assert a is not None and a.explained and a.padding_bytes == 53248 - 40000
    lanes, rows = a.causes
    assert (lanes.dim, lanes.rounded, lanes.wasted_bytes) == (1, 128, 104 * 28 * 4)
    assert (lanes.more_elements, lanes.smaller) == (28 * 100, 0)
    assert (rows.dim, rows.rounded, rows.wasted_bytes) == (0, 104, 4 * 128 * 4)
    assert (rows.smaller, rows.smaller_saves_bytes) == (96, 8 * 128 * 4)
    assert a.aligned_shape == "f32[104,128]{1,0:T(8,128)}"
    # a rank-1 shape under a 2-D tile: the rows of the tile lie beyond the rank
    b = advise_shape("f32[5]{0:T(8,128)}", 8 * 128 * 4)
    assert b is not None and b.explained and b.aligned_shape == "f32[8,128]{1,0:T(8,128)}"
    assert [(c.dim, c.rounded) for c in b.causes] == [(0, 128), (None, 8)]
    # a slot the rule does not give is reported as unexplained, not hidden
    c = advise_shape("f32[100,100]{1,0:T(8,128)}", 65536)
    assert c is not None and not c.explained and c.tiled_bytes == 53248


def test_no_advice_without_tiling_padding():
    assert advise_shape("f32[8,128]{1,0:T(8,128)}", 4096) is None  # fits its tile
    assert advise_shape("s32[2]{0:S(4)}", 4096) is None  # sync flags: no tile
    assert advise_shape("s32[]", 4096) is None
    assert advise_shape("(f32[], f32[])", 512) is None  # a tuple's index table
    assert advise_shape("f32[4]{0}", 16) is None  # CPU
    with pytest.raises(ParseError):
        advise_shape("f32[4", 16)
    cpu = load(next(SAMPLES.glob("cpu/mlp_adam/*-buffer-assignment.txt")))
    assert most_padded_advice(cpu.analysis.values, 10) == []


# Padded values per sample (slot size above the elements, by the regexes above): tiled
# arrays, all explained; tuple index tables (32-, 128- or 512-byte slots); untiled
# arrays in 4096-byte slots (v5e_2x2: s32[2]{0:S(4)} sync flags; v6e_2x2: thread-local
# s32[] lhs, rhs, add.251).
PADDED = {
    "003": (5, 4, 0),
    "004": (7, 2, 0),
    "v5e_1x1-donation": (56, 86, 0),
    "v5e_1x1-host_offload": (111, 84, 0),
    "v5e_1x1-mlp_adam": (56, 62, 0),
    "v5e_1x1-transformer_loop": (104, 76, 0),
    "v5e_1x1-transformer_remat": (128, 82, 0),
    "v5e_1x1-transformer_scan": (95, 60, 0),
    "v5e_1x1-gpt_loop": (170, 190, 0),
    "v5e_1x1-gpt_scan": (148, 105, 0),
    "v5e_2x2-transformer_sharded": (250, 81, 25),
    "v5p_2x2x1-transformer_sharded": (214, 82, 0),
    "v6e_1x1-mlp_adam": (56, 39, 0),
    "v6e_2x2-transformer_sharded": (216, 52, 3),
}


@pytest.mark.parametrize("entry", TPU, ids=_id)
def test_rule_gives_every_padded_slot_xla_printed(entry):
    tiled = tuples = untiled = 0
    for _, label, _, size, shape in _values(entry):
        logical = _logical(shape)
        if logical is None:
            tuples += size > 8 * (shape.count(", ") + 1)
            assert advise_shape(shape, size) is None
            continue
        if size <= logical:
            continue
        a = advise_shape(shape, size)
        if "T(" not in shape:
            untiled += 1
            assert a is None and size == 4096, (label, shape)
            continue
        tiled += 1
        assert a is not None and a.tiled_bytes == size, (label, shape, size)
        assert a.causes and a.padding_bytes == size - logical
        # the aligned shape's elements fill the slot exactly
        assert _logical(a.aligned_shape) == size, (label, a.aligned_shape)
    assert (tiled, tuples, untiled) == PADDED[_id(entry)]


def test_most_padded_largest_first_overall_and_per_space():
    values = load(SEED4).analysis.values
    # copy.3 f32[32,513,5120] in 340787200: 32*7*5120*4 = 4587520 padding; reshape.2
    # 2293760 (above); fusion bf16[4,8,516,5120]: 4*8*4*5120*2 = 1310720
    top = most_padded_advice(values, 3)
    assert [(a.label, a.padding_bytes) for a in top] == [
        ("copy.3", 4587520),
        ("reshape.2", 2293760),
        ("fusion", 1310720),
    ]
    assert most_padded_advice(values, 0) == []
    # against the dump's own value lines: per memory space, padding desc then id
    entry = next(SAMPLES.glob("tpu/v5e_1x1-host_offload/*-buffer-assignment.txt"))
    values = load(entry).analysis.values
    for color in (0, 1, 6):
        expected = sorted(
            (-(size - _logical(shape)), vid, label)
            for vid, label, c, size, shape in _values(entry)
            if c == color and "T(" in shape and not shape.startswith("(")
            if size > _logical(shape)
        )[:5]
        got = most_padded_advice(values, 5, color)
        assert [(-a.padding_bytes, a.value_id, a.label) for a in got] == expected
        assert {a.memory_space for a in got} == {color}
    overall = most_padded_advice(values, 1000)
    assert len(overall) == PADDED["v5e_1x1-host_offload"][0]
    assert [a.padding_bytes for a in overall] == sorted(
        (a.padding_bytes for a in overall), reverse=True
    )
