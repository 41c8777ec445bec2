"""Issue 31: real out-of-memory texts as users paste them from logs. Each test is one
of the issue's bugs, on a real sample (sample_dumps/oom/) or a real sample changed as
the issue's held-out texts were (a prefix, markup, a wrap, a headline left out); each
failed on the code before the block readers (checked against 96655e8^)."""

from __future__ import annotations

import glob
import json
import re

import pytest

from conftest import SAMPLES, hlotop
from hlotop.parse.oom import find_ooms

OOM = SAMPLES / "oom"
TPU = OOM / "tpu-jax-2024-largest-program-allocations.txt"
COMBINED = OOM / "jax-0.11.2-h200-combined_oom.log"


def read(name: str) -> str:
    return (OOM / name).read_text()


def G(x: float) -> int:
    return round(x * 2**30)


def stat_names(report) -> list[str]:
    return [f.name for f in report.stats]


def summary(*args: str, stdin: bytes | None = None):
    out = hlotop("--summary", *args, stdin=stdin)
    return out.returncode, out.stdout.decode(), out.stderr.decode()


# ---- refused texts that are OOMs ---------------------------------------------------------
def test_glog_prefixed_peak_buffers_with_no_headline():
    """alphafold#392: 'I0309 12:51:51.366992 140505975940928 run_docker.py:247]' on every
    line, two 'Buffer N:' entries and no headline: read, each buffer at its line."""
    (report,) = find_ooms(read("gpu-alphafold-docker-log-prefixed-fragment.txt"), "a")
    assert (report.format, report.memory_space, report.headline) == (
        "gpu-buffer-assignment",
        "device",
        False,
    )
    assert [(e.rank, e.size_bytes, e.shape, e.line) for e in report.entries] == [
        (2, 2350 * 2350 * 128 * 4, "f32[2350,2350,128]", 3),
        (3, 5522500 * 128 * 4, "f32[5522500,128]", 10),
    ]
    assert report.entries[0].source == "/app/alphafold/alphafold/model/modules.py:93"


def test_bfc_stats_in_human_units_with_no_headline():
    """Reactant.jl#2632: 'Stats:' in GiB with no 'ran out of memory' line; NumAllocs is
    a count, not bytes; then the GPU scheduler's line: two reports."""
    bfc, schedule = find_ooms(read("gpu-reactant-2026-bfc-stats-human-units.txt"), "r")
    assert (bfc.format, bfc.headline, bfc.line) == ("bfc-allocator", False, 1)
    assert (bfc.capacity.text, bfc.capacity.exact, bfc.used.text) == ("89.77GiB", False, "81.00GiB")
    assert (bfc.stat("NumAllocs").count, bfc.stat("NumAllocs").size) == (3, None)
    assert bfc.stat("LargestFreeBlock").size.bytes == 0
    assert bfc.stat("available size").size.bytes == 153
    assert (schedule.format, schedule.used_bytes, schedule.target_bytes, schedule.line) == (
        "gpu-schedule",
        86973087744,
        81174881894,
        13,
    )


# (The other prefixes of the issue, glog's, the timestamp with level and thread, Ray's
# in colour, are in test_oom_variants.py, on every sample.)
PREFIXES = {
    "line numbers (cat -n)": "{n:6d}\t{}",
    "line numbers (an editor's copy)": "{n}: {}",
}


@pytest.mark.parametrize("prefix", PREFIXES.values(), ids=list(PREFIXES))
def test_a_prefix_on_every_line(prefix):
    clean = TPU.read_text()
    text = "\n".join(prefix.format(x, n=n) for n, x in enumerate(clean.split("\n"), 1))
    (report,) = find_ooms(text, "p")
    (expected,) = find_ooms(clean, "p")
    assert report.figures() == expected.figures()
    assert (report.line, [e.line for e in report.entries]) == (1, [17, 25])


def test_markdown_bold_escaped_list_numbers_and_quotes():
    clean = TPU.read_text()
    text = "\n".join(
        "> " + re.sub(r"^(\s*\d+)\. Size:", r"\1\\. **Size:**", x) for x in clean.split("\n")
    )
    text = text.replace(
        "Largest program allocations in hbm:", "**Largest program allocations in hbm:**"
    )
    (report,) = find_ooms(text, "m")
    (expected,) = find_ooms(clean, "m")
    assert report.figures() == expected.figures()
    assert [e.rank for e in report.entries] == [1, 2]


