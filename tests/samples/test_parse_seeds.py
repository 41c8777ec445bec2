"""The five seed dumps (CPU and TPU, 2024-2025 eras) parse to their exact figures."""

from __future__ import annotations

import pytest

from conftest import sample
from hlotop import load
from hlotop.model import HloPosition, HloUse

# (file, allocations, total bytes, peak step, peak variant, peak entries, used values,
#  schedule max, live ranges)
SEEDS = [
    ("seeds/000_aa093b3e4f73e23a.txt", 4, 41943040, 3, "V4", 4, 4, 4, 4),
    ("seeds/001_79ae6c566c7e6550.txt", 6, 41943072, 5, "V4", 6, 6, 6, 6),
    ("seeds/002_c2e226da3172e77e.txt", 5, 36864, 7, "V4", 5, 8, 8, 8),
    ("seeds/003_a3085531593bac68.txt", 13, 299944008, 11, "V1", 9, 21, 15, 18),
    ("seeds/004_e0d5fae9bf2de249.txt", 8, 1348651528, 14, "V1", 4, 18, 17, 18),
]


@pytest.mark.parametrize("path,n_alloc,total,peak,variant,n_peak,n_used,max_time,n_live", SEEDS)
def test_seed_figures(path, n_alloc, total, peak, variant, n_peak, n_used, max_time, n_live):
    m = load(sample(path))
    assert m.diagnostics == []
    assert len(m.allocations) == n_alloc
    assert [a.index for a in m.allocations] == list(range(n_alloc))
    assert m.total_bytes_used == total
    assert sum(a.size for a in m.allocations) == total
    assert m.live_range.peak.time == peak
    assert m.live_range.peak.variant == variant
    assert len(m.live_range.peak.entries) == n_peak
    assert len(m.used_values) == n_used
    assert m.live_range.max_time == max_time
    assert len(m.live_range.instruction_sequence) == max_time
    assert len(m.live_range.buffers) == n_live
    assert m.analysis.peak_step == peak


def test_seed000_allocation_attributes_and_stack_tree():
    m = load(sample("seeds/000_aa093b3e4f73e23a.txt"))
    out = m.allocations[0]
    assert out.kinds == ("output", "maybe-live-out")
    assert out.output_shape == "bf16[4,1280,2048]"
    param = m.allocations[1]
    assert (param.parameter, param.parameter_shape, param.parameter_shape_index) == (
        0,
        "bf16[4,1024,2048]",
        (),
    )
    slot = param.values[0]
    assert (slot.value.id, slot.value.name, slot.value.shape_index, slot.value.color) == (
        10,
        "args_0_.1",
        None,
        0,
    )
    assert (slot.size, slot.offset, slot.shape) == (16777216, 0, "bf16[4,1024,2048]{2,1,0}")
    stack = m.live_range.stack_trace
    assert stack.total == 41943040
    (root,) = stack.roots
    assert (root.label, root.total, root.current, root.depth) == ("main.1", 41943040, 0, 0)
    assert [c.label for c in root.children] == [
        "concatenate_convert_fusion",
        "args[0]",
        "args[1]",
        "args[2]",
    ]
    assert [c.remaining for c in root.children] == [20971520, 4194304, 2097152, 0]
    assert root.children[1].percent == 40.0
    record = m.used_values[2]
    assert record.value.name == "args_0_.1"
    assert record.uses == (HloUse("concatenate_convert_fusion", 2),)
    assert record.instruction.op_name == "args[0]"
    assert record.instruction.opcode == "parameter"


