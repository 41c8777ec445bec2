"""OOM texts (parse.oom, model.oom, analysis.oom_link): every real sample in
sample_dumps/oom/ reads with the figures it prints (read off the texts by hand: a
rounded ``30.21G`` is ``round(30.21 * 2**30)`` bytes, a figure in bytes is exact), the
same report comes out of the text however it is wrapped, and other text gives None."""

from __future__ import annotations

import glob
import html
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SAMPLES, sample
from hlotop import load
from hlotop.analysis.oom_link import OomLinker, find_value, link_entries, shape_without_layout
from hlotop.model import OOM_FORMATS, OomEntry
from hlotop.model.oom import Size
from hlotop.parse.oom import find_ooms, looks_like_oom, parse_oom
from hlotop.parse.oom_size import size_bytes

OOM = SAMPLES / "oom"


def K(x: float) -> int:
    return round(x * 2**10)


def M(x: float) -> int:
    return round(x * 2**20)


def G(x: float) -> int:
    return round(x * 2**30)


def read(name: str) -> str:
    return (OOM / name).read_text()


def test_every_sample_is_an_oom_and_listed_in_the_manifest():
    manifest = (OOM / "MANIFEST.md").read_text()
    names = sorted(p.name for p in OOM.glob("*.txt"))
    assert len(names) >= 16
    for name in names:
        text = read(name)
        assert looks_like_oom(text), name
        assert parse_oom(text, name) is not None, name
        assert f"`{name}`" in manifest, name
        for report in find_ooms(text, name):
            assert report.format in OOM_FORMATS
            assert report.diagnostics == (), (name, report.diagnostics)


def test_gpu_runtime_peak_buffers():
    name = "gpu-jax-2024-peak-buffers.txt"
    r = parse_oom(read(name), name)
    assert (r.format, r.memory_space, r.line, r.path) == (
        "gpu-buffer-assignment",
        "device",
        15,
        name,
    )
    assert (r.capacity_bytes, r.used_bytes, r.over_bytes) == (None, G(27.23), None)
    assert r.requested_bytes == 17528955952
    assert r.message == "Out of memory while trying to allocate 17528955952 bytes."
    assert r.stat_bytes() == {
        "parameter allocation": G(10.91),
        "constant allocation": 12,
        "maybe_live_out allocation": G(10.89),
        "preallocated temp allocation": G(16.32),
        "total allocation": G(27.23),
    }
    assert len(r.entries) == 15
    e1, e2, e6, e7 = r.entries[0], r.entries[1], r.entries[5], r.entries[6]
    assert (e1.rank, e1.size_bytes, e1.shape, e1.op_name, e1.label) == (
        1,
        G(4.50),
        "f32[18,2,2048,16384]",
        None,
        "fusion",
    )
    assert (e1.opcode, e1.allocation_type, e1.source, e1.line) == ("fusion", None, None, 24)
    assert e2.op_name == "jit(update_fn)/jit(main)/sub"
    assert e2.source == "/zhome/ea/9/137501/Desktop/ML_final/ML_final/main.py:62"
    # "Size: 1.93GiB" of an f32[2016,257152]: the shape fixes the bytes
    assert (e6.size_bytes, e6.label, e6.shape) == (
        2016 * 257152 * 4,
        "custom-call",
        "f32[2016,257152]",
    )
    assert (e6.size.text, e6.size.exact, e6.size.origin) == ("1.93GiB", True, "shape")
    assert e6.op_name.endswith(
        "dot_general[dimension_numbers=(((2,), (0,)), ((), ())) precision=None preferred_element_type=float32]"
    )
    assert (e7.size_bytes, e7.shape) == (27 * 4304 * 1152 * 4, "f32[27,4304,1152]")
    last = r.entries[-1]
    assert (last.size.text, last.size_bytes, last.shape) == (
        "136.69MiB",
        27 * 16 * 72 * 1152 * 4,
        "f32[27,16,72,1152]",
    )
    # The remat warning and the BFC allocator's line come first; the traceback's copy
    # of the runtime message is the same report, kept once.
    remat, bfc, runtime = find_ooms(read(name), name)
    assert runtime.figures() == r.figures()
    assert (remat.format, remat.line, remat.memory_space) == ("remat", 12, None)
    assert (remat.capacity_bytes, remat.target_bytes, remat.used_bytes) == (
        None,
        13149696365,
        29195252816,
    )
    assert runtime.repeats == (166,)  # the traceback's copy
    assert remat.over_bytes == 29195252816 - 13149696365
    assert remat.stat_bytes() == {"original": 29274463968}
    assert (bfc.format, bfc.device, bfc.requested_bytes, bfc.line) == (
        "bfc-allocator",
        "GPU_0_bfc",
        17528956160,
        13,
    )