def test_a_report_body_without_its_headline():
    """The usage table alone, and the list of largest allocations alone."""
    clean = TPU.read_text()
    (expected,) = find_ooms(clean, "h")
    body = clean.split("\n", 1)[1]
    (report,) = find_ooms(body, "h")
    assert (report.format, report.memory_space, report.headline) == ("tpu-compile", "hbm", False)
    assert [f.without_line() for f in report.stats] == [f.without_line() for f in expected.stats]
    assert [e.without_line() for e in report.entries] == [
        e.without_line() for e in expected.entries
    ]
    assert report.capacity is None and report.used is None  # the headline's, not printed
    listing = clean[clean.index("  Largest program allocations") :]
    (alone,) = find_ooms(listing, "l")
    assert [e.size.text for e in alone.entries] == ["1.46G", "144.00M"]
    assert (alone.memory_space, alone.entries[0].line) == ("hbm", 3)


def test_a_bare_vmem_headline_with_no_figures():
    text = (
        b"jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem.\n"
    )
    rc, out, err = summary("-", stdin=text)
    assert rc == 0, err
    assert re.search(r"^Out of memory +tpu-compile: vmem", out, re.M)
    assert "the text gives no figure" in out


def test_a_reserve_error_without_its_prefix_and_a_program_load_cut_short():
    reserve = (
        "Attempting to reserve 29.49G at the bottom of memory. That was not possible. "
        "There are 147.64M free, 0B reserved, and 147.64M reservable."
    )
    (r,) = find_ooms(reserve, "x")
    assert (r.format, r.requested.text, r.stat("free").size.text) == (
        "tpu-program-load",
        "29.49G",
        "147.64M",
    )
    cut = (
        "XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program "
        "'jit_embedding_pipeline_step_fn': Attempting to reserve 29.49G at the bottom of "
        "memory. That was not possi"
    )
    (c,) = find_ooms(cut, "x")
    assert (c.format, c.program, c.requested.text, c.over) == (
        "tpu-program-load",
        "jit_embedding_pipeline_step_fn",
        "29.49G",
        None,
    )


def test_a_text_broken_one_sentence_a_line_and_a_word_cut_by_a_wrap():
    clean = TPU.read_text()
    broken = re.sub(r"(?<=[a-z0-9G]\.) (?=[A-Z])", "\n", clean)
    (report,) = find_ooms(broken, "s")
    assert (report.capacity_bytes, report.used_bytes, report.over_bytes) == (
        G(15.48),
        G(30.21),
        G(14.73),
    )
    assert (report.capacity.text, report.used.text, report.over.text) == (
        "15.48G",
        "30.21G",
        "14.73G",
    )
    cut = "RESOURCE_EXHAUSTED:\nOut of memory while trying to allo\ncate 17528955952 bytes.\n"
    (r,) = find_ooms(cut, "w")
    assert (r.requested_bytes, r.line) == (17528955952, 2)


def test_newlines_collapsed_into_spaces():
    clean = TPU.read_text()
    (report,) = find_ooms(" ".join(clean.split()), "c")
    (expected,) = find_ooms(clean, "c")
    assert report.figures() == expected.figures()


# ---- what a read text says ---------------------------------------------------------------
def test_every_usage_line_is_kept():
    """'arguments 64.32M (99.9% utilization)' and 'Output size ...; shares ...' in a
    usage table with no headline before it."""
    text = (
        "Total hbm usage >= 30.73G:\n"
        "    reserved        530.00M \n"
        "    program          14.31G \n"
        "    arguments        64.32M (99.9% utilization)\n\n"
        "Output size 64.32M; shares 64.32M with arguments.\n"
    )
    (report,) = find_ooms(text, "u")
    assert stat_names(report) == [
        "total usage",
        "total usage: reserved",
        "total usage: program",
        "total usage: arguments",
        "output",
        "output shared with arguments",
    ]
    assert report.stat("total usage: arguments").note == "99.9% utilization"
    assert report.diagnostics == ()


