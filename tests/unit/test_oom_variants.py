"""OOM texts as users paste them (issue 31): every real sample in sample_dumps/oom/,
and variants made here from each (a log prefix of each kind on every line, ANSI
colour, markdown, leading line numbers, re-wrapped at 60 columns mid-word, one
sentence a line, newlines collapsed, the headline removed, two texts one after the
other), read with the same figures as the clean text; each report and buffer names
the file's own line."""

from __future__ import annotations

import re

import pytest

from conftest import SAMPLES
from hlotop.parse.oom import find_ooms

OOM = SAMPLES / "oom"
NAMES = sorted(p.name for p in [*OOM.glob("*.txt"), *OOM.glob("*.log")])


def read(name: str) -> str:
    return (OOM / name).read_text()


def figures(text: str, spaced: bool = True) -> list:
    """Every report's figures; with ``spaced`` False, the op_names and labels without
    their spaces (newlines collapsed into spaces put one where a hard wrap had cut a
    name: ``.../jit(main)/a lphafold/...``, which no reader can tell from a space)."""
    found = [r.figures() for r in find_ooms(text, "x")]
    if spaced:
        return found
    return [
        (*f[:-1], tuple((e.op_name or "").replace(" ", "") + (e.label or "") for e in f[-1]))
        for f in found
    ]


def per_line(t: str, f) -> str:
    return "\n".join(f(line) for line in t.split("\n"))


# ---- the variants ----------------------------------------------------------------------
def glog(t):  # google-deepmind/alphafold#392
    return per_line(t, lambda x: f"I0309 12:51:51.366992 140505975940928 run_docker.py:247] {x}")


def stamped_level_thread(t):  # TF's C++ logging
    return per_line(t, lambda x: f"2020-05-04 09:05:40.719745: E 1578 xla_util.cc:76] {x}")


def ray_coloured(t):  # Ray's worker prefix, in colour
    return per_line(t, lambda x: f"\x1b[36m(MeshHostWorker pid=489)\x1b[0m {x}")


def ansi(t):
    return per_line(t, lambda x: f"\x1b[1;31m{x}\x1b[0m".replace("Size", "\x1b[32mSize\x1b[39m"))


def osc_links(t):  # a terminal's hyperlinks around each line
    return per_line(t, lambda x: f"\x1b]8;;file:///log\x1b\\{x}\x1b]8;;\x1b\\")


def line_numbers(t):  # cat -n
    return "\n".join(f"{i:6d}\t{x}" for i, x in enumerate(t.split("\n"), 1))


def editor_numbers(t):  # an editor's or a pastebin's copy
    return "\n".join(f"{i}: {x}" for i, x in enumerate(t.split("\n"), 1))


_KEYS = re.compile(r"(Size:|Peak buffers:|Stats:|Limit:|Shape:|XLA [Ll]abel:|Operator:)")


def markdown(t):
    def line(x):
        x = _KEYS.sub(r"**\1**", x)
        x = re.sub(r"^(\s*\d+)\. ", r"\1\\. ", x)
        return "> " + x

    return per_line(t, line)


def wrapped_60(t):  # cut every 60 columns, mid-word
    return "\n".join(x[i : i + 60] for x in t.split("\n") for i in range(0, max(len(x), 1), 60))


def sentence_a_line(t):
    return re.sub(r"(?<=\.) (?=[A-Z])", "\n", t)


def collapsed(t):  # newlines become spaces (a one-line copy)
    return " ".join(t.split("\n"))


def literal_newlines(t):  # a repr: "\n" written out
    return "\\n".join(t.split("\n"))


VARIANTS = [
    glog,
    stamped_level_thread,
    ray_coloured,
    ansi,
    osc_links,
    line_numbers,
    editor_numbers,
    markdown,
    wrapped_60,
    sentence_a_line,
    collapsed,
    literal_newlines,
]


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", NAMES)
def test_a_variant_reads_with_the_clean_texts_figures(name, variant):
    text = read(name)
    spaced = variant is not collapsed
    expected = figures(text, spaced)
    assert expected, name
    assert figures(variant(text), spaced) == expected


@pytest.mark.parametrize("variant", [glog, ray_coloured, line_numbers, wrapped_60, markdown])
@pytest.mark.parametrize("name", NAMES)
def test_lines_are_the_files_own(name, variant):
    """A report's and a buffer's line is the file's: where its first line starts (a
    wrap's first piece)."""
    text = read(name)
    physical = variant(text).split("\n")
    for report in find_ooms(variant(text), "x"):
        start = (report.message or "")[:12].replace("\\", "")
        at = re.sub(r"\x1b\[[0-9;]*m", "", physical[report.line - 1])
        at = at.replace("\\", "").replace("**", "").rstrip()
        # the headline starts on that line (a wrap may cut it after a few letters)
        assert start in at or any(at.endswith(start[:n]) for n in range(1, 12)), (
            report.line,
            start,
            at,
        )
        for entry in report.entries:
            at = physical[entry.line - 1]
            assert re.search(r"Buffer \d+:|Size|\d", at), (entry.line, at)


# ---- a headline left out; two texts one after the other -------------------------------------
def _without_headlines(text: str) -> tuple[str, list]:
    """``text`` without the lines of each headline that has a body block after it, and
    the reports' stats and entries the rest should read to."""
    lines = text.split("\n")
    drop: set[int] = set()
    bodies = []
    for report in find_ooms(text, "x"):
        if report.headline and len(report.blocks) > 1 and report.blocks[1].kind != "runtime-error":
            drop.update(range(report.line, report.blocks[1].line))
            bodies.append(_body(report))
    return "\n".join(x for n, x in enumerate(lines, 1) if n not in drop), bodies


def _body(report) -> tuple:
    return (
        tuple(f.without_line() for f in report.stats),
        tuple(e.without_line() for e in report.entries),
    )


WITH_BODIES = [n for n in NAMES if _without_headlines(read(n))[1]]


@pytest.mark.parametrize("name", WITH_BODIES)
def test_a_body_without_its_headline_reads_alike(name):
    """Each report's usage table, stats and buffers, read with no headline before
    them (one that opens no report of its own: the remat pass's warning does)."""
    text, bodies = _without_headlines(read(name))
    headless = [_body(r) for r in find_ooms(text, "x") if not r.headline]
    assert headless == bodies


PARTNER = "tpu-tf1-2019-largest-program-allocations.txt"


@pytest.mark.parametrize("name", NAMES)
def test_two_texts_one_after_the_other_give_both(name):
    other = PARTNER if name != PARTNER else "jax-0.11.2-h200-combined_oom.log"
    first, second = read(name), read(other)
    both = first + ("" if first.endswith("\n") else "\n") + second
    assert figures(both) == figures(first) + figures(second)
    offset = first.count("\n") + (0 if first.endswith("\n") else 1)
    lines = [r.line for r in find_ooms(both, "x")]
    assert lines == [r.line for r in find_ooms(first, "x")] + [
        r.line + offset for r in find_ooms(second, "x")
    ]
