"""Mutations of real dumps and the properties hlotop must keep under them.

Shared by ``tests/test_fuzz.py`` (a small example budget, run by CI) and
``scripts/fuzz.py`` (a long run with a large budget).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from hlotop.loading.loader import LoadError, load

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_dumps"
# Small, combined dumps of several eras: the seeds and a few real JAX dumps.
CORPUS = sorted((SAMPLES / "seeds").glob("*.txt")) + sorted(
    p for p in (SAMPLES / "jax").glob("jax-0.[4569]*/tuple_outputs/*-buffer-assignment.txt")
)
GARBAGE_MARK = "%%garbage%%"

_CACHE: dict[Path, tuple[bytes, object]] = {}


def original(path: Path):
    """The sample's bytes and its module, loaded once."""
    if path not in _CACHE:
        _CACHE[path] = (path.read_bytes(), load(path))
    return _CACHE[path]


def figures(module) -> tuple:
    """What must not change when only garbage lines are added."""
    return (
        [
            (
                a.index,
                a.size,
                a.color,
                a.kinds,
                [(s.value.id, s.offset, s.size, s.shape) for s in a.values],
            )
            for a in module.allocations
        ],
        module.total_bytes_used,
        [(b.key, b.start, b.end) for b in module.live_range.buffers] if module.live_range else None,
        module.analysis.peak_step,
    )


@dataclass
class Mutation:
    kind: str
    at: int
    other: int = 0
    text: str = ""


garbage_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"), max_size=40
)


@st.composite
def garbage_insertions(draw, n_lines: int):
    """1-3 lines of garbage at random places (line indexes into the original)."""
    count = draw(st.integers(1, 3))
    return [
        Mutation("insert", draw(st.integers(0, n_lines)), text=GARBAGE_MARK + draw(garbage_text))
        for _ in range(count)
    ]


@st.composite
def mutations(draw, n_lines: int, n_bytes: int):
    kind = draw(st.sampled_from(["truncate", "delete", "duplicate", "swap", "insert", "flip"]))
    if kind == "truncate":
        return Mutation(kind, draw(st.integers(0, n_bytes)))
    if kind == "flip":
        return Mutation(kind, draw(st.integers(0, max(0, n_bytes - 1))), draw(st.integers(1, 255)))
    if kind == "insert":
        return Mutation(kind, draw(st.integers(0, n_lines)), text=draw(garbage_text))
    at = draw(st.integers(0, max(0, n_lines - 1)))
    return Mutation(kind, at, draw(st.integers(0, max(0, n_lines - 1))))


def apply(data: bytes, muts: list[Mutation]) -> tuple[bytes, list[int]]:
    """The mutated bytes, and the 1-based line numbers of inserted garbage lines."""
    for m in muts:
        if m.kind == "truncate":
            data = data[: m.at]
        elif m.kind == "flip":
            if data:
                b = bytearray(data)
                b[m.at % len(b)] ^= m.other
                data = bytes(b)
    lines = data.split(b"\n")
    inserted: list[int] = []
    for m in muts:
        if m.kind == "delete" and lines:
            del lines[m.at % len(lines)]
        elif m.kind == "duplicate" and lines:
            i = m.at % len(lines)
            lines.insert(i, lines[i])
        elif m.kind == "swap" and lines:
            i, j = m.at % len(lines), m.other % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        elif m.kind == "insert":
            i = min(m.at, len(lines))
            lines.insert(i, m.text.encode())
            inserted = [x + 1 if x > i else x for x in inserted] + [i + 1]
    return b"\n".join(lines), sorted(inserted)


def load_mutated(data: bytes, name: str = "fuzz-buffer-assignment.txt"):
    """Load mutated bytes from a temporary file: the module, or the LoadError."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        try:
            return load(path)
        except LoadError as err:
            return err


def check_any_mutation(data: bytes) -> None:
    """Property: the loader never raises; it gives a module whose diagnostics point at
    real lines, or a one-line refusal."""
    result = load_mutated(data)
    if isinstance(result, LoadError):
        assert "\n" not in str(result)
        return
    n_lines = data.count(b"\n") + 1
    for d in result.diagnostics:
        assert 0 <= d.line <= n_lines + 1, d
        assert "\n" not in d.message
    assert result.analysis.live_bytes is not None  # analysis is complete


def check_garbage(path: Path, muts: list[Mutation]) -> None:
    """Property: every inserted garbage line is reported at its line number, and
    nothing else changes."""
    data, module = original(path)
    mutated, inserted = apply(data, muts)
    result = load_mutated(mutated)
    assert not isinstance(result, LoadError), result
    errors = sorted({d.line for d in result.diagnostics if d.severity == "error"})
    assert errors == inserted, (errors, inserted)
    assert figures(result) == figures(module)