def test_tpu_compile_largest_program_allocations_jax():
    name = "tpu-jax-2024-largest-program-allocations.txt"
    r = parse_oom(read(name), name)
    assert (r.format, r.memory_space, r.line) == ("tpu-compile", "hbm", 1)
    assert (r.capacity_bytes, r.used_bytes, r.over_bytes) == (G(15.48), G(30.21), G(14.73))
    assert r.stat_bytes() == {
        "total usage": G(30.73),
        "total usage: reserved": M(530.00),
        "total usage: program": G(14.31),
        "total usage: arguments": G(15.90),
        "output": K(1.0),
        "output shared with arguments": 0,
        "program requirement": G(14.31),
        "program requirement: global": K(481.0),
        "program requirement: scoped": K(512.0),
        "program requirement: HLO temp": G(14.31),
        "HLO temp unpadded": G(14.25),
        "HLO temp padded": G(14.25),
        "HLO temp fragmentation": M(62.60),
    }
    e1, e2 = r.entries  # the sample stops inside the second entry
    # A TPU buffer's size is padded: its "1.46G" stays rounded; the unpadded size is
    # the shape's bytes, which fix it.
    assert (e1.rank, e1.size_bytes, e1.unpadded_bytes) == (1, G(1.46), 256000 * 3072 * 2)
    assert (e1.size.text, e1.size.exact, e1.unpadded.exact, e1.shape_bytes) == (
        "1.46G",
        False,
        True,
        1572864000,
    )
    assert e1.shape == "bf16[256000,3072]{1,0:T(8,128)(2,1)}"
    assert e1.op_name == (
        "pjit(generate)/jit(main)/FlaxGemmaForCausalLMModule/model/embed_tokens/"
        "convert_element_type[new_dtype=bfloat16 weak_type=False]"
    )
    assert e1.label == "convert.15982 = convert(param.72)"
    assert (e1.instruction, e1.opcode, e1.allocation_type) == (
        "convert.15982",
        "convert",
        "HLO temp",
    )
    assert (e1.source, e1.expansion, e1.line) == ("/tmp/ipykernel_1363/19855715.py:3", None, 17)
    assert (e2.rank, e2.size_bytes, e2.shape, e2.label) == (2, M(144.00), None, None)
    assert e2.op_name.endswith(
        "/mlp/up_proj/convert_element_type[new_dtype=bfloat16 weak_type=False]"
    )


