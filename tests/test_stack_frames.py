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