def test_seed001_tuple_values_positions_and_output():
    m = load(sample("seeds/001_79ae6c566c7e6550.txt"))
    tup = m.allocations[5]
    assert (
        tup.output_shape == "(bf16[1280,2048], bf16[1280,2048], bf16[1280,2048], bf16[1280,2048])"
    )
    assert tup.values[0].value.shape_index == ()
    assert str(tup.values[0].value) == "<21 tuple.1{} @0>"
    assert m.allocations[1].kinds == ("maybe-live-out",)  # element of the output tuple
    rec = next(r for r in m.used_values if r.value.id == 17)
    assert rec.positions == (HloPosition("slice_convert_fusion.3"), HloPosition("tuple.1", (0,)))
    last = m.used_values[-1]
    assert last.positions == (HloPosition("tuple.1", ()),)
    assert last.uses == ()
    entries = m.live_range.peak.entries
    assert entries[-1].name == "tuple.1" and entries[-1].shape_index == ()
    assert entries[-1].cumulative == 41943072


def test_seed002_reuse_and_source_metadata():
    m = load(sample("seeds/002_c2e226da3172e77e.txt"))
    alloc0 = m.allocations[0]
    assert [(s.value.name, s.offset, s.size) for s in alloc0.values] == [
        ("convert", 0, 4608),
        ("convert.3", 0, 6912),
    ]
    rec = next(r for r in m.used_values if r.value.name == "concatenate.1")
    instr = rec.instruction
    assert instr.op_name == "jit(concatenate)/concatenate"
    assert instr.source_line == 71
    assert instr.source_file.endswith("tpu_inference/layers/vllm/linear_common.py")
    assert instr.shape == "f32[4,864]{1,0}"
    assert m.live_range.stack_trace.total == 27648
    assert m.analysis.peak_bytes == 27648


def test_seed003_tpu_memory_spaces_tiles_and_thread_local():
    m = load(sample("seeds/003_a3085531593bac68.txt"))
    by_index = {a.index: a for a in m.allocations}
    assert {i for i, a in by_index.items() if a.is_thread_local} == {0, 8, 9}
    assert (by_index[11].color, by_index[12].color) == (2, 1)
    assert by_index[12].kinds == ("preallocated-temp",)
    smem = by_index[11].values
    assert [(s.value.label, s.value.color, s.shape) for s in smem] == [
        ("copy-start.1{2}", 2, "u32[]{:S(2)}"),
        ("copy-start{2}", 2, "u32[]{:S(2)}"),
    ]
    info = m.analysis.by_id[42]  # p0.1: a 4-byte scalar in a 512-byte tiled slot
    assert (info.logical_bytes, info.allocated_bytes, info.padding_bytes) == (4, 512, 508)
    assert m.analysis.by_id[39].color == 1
    entry = next(e for e in m.live_range.peak.entries if e.name == "copy-start")
    assert entry.bytes == 24 and entry.shape_index is None  # V1: the whole tuple table
    rng = next(b for b in m.live_range.buffers if b.key == ("all-reduce.28", (1,)))
    assert (rng.start, rng.end) == (12, 12)
    rec = next(r for r in m.used_values if r.value.id == 29)
    assert rec.uses[-1] == HloUse("copy-done.1", 0, (1,))
    # Operand shapes are printed in this era; the instruction shape still parses.
    assert next(r for r in m.used_values if r.value.id == 30).instruction.shape.startswith(
        "(f32[8,128,4096]{2,1,0:T(8,128)S(1)}"
    )


def test_seed004_glued_records_are_split():
    m = load(sample("seeds/004_e0d5fae9bf2de249.txt"))
    ids = [r.value.id for r in m.used_values]
    assert ids == list(range(26, 44))
    # Each record's instruction text ends where the next record was glued on.
    for r in m.used_values:
        assert "<" not in r.instruction.text.rsplit("}", 1)[-1]
        assert r.instruction.name == r.value.name or r.value.shape_index is not None
    slice_rec = next(r for r in m.used_values if r.value.name == "slice.2")
    assert slice_rec.instruction.source_line == 663
    assert slice_rec.instruction.op_name.startswith("jit(conv_general_dilated)/jit(main)/")
    assert slice_rec.instruction.op_name.endswith("preferred_element_type=None]")
    consts = [a.index for a in m.allocations if a.is_constant]
    assert consts == [0, 4]
    shape = m.allocations[4].values[0].shape
    assert shape == "pred[32,513]{0,1:T(8,128)(4,1)}"