def test_tpu_compile_largest_program_allocations_tf1():
    name = "tpu-tf1-2019-largest-program-allocations.txt"
    r = parse_oom(read(name), name)
    assert (r.format, r.memory_space, r.line) == ("tpu-compile", "hbm", 6)
    assert (r.capacity_bytes, r.used_bytes, r.over_bytes) == (G(16.00), G(17.60), G(1.60))
    # "arguments unknown size" and "Output size unknown." give no figure.
    assert r.stat_bytes() == {
        "total usage": G(17.60),
        "total usage: reserved": M(528.00),
        "total usage: program": G(17.08),
        "program requirement": G(17.08),
        "program requirement: reserved": K(12.0),
        "program requirement: global": K(980.0),
        "program requirement: scoped": M(5.41),
        "program requirement: HLO temp": G(17.08),
        "HLO temp fragmentation": M(53.61),
    }
    assert len(r.entries) == 20
    e1, e2, e3 = r.entries[:3]
    assert (e1.size_bytes, e1.unpadded_bytes, e1.padding_bytes, e1.expansion) == (
        M(512.00),
        42467328,  # M(40.50): f32[4,128,128,9,18] is 42467328 bytes, so M is MiB
        M(471.50),
        12.6,
    )
    assert (e1.op_type, e1.op_name, e1.shape) == (
        "OneHot",
        "one_hot",
        "f32[4,128,128,9,18]{4,3,0,2,1:T(8,128)}",
    )
    assert (e1.instruction, e1.opcode, e1.allocation_type) == ("fusion.1668", "fusion", "HLO temp")
    assert (e2.op_name, e2.instruction, e2.expansion) == (None, "fusion.20231", 2.0)
    assert e2.label.endswith("bf16[4,512,51...")
    assert (e3.op_name, e3.instruction, e3.opcode) == (
        "resnet152/MaxPool_11",
        "reduce-window.989",
        "reduce-window",
    )
    assert (e3.size_bytes, e3.unpadded_bytes, e3.padding_bytes) == (M(256.00), M(256.00), None)
    assert (r.entries[-1].rank, r.entries[-1].op_name) == (20, "resnet152/MaxPool_36")


def test_gpu_runtime_rocm_hard_wrapped_operator_lines():
    name = "rocm-3364-gpu-hardwrapped.txt"
    r = parse_oom(read(name), name)
    assert (r.format, r.line, r.device) == ("gpu-buffer-assignment", 2, "device ordinal 0")
    assert (
        r.message == "Failed to allocate request for 154.06GiB (165425291480B) on device ordinal 0"
    )
    assert (r.requested_bytes, r.used_bytes) == (165425291480, G(192.84))
    stats = r.stat_bytes()
    assert stats["constant allocation"] == K(24.6)
    assert stats["preallocated temp fragmentation"] == M(24.75)
    assert stats["total fragmentation"] == G(9.71)
    assert r.stat("total fragmentation").note == "5.03%"
    e1, e2, e3 = r.entries
    # The operator lines were cut at 220 columns; the pieces join without a gap.
    assert "/jit(main)/alphafold/alphafold_iteration/" in e1.op_name
    assert "__layer_stack_no_state/" in e1.op_name and "__layer_st\n" not in e1.op_name
    assert e1.op_name.endswith("triangle_multiplication_incoming/div")
    assert (e1.size_bytes, e1.shape, e1.label, e1.line) == (
        39955041 * 256 * 4,
        "f32[39955041,256]",
        "fusion",
        13,
    )
    assert e2.source == "/opt/miniconda3/bin/colabfold_batch:8"
    assert (e3.label, e3.shape) == ("custom-call", "bf16[39955048,256]")
    assert "/...a, ah->...h/dot_general[dimension_numbers=(((2,), (0,))" in e3.op_name


def test_gpu_runtime_entry_parameters():
    r = parse_oom(read("jax-13428-gpu-peak-buffers.txt"), "x")
    assert (r.requested_bytes, r.used_bytes, r.line) == (6291456, M(12.00), 1)
    assert r.stat_bytes()["total fragmentation"] == 0
    e1, e2, e3, e4 = r.entries  # the thread's copy stops inside Buffer 4
    assert (e1.op_name, e1.label, e1.shape) == (
        "jit(concatenate)/jit(main)/concatenate[dimension=0]",
        "concatenate",
        "f32[4096,128,3]",
    )
    assert (e2.size_bytes, e2.shape, e2.label, e2.opcode, e2.allocation_type) == (
        K(384.0),
        "f32[256,128,3]",
        None,
        "parameter",
        "parameter",
    )
    assert (e4.size_bytes, e4.shape) == (K(384.0), None)
    m = parse_oom(read("moscot-51-gpu-peak-buffers.txt"), "x")
    assert (m.requested_bytes, m.used_bytes, len(m.entries)) == (25158058240, G(46.88), 3)
    assert (m.entries[0].opcode, m.entries[0].shape, m.entries[0].size_bytes) == (
        "parameter",
        "f64[1036,1036,2930]",
        1036 * 1036 * 2930 * 8,  # "23.43GiB", fixed by the shape: the request's 25158058240
    )
    assert (m.entries[1].op_type, m.entries[1].op_name, m.entries[1].label) == (
        "sub",
        "jit(sub)/sub",
        "fusion",
    )
    assert m.entries[1].source.endswith("/ott/geometry/ops.py:28")
    assert m.entries[2].size_bytes == 1036 * 1 * 2930 * 8  # "23.16MiB" of f64[1036,1,2930]


