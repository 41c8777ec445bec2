"""jax >= 0.9 metadata names a stack_frame_id; the module's HLO text beside the dump
resolves it to a Python stack."""

from __future__ import annotations

from conftest import SAMPLES
from hlotop import load

MLP = SAMPLES / "jax" / "jax-0.10.2" / "mlp_train"


def test_stack_frame_id_resolves_to_the_python_stack():
    m = load(next(MLP.glob("*-buffer-assignment.txt")))
    assert [f.kind for f in m.files][-1] == "module-text"
    dot = next(i for i in m.analysis.values if i.value.name == "dot.1")
    assert dot.used.instruction.stack_frame_id is not None
    assert dot.used.instruction.source_file is None  # not in jax >= 0.9 metadata
    functions = [f.function for f in dot.stack]
    assert functions[0] == "run_mlp_train.<locals>.loss_fn"
    assert functions[1] == "run_mlp_train.<locals>.train_step"
    assert functions[-1] == "<module>"
    assert all(f.file.endswith("scripts/generate_dumps.py") for f in dot.stack)
    assert dot.source == f"{dot.stack[0].file}:{dot.stack[0].line}"


def test_naming_the_module_text_opens_its_buffer_assignment():
    text = next(p for p in MLP.glob("*.txt") if p.name.endswith("_after_optimizations.txt"))
    m = load(text)
    assert m.name == text.stem and len(m.allocations) == 38 and m.diagnostics == []


def test_older_dumps_use_source_file_metadata_and_have_no_stack():
    m = load(SAMPLES / "seeds" / "002_c2e226da3172e77e.txt")
    info = next(i for i in m.analysis.values if i.value.name == "concatenate.1")
    assert info.stack == ()
    assert info.source.endswith("linear_common.py:71")


def test_the_tables_are_read_to_the_first_computation_whatever_xla_prints_before_names():
    """jax 0.4.35's HLO text prints no tables and its computations without ``%``
    (``fused_computation {``): its 162 MB were read to the end, a second of every
    --summary. Reading stops at the first computation, with or without ``%``."""
    from hlotop.parse.stack_frames import parse_stack_frames
    from hlotop.parse.tokens import Sink

    read: list[int] = []

    def lines(body: list[str]):
        for k, line in enumerate(body):
            read.append(k)
            yield line

    old = ["HloModule jit_f, is_scheduled=true", "", "", "fused_computation {"]
    old += ["  p = f32[] parameter(0)"] * 1000 + ["}"]
    assert parse_stack_frames("x.txt", lines(old), Sink("x.txt", [])) is None
    assert max(read) == 3  # stopped at "fused_computation {"
    read.clear()
    new = ["HloModule jit_f", "", "FileNames", '1 "a.py"', "", "FunctionNames", '1 "f"', ""]
    new += ["FileLocations", "1 {file_name_id=1 function_name_id=1 line=7}", ""]
    new += ["StackFrames", "1 {file_location_id=1 parent_frame_id=1}", "", "%f {"]
    new += ["  p = f32[] parameter(0)"] * 1000
    frames = parse_stack_frames("x.txt", lines(new), Sink("x.txt", []))
    assert frames is not None and max(read) == 14
    assert [(f.file, f.function, f.line) for f in frames.stack(1)] == [("a.py", "f", 7)]


def test_json_writes_each_python_stack_once_and_reuses_its_text():
    """--json writes a record's stack from the text made for the first record of its
    stack_frame_id: the same text as made for each record, made once per stack."""
    import json

    from hlotop.report.json_table import Context
    from hlotop.report.json_text import FORMATTERS

    m = load(next(MLP.glob("*-buffer-assignment.txt")))
    frames = m.sections.stack_frames
    records = list(m.sections.used_values)
    ids = [r.instruction.stack_frame_id for r in records if r.instruction is not None]
    assert len(set(ids)) < len(ids)  # records share stacks: the case to reuse
    ctx = Context(frames=frames)
    written = [json.loads(FORMATTERS["used_value"](r, ctx)) for r in records]
    fresh = [json.loads(FORMATTERS["used_value"](r, Context(frames=frames))) for r in records]
    assert written == fresh
    assert sum(1 for d in written if d["stack"]) > 0
    assert sorted(k[2] for k in ctx.texts if k[2] is not None) == sorted(
        {i for i in ids if i is not None}
    )
    dot = next(d for d in written if d["name"] == "dot.1")
    assert dot["stack"][0]["function"] == "run_mlp_train.<locals>.loss_fn"