def test_every_oom_of_a_file_is_reported_with_its_line():
    doc = json.loads(hlotop("--json", str(COMBINED)).stdout)
    assert [(r["format"], r["line"]) for r in doc["ooms"]] == [
        ("gpu-schedule", 1),
        ("remat", 2),
        ("bfc-allocator", 3),
    ]
    rc, out, _ = summary(str(COMBINED))
    assert rc == 0
    assert len(re.findall(r"^\d\. Out of memory ", out, re.M)) == 3
    assert len(re.findall(r"^Where ", out, re.M)) == 3
    gpu = json.loads(hlotop("--json", str(OOM / "gpu-jax-2024-peak-buffers.txt")).stdout)
    assert [e["line"] for e in gpu["oom"]["entries"]][:3] == [24, 30, 37]


def test_the_exact_bytes_the_text_prints_and_no_others():
    """'(rounded to 160000000000)' is the request's bytes; a rounded figure (TPU's
    '1.46G', '15.48G') is never shown as a count of bytes worked out from it."""
    doc = json.loads(hlotop("--json", str(COMBINED)).stdout)["oom"]
    assert (doc["format"], doc["requested_bytes"]) == ("bfc-allocator", 160000000000)
    rc, out, _ = summary(str(COMBINED))
    assert "159,998,269,194" not in out and "(rounded to 160000000000)" in out
    tpu = json.loads(hlotop("--json", str(TPU)).stdout)["oom"]
    first = tpu["entries"][0]
    assert (first["size"]["text"], first["size_bytes"], first["shape_bytes"]) == (
        "1.46G",
        None,
        1572864000,
    )
    assert tpu["capacity_bytes"] is None and tpu["capacity"]["text"] == "15.48G"
    rc, out, _ = summary(str(TPU))
    assert f"{G(15.48):,}" not in out and f"{round(1.46 * 2**30):,}" not in out


def test_formats_are_labelled_truthfully():
    """A BFC allocation's runtime error is no GPU BufferAssignment report; a CPU text
    is host memory; the remat pass's target is not the device's capacity."""
    (runtime,) = find_ooms(read("jax-0.11.2-h200-oom.txt"), "o")
    assert (runtime.format, runtime.device, runtime.program) == (
        "runtime-allocation",
        "GPU_0_bfc",
        "jit__lambda",
    )
    (cpu,) = find_ooms("RESOURCE_EXHAUSTED: Out of memory allocating 4294967296 bytes.", "c")
    assert (cpu.format, cpu.memory_space, cpu.requested_bytes) == (
        "runtime-allocation",
        "host",
        4294967296,
    )
    (host,) = find_ooms("Out of host memory while trying to allocate 2.00GiB.", "h")
    assert (host.format, host.memory_space) == ("runtime-allocation", "host")
    (remat,) = find_ooms(read("jax-0.11.2-h200-remat_only.txt"), "r")
    assert (remat.capacity_bytes, remat.target_bytes) == (None, 160000000000)
    rc, out, _ = summary(str(COMBINED))
    assert "gpu-buffer-assignment" not in out and "Capacity" not in out


def test_a_refusal_names_the_nearest_block_it_saw(tmp_path):
    stats = tmp_path / "stats.log"
    stats.write_text(
        "I0000 00:00:1773083052.386479   70889 bfc_allocator.cc:1128] Stats: \n"
        "Limit:                        lots\nInUse:                        many\n"
    )
    rc, _, err = summary(str(stats))
    assert rc == 2 and err.count("\n") == 1
    assert "saw a BFC 'Stats:' block but no figure it could read at line 1" in err


def test_dump_links_say_how_many_linked():
    dump = glob.glob(str(SAMPLES / "cpu" / "mlp_adam" / "*-buffer-assignment.txt"))[0]
    alphafold = OOM / "gpu-alphafold-docker-log-prefixed-fragment.txt"
    rc, out, err = summary(str(alphafold), "--dump", dump)
    assert rc == 0, err
    assert "0 of 2 linked to" in out