def test_remat_and_bfc():
    r = parse_oom(read("jax-27354-remat-bfc.txt"), "x")
    assert (r.format, r.device, r.requested_bytes, r.line) == (
        "bfc-allocator",
        "GPU_0_bfc",
        1374521760000,
        3,
    )
    schedule, remat, bfc = find_ooms(read("jax-27354-remat-bfc.txt"))
    assert (schedule.format, schedule.used_bytes, schedule.target_bytes) == (
        "gpu-schedule",
        1374526449600,
        25554419712,
    )
    # The remat pass's "below 0B" is its target, not the device's capacity.
    assert (remat.capacity_bytes, remat.target_bytes) == (None, 0)
    assert (remat.used_bytes, remat.over_bytes) == (1374521760000, 1374521760000)
    assert remat.over.text == "used - target"
    assert bfc.figures() == r.figures()
    # Two allocators fail, then the runtime: the runtime's error is the report.
    reports = find_ooms(read("jax-24309-remat-bfc.txt"))
    assert [(x.format, x.device) for x in reports] == [
        ("remat", None),
        ("bfc-allocator", "GPU_0_bfc"),
        ("bfc-allocator", "GPU_2_bfc"),
        ("runtime-allocation", None),
    ]
    r = parse_oom(read("jax-24309-remat-bfc.txt"), "x")
    assert (r.format, r.requested_bytes, r.entries, r.line) == (
        "runtime-allocation",  # the stored excerpt ends before any BufferAssignment
        28804500256,
        (),
        5,
    )
    first, second = find_ooms(read("enzyme-jax-1363-remat.txt"))  # glog and timestamp prefixes
    assert (first.line, first.target_bytes, first.used_bytes) == (1, 11428802214, 76523901244)
    assert first.stat_bytes() == {"original": 78931543988}
    assert (second.line, second.target_bytes, second.used_bytes) == (3, 11429599125, 72679996812)


def test_bfc_stats_block():
    # The headline of jax#24309 and the Stats block of hammerlab/flowdec#32 (both real).
    text = (
        "2024-10-15 16:30:47.781059: W external/xla/xla/tsl/framework/bfc_allocator.cc:497] "
        "Allocator (GPU_0_bfc) ran out of memory trying to allocate 26.83GiB (rounded to "
        "28804500480)requested by op \n"
        "2020-06-07 17:48:49.800425: I tensorflow/core/common_runtime/bfc_allocator.cc:816] "
        "Sum Total of in-use chunks: 4.16GiB\n"
        "2020-06-07 17:48:49.800485: I tensorflow/core/common_runtime/bfc_allocator.cc:824] Stats:\n"
        "Limit:                 10562958132\nInUse:                  4467985408\n"
        "MaxInUse:               4467985408\nNumAllocs:                      25\n"
        "MaxAllocSize:           2233958400\n\n"
    )
    r = parse_oom(text, "x")
    assert (r.capacity_bytes, r.used_bytes) == (10562958132, 4467985408)
    assert r.over_bytes == 28804500480 - (10562958132 - 4467985408)
    assert r.stat_bytes() == {
        "Limit": 10562958132,
        "InUse": 4467985408,
        "MaxInUse": 4467985408,
        "MaxAllocSize": 2233958400,
    }
    assert (r.stat("NumAllocs").count, r.stat("NumAllocs").size) == (25, None)  # a count


