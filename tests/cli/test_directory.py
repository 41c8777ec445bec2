"""A whole --xla_dump_to directory: every module listed and ranked from its first
look, with figures equal to each module's own; --summary and --json of a directory."""

from __future__ import annotations

import json
import re

from conftest import ROOT, SAMPLES, hlotop
from hlotop import load
from hlotop.loading.directory import collapse_identical, list_modules, rank_modules

RUN = SAMPLES / "dirs" / "jax-0.10.2-cpu-train"


def test_every_module_is_listed_and_ranked_with_its_own_figures():
    entries = list_modules(RUN)
    names = sorted(p.name for p in RUN.glob("*-buffer-assignment.txt"))
    assert sorted(e.path.name for e in entries) == names and len(names) == 19
    assert all(len(e.files) == 4 and e.platform == "cpu" for e in entries)
    figures = rank_modules(entries)
    assert figures[0].entry.name == "module_0034.jit_train_step.cpu_after_optimizations"
    peaks = [f.peak_bytes for f in figures]
    assert peaks == sorted(peaks, reverse=True)
    for f in figures:  # the first look's figures are the whole load's
        module = load(f.entry.path)
        a = module.analysis
        assert (f.total_bytes_used, f.allocations) == (
            module.total_bytes_used,
            len(module.allocations),
        )
        assert (f.peak_step, f.peak_bytes) == (a.peak_step, a.peak_bytes)
        # memory_analysis()'s sizes are the allocation lines'; its peak_memory_in_bytes
        # needs the value lines, which the first look does not read.
        assert f.memory_stats.as_dict() == a.memory_stats.as_dict() and f.error is None
        assert f.memory_stats.peak_memory_in_bytes is None


def test_one_program_compiled_alike_is_one_row():
    rows = collapse_identical(rank_modules(list_modules(RUN)))
    counts = {f.entry.name.split(".")[1]: n for f, n in rows}
    # jit_convert_element_type is compiled twice with the same buffers; the three
    # jit__normal modules differ in size, and so stay apart.
    assert counts["jit_convert_element_type"] == 2
    assert sum(1 for f, _ in rows if ".jit__normal." in f.entry.name) == 3
    assert sum(n for _, n in rows) == 19


def test_summary_and_json_of_a_directory():
    path = str(RUN.relative_to(ROOT))
    text = hlotop("--summary", path)
    assert text.returncode == 0, text.stderr
    out = text.stdout.decode()
    assert "Modules  " in out and "19 modules" in out
    assert "Largest single program: 9.18MiB XLA peak, module_0034.jit_train_step" in out
    doc = json.loads(hlotop("--json", path).stdout)
    first = doc["modules"][0]
    module = load(RUN / "module_0034.jit_train_step.cpu_after_optimizations-buffer-assignment.txt")
    assert first["name"] == "module_0034.jit_train_step.cpu_after_optimizations"
    assert (first["platform"], first["total_bytes_used"], first["peak_bytes"]) == (
        "cpu",
        module.total_bytes_used,
        module.analysis.peak_bytes,
    )
    assert first["memory_stats"] == module.analysis.memory_stats.as_dict()
    assert len(first["files"]) == 4 and sum(m["identical"] for m in doc["modules"]) == 19
    # The largest of each platform (one here); no module is known by its report alone.
    assert doc["largest_peak"] == {
        "cpu": {"module": first["name"], "bytes": module.analysis.peak_bytes}
    }
    assert doc["largest_report_total"] == {} and first["rank"] == 1
    assert not any(m["report_only"] for m in doc["modules"])
    wrong = hlotop("--export", "csv", path)
    assert wrong.returncode == 2 and "name one" in wrong.stderr.decode()


def test_a_directory_with_one_module_still_opens_it(tmp_path):
    for f in RUN.glob("module_0036.*"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    out = hlotop("--summary", str(tmp_path))
    assert out.returncode == 0 and "module_0036.jit_evaluate" in out.stdout.decode()
    assert "Modules  " not in out.stdout.decode()


def test_the_summary_of_a_directory_fits_80_columns_with_every_name_whole(monkeypatch):
    """At 80 columns the columns give way as in the browser's list (the platform, then
    output and argument), a line says which, and no module name is cut mid-word; at 200
    every column is there."""
    import io

    from rich.console import Console

    from hlotop.report.modules_report import ModulesTable, short_module_name

    path = str(RUN.relative_to(ROOT))
    monkeypatch.setenv("COLUMNS", "80")
    lines = hlotop("--summary", path).stdout.decode().splitlines()
    assert max(len(line) for line in lines) <= 80
    header = next(line for line in lines if line.lstrip().startswith("#  module"))
    assert header.split() == ["#", "module", "XLA", "peak", "total", "temp", "allocs", "×"]
    assert "left out at 80 columns: platform, output, argument (--json has them)" in lines
    rows = collapse_identical(rank_modules(list_modules(RUN)))
    names = [short_module_name(f.entry.name) for f, _ in rows]
    body = "\n".join(lines)
    for name in names:  # whole, or broken after . _ - only
        assert all(piece in body for piece in re.split(r"(?<=[._\-])", name)), name
    table = ModulesTable(rows)
    columns, dropped, _ = table.layout(200)
    assert dropped == [] and "platform" in columns and "argument" in columns
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(table)
    assert "left out" not in out.getvalue()
