"""The metadata of the computations in a module's HLO text (for the fusions XLA leaves
without any): the ROOT's op_name, else the last one's, read only for those lines."""

from __future__ import annotations

from conftest import swept
from hlotop.parse.computations import computation_metadata
from hlotop.parse.instruction import read_metadata

TEXTS = sorted(swept("*_after_optimizations.txt"))


def _every_line(lines) -> dict[str, tuple[str, int | None]]:
    """The rule as first written: every instruction's metadata read as it comes."""
    import re

    header = re.compile(r"^(?:ENTRY )?%([^\s(]+) .*\{$")
    out, current, last, root = {}, None, None, None
    for line in lines:
        if current is None:
            if (m := header.match(line)) is not None:
                current, last, root = m.group(1), None, None
            continue
        if line.startswith("}"):
            if (root or last) is not None:
                out[current] = root or last
            current = None
            continue
        at = line.find("metadata={")
        if at < 0:
            continue
        meta = read_metadata(line, at)
        if not meta.get("op_name"):
            continue
        frame = meta.get("stack_frame_id")
        last = (meta["op_name"], int(frame) if frame and frame.isdigit() else None)
        if line.lstrip().startswith("ROOT "):
            root = last
    return out


def test_every_samples_computations_are_read_as_the_rule_says():
    assert len(TEXTS) >= 5
    for path in TEXTS:
        lines = path.read_text(errors="replace").splitlines()
        assert computation_metadata(lines) == _every_line(lines), path.name


def test_the_root_wins_then_the_last_with_an_op_name():
    text = """HloModule m

%fused_a (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %x = f32[2]{0} add(%p, %p), metadata={op_name="jit(f)/add" stack_frame_id=3}
  ROOT %y = f32[2]{0} multiply(%x, %x), metadata={op_name="jit(f)/mul"}
}

%fused_b (p: f32[2]) -> f32[2] {
  %x = f32[2]{0} add(%p, %p), metadata={op_name="jit(f)/first"}
  %z = f32[2]{0} add(%x, %x), metadata={op_name="jit(f)/second" stack_frame_id=7}
  ROOT %y = f32[2]{0} multiply(%z, %z), metadata={op_type="Mul"}
}

%fused_c (p: f32[2]) -> f32[2] {
  ROOT %y = f32[2]{0} negate(%p)
}
"""
    assert computation_metadata(text.splitlines()) == {
        "fused_a": ("jit(f)/mul", None),
        "fused_b": ("jit(f)/second", 7),
    }