def test_tpu_texts_without_lists():
    r = parse_oom(read("lwm-60-tpu-hbm-traceback.txt"), "x")  # the headline wraps
    assert (r.format, r.line, r.capacity_bytes, r.used_bytes, r.over_bytes) == (
        "tpu-compile",
        14,
        G(15.48),
        G(21.95),
        G(6.47),
    )
    assert r.stat_bytes() == {
        "total usage": G(22.47),
        "total usage: reserved": M(530.00),
        "total usage: program": G(21.95),
        "total usage: arguments": 0,
    }
    e = parse_oom(read("easydel-166-tpu-hbm.txt"), "x")
    assert (e.capacity_bytes, e.used_bytes, e.over_bytes, len(e.entries)) == (
        G(30.75),
        G(63.80),
        G(33.05),
        2,
    )
    assert (e.entries[0].size_bytes, e.entries[0].instruction, e.entries[0].opcode) == (
        2**31,
        "fusion.1265.remat3",
        "fusion",
    )
    s = parse_oom(read("vllm-8318-tpu-smem.txt"), "x")  # a markdown quote
    assert (s.memory_space, s.capacity_bytes, s.used_bytes, s.over_bytes) == (
        "smem",
        M(1.00),
        M(1.00),
        K(1.7),
    )
    a = parse_oom(read("jax-7822-tpu-early-abort.txt"), "x")
    assert (a.format, a.used_bytes, a.capacity_bytes) == (
        "tpu-early-abort",
        round(3.47 * 2**60),
        G(14.49),
    )
    assert a.over_bytes == a.used_bytes - a.capacity_bytes


def test_tpu_runtime_buffers():
    first, second = find_ooms(read("diffusers-8358-tpu-buffer.txt"), "x")
    assert (first.format, first.line, first.requested_bytes, first.device) == (
        "tpu-device-buffer",
        7,
        G(4.39),
        "0x0x0_HBM0",
    )
    assert (first.stat_bytes(), first.over_bytes) == ({"free": G(2.30)}, G(4.39) - G(2.30))
    assert (second.requested_bytes, second.stat_bytes()) == (M(196.00), {"free": M(60.94)})
    assert parse_oom(read("diffusers-8358-tpu-buffer.txt"), "x").figures() == first.figures()
    p = parse_oom(read("pytorch-xla-8020-tpu-buffer.txt"), "x")
    assert (p.requested_bytes, p.stat_bytes(), p.device) == (
        M(196.00),
        {"free": M(134.44)},
        "1x0x0_HBM0",
    )
    o = parse_oom(read("jax-14304-tpu-buffer-old.txt"), "x")  # inside backticks
    assert (o.requested_bytes, o.device, o.over_bytes) == (10485760, "0x0x0_HBM0", None)
    assert o.stat_bytes() == {"allocatable": 4374528, "free": 14942208}


@pytest.mark.parametrize(
    "text, figures",
    [
        (  # XLA's docs, E1002
            "RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage "
            "174.10G, exceeding available bytes: 95.74G",
            ("tpu-tensorcore-sparsecore", G(95.74), G(34.82) + G(174.10)),
        ),
        (  # XLA's docs, E0101
            "XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program "
            "'jit_embedding_pipeline_step_fn': Attempting to reserve 29.49G at the bottom of "
            "memory. That was not possible. There are 147.64M free, 0B reserved, and 147.64M "
            "reservable. Scope: unknown..: while running replica 0 and partition 34 of a "
            "replicated computation (other replicas may have failed as well).",
            ("tpu-program-load", None, None),
        ),
        (  # XLA's docs, E1000
            "RESOURCE_EXHAUSTED: Compilation failure: Aborting compilation early because it's "
            "unlikely to have enough memory. Requires 3.84T, has 90.96G available. If more "
            "detailed logging is desired, set --xla_tpu_impure_oom_fast_exit_threshold=-1",
            ("tpu-early-abort", G(90.96), round(3.84 * 2**40)),
        ),
        (  # a scoped VMEM OOM quoted in a public repository's notes (tunix)
            "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom:\n"
            "Ran out of memory in memory space vmem while allocating on stack for "
            "%splash_mha_fwd...\nScoped allocation with size 19.85M and limit 16.00M exceeded "
            "scoped vmem limit by 3.85M.",
            ("tpu-scoped-vmem", M(16.00), M(19.85)),
        ),
    ],
)
def test_formats_from_docs(text, figures):
    r = parse_oom(text, "x")
    assert (r.format, r.capacity_bytes, r.used_bytes) == figures
    if r.format == "tpu-program-load":
        assert (r.program, r.requested_bytes) == ("jit_embedding_pipeline_step_fn", G(29.49))
        assert r.stat_bytes() == {"free": M(147.64), "reserved": 0, "reservable": M(147.64)}
        assert r.over_bytes == G(29.49) - M(147.64)
    if r.format == "tpu-scoped-vmem":
        assert (r.memory_space, r.over_bytes) == ("vmem", M(3.85))
        assert (r.entries[0].size_bytes, r.entries[0].allocation_type) == (M(19.85), "scoped")
        assert r.entries[0].label.startswith("%splash_mha_fwd")  # the last "." ends the sentence
    if r.format == "tpu-tensorcore-sparsecore":
        assert r.stat_bytes() == {
            "TensorCore hbm usage": G(34.82),
            "SparseCore hbm usage": G(174.10),
        }


def test_sizes_in_every_printed_form():
    assert size_bytes("4.50GiB") == G(4.5)
    assert size_bytes("30.21G") == G(30.21)
    assert size_bytes("481.0K") == 492544
    assert size_bytes("12B") == size_bytes("12") == 12
    assert size_bytes("17528955952 bytes") == 17528955952
    assert size_bytes("27.93GiB (rounded to 29995136256)") == 29995136256
    assert size_bytes("12.25GiB (13149696365 bytes)") == 13149696365
    assert size_bytes("154.06GiB (165425291480B)") == 165425291480
    assert size_bytes("7,450,374,152 bytes (6.94GiB)") == 7450374152
    assert size_bytes("1.26GiB") == 1352914698
    assert size_bytes("3.47E") == round(3.47 * 2**60)
    with pytest.raises(ValueError):
        size_bytes("lots")
    # The 2025 form of the GPU headline and stats.
    text = (
        "Out of memory while trying to allocate 7,450,374,152 bytes (6.94GiB).\n"
        "BufferAssignment OOM Debugging.\nBufferAssignment stats:\n"
        "             parameter allocation: 1,352,914,698 bytes (1.26GiB)\n"
    )
    r = parse_oom(text, "x")
    assert (r.requested_bytes, r.stat_bytes()) == (7450374152, {"parameter allocation": 1352914698})
    assert r.stat("parameter allocation").size.text == "1,352,914,698 bytes (1.26GiB)"


# ---- wrapped forms of real samples ------------------------------------------------------
def glog(t):
    return "\n".join(f"I1123 12:00:00.123456 1234 file.cc:12] {line}" for line in t.split("\n"))


def stamped(t):
    return "\n".join(f"2024-05-01 12:00:00.123: {line}" for line in t.split("\n"))


def ansi(t):
    colour = "\x1b[1;31m{}\x1b[0m"
    return "\n".join(
        colour.format(line).replace("Size", "\x1b[32mSize\x1b[39m") for line in t.split("\n")
    )


def hard_wrapped(t, width=80):
    return "\n".join(
        line[i : i + width] for line in t.split("\n") for i in range(0, max(len(line), 1), width)
    )


def reindented(t):
    return textwrap.indent(t, "    ")


def dedented(t):
    return "\n".join(line.strip() for line in t.split("\n"))


def in_traceback(t):
    return (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        "    state = step(state, batch)\njaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: "
        + t
    )


def markdown_quote(t):
    return "```\n" + "\n".join("> " + line for line in t.split("\n")) + "\n```"


def html_pre(t):
    return "<pre><code>" + html.escape(t).replace(">", "&gt;") + "</code></pre>"


WRAPPINGS = [
    glog,
    stamped,
    ansi,
    hard_wrapped,
    reindented,
    dedented,
    in_traceback,
    markdown_quote,
    html_pre,
]


@pytest.mark.parametrize("wrap", WRAPPINGS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "name",
    [
        "gpu-jax-2024-peak-buffers.txt",
        "tpu-tf1-2019-largest-program-allocations.txt",
        "tpu-jax-2024-largest-program-allocations.txt",
        "easydel-166-tpu-hbm.txt",
        "jax-27354-remat-bfc.txt",
        "diffusers-8358-tpu-buffer.txt",
    ],
)
def test_wrapped_text_gives_the_same_report(name, wrap):
    text = read(name)
    wrapped = wrap(text)
    assert looks_like_oom(wrapped)
    assert parse_oom(wrapped, name).figures() == parse_oom(text, name).figures()
    assert [r.figures() for r in find_ooms(wrapped)] == [r.figures() for r in find_ooms(text)]


@pytest.mark.parametrize("width", [60, 80, 100])
@pytest.mark.parametrize(
    "name",
    [
        "gpu-jax-2024-peak-buffers.txt",
        "tpu-tf1-2019-largest-program-allocations.txt",
        "easydel-166-tpu-hbm.txt",
    ],
)
def test_word_wrapped_text_gives_the_same_figures(name, width):
    """A word wrap (as textwrap or a mail client does it) drops the space where it
    breaks, so an op_name may lose a space; every figure stays."""

    def figures(text):
        return [
            (r.format, r.capacity_bytes, r.used_bytes, r.over_bytes)
            + tuple(f.without_line() for f in r.stats)
            + tuple(
                (
                    e.size_bytes,
                    e.unpadded_bytes,
                    e.shape,
                    e.instruction,
                    e.opcode,
                    (e.op_name or "").replace(" ", ""),
                )
                for e in r.entries
            )
            for r in find_ooms(text)
        ]

    text = read(name)
    wrapped = "\n".join(
        "\n".join(textwrap.wrap(line, width, break_on_hyphens=False)) for line in text.split("\n")
    )
    assert figures(wrapped) == figures(text)


def test_line_numbers_survive_prefixes_and_count_wrapped_lines():
    text = read("tpu-tf1-2019-largest-program-allocations.txt")
    assert parse_oom(glog(text), "x").entries[0].line == 23
    wrapped = hard_wrapped(text)
    r = parse_oom(wrapped, "x")
    assert wrapped.split("\n")[r.line - 1].startswith("Compilation failure: Ran out of memory")


def test_a_line_that_does_not_fit_is_reported_with_its_column():
    text = read("tpu-tf1-2019-largest-program-allocations.txt").replace(
        "Unpadded size: 40.50M", "Unpadded size: forty"
    )
    r = parse_oom(text, "oom.txt")
    (d,) = r.diagnostics
    assert (d.path, d.line) == ("oom.txt", 26)
    assert "unpadded size: column 16: expected" in d.message
    assert r.entries[0].unpadded_bytes is None and r.entries[0].size_bytes == M(512.00)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n",
        (SAMPLES.parent / "tui" / "hlotop" / "units.py").read_text(),
        open(glob.glob(str(SAMPLES / "cpu" / "mlp_adam" / "*-buffer-assignment.txt"))[0]).read(),
        "RESOURCE_EXHAUSTED: Failed to allocate 50331648 bytes for new constant",
    ],
    ids=["empty", "blank", "python", "buffer-assignment", "other-resource-exhausted"],
)
def test_other_text_is_not_an_oom(text):
    assert parse_oom(text, "x") is None
    assert find_ooms(text) == []
    assert not looks_like_oom(text)


# ---- linking entries to a loaded module ----------------------------------------------------
@pytest.fixture(scope="module")
def tpu_module():
    return load(glob.glob(sample("tpu/v5e_1x1-mlp_adam") + "/*-buffer-assignment.txt")[0])


def test_link_by_instruction_name_and_shape(tpu_module):
    entry = OomEntry(
        Size.of_bytes(1048576),
        shape="f32[512,512]{1,0:T(8,128)}",
        label="custom-call.2 = custom-call(...)",
        instruction="custom-call.2",
        opcode="custom-call",
    )
    link = find_value(tpu_module, entry)
    assert (link.value.value.name, link.value.value.id, link.rule, link.candidates) == (
        "custom-call.2",
        699,
        "label+shape",
        1,
    )


def test_link_by_opcode_and_shape_prefers_the_op_name(tpu_module):
    op_name = "jit(train_step)/transpose(jvp())/dot_general"
    entry = OomEntry(
        Size.of_bytes(1048576),
        shape="f32[512,512]",
        label="fusion",
        opcode="fusion",
        op_name=op_name,
    )
    link = find_value(tpu_module, entry)
    assert link.rule == "label+shape" and link.candidates > 1
    assert link.value.op_name == op_name and link.value.allocated_bytes == 1048576


def test_link_by_op_name_and_shape_then_none(tpu_module):
    by_op = OomEntry(
        Size.of_bytes(1048576), shape="f32[512,512]", instruction="gone.1", op_name="params[1]['w']"
    )
    missing = OomEntry(
        Size.of_bytes(1048576), shape="f32[3,3]", instruction="gone.1", op_name="params[1]['w']"
    )
    linker = OomLinker(tpu_module)
    link = linker.find(by_op)
    assert (link.value.value.id, link.rule) == (651, "op_name+shape")
    assert linker.find(missing) is None
    assert link_entries(tpu_module, [by_op, missing]) == [link, None]
    assert shape_without_layout("(f32[2]{0}, /*index=5*/s32[] )") == "(f32[2],s32[])"


def test_a_lazily_loaded_module_is_linked_from_one_pass_over_its_records(monkeypatch):
    """Indexing every value by opcode and op_name read each record at random, twice (a
    108 MB dump: 12 s); now they are read once, in dump order, with the same links."""
    from hlotop.model import UsedValues

    path = glob.glob(sample("tpu/v5e_1x1-mlp_adam") + "/*-buffer-assignment.txt")[0]
    entries = [
        OomEntry(
            Size.of_bytes(1048576),
            shape="f32[512,512]",
            opcode="fusion",
            label="fusion",
            op_name="jit(train_step)/transpose(jvp())/dot_general",
        ),
        OomEntry(
            Size.of_bytes(1048576),
            shape="f32[512,512]",
            instruction="gone.1",
            op_name="params[1]['w']",
        ),
    ]
    eager = link_entries(load(path), entries)
    lazy_module = load(path, lazy=True)
    at_random: list[int] = []
    record = UsedValues.record
    monkeypatch.setattr(
        UsedValues, "record", lambda self, n: at_random.append(n) or record(self, n)
    )
    lazy = link_entries(lazy_module, entries)
    monkeypatch.setattr(UsedValues, "record", record)
    assert at_random == []
    assert [(x.value.value.id, x.rule, x.candidates) for x in lazy] == [
        (x.value.value.id, x.rule, x.candidates) for x in eager
    ]
    assert [x.rule for x in lazy] == ["label+shape", "op_name+shape"]


# ---- robustness -------------------------------------------------------------------------
_TEXTS = [read(p.name) for p in sorted(OOM.glob("*.txt"))]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_any_cut_or_mutation_of_a_sample_reads_or_gives_none(data):
    text = data.draw(st.sampled_from(_TEXTS))
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    junk = data.draw(st.text(alphabet="0123456789.,:;()[]{}%GiMKB \n\t=>'\"x", max_size=12))
    mutated = text[:start] + junk + text[end:]
    for report in find_ooms(mutated, "m"):
        assert report.format in OOM_FORMATS
        assert all(e.size_bytes >= 0 for e in report.entries)
    parse_oom(mutated, "m")
    looks_like_oom(mutated)
