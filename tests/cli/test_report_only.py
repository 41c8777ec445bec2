"""A memory-usage report on its own (jax writes ``-memory-usage-report.txt`` beside the
dump, and users paste it alone): its total, labelled as the report's, and the
allocations it lists in every front end; what is missing said, ``--strict`` failing;
no peak said as unknown, never 0. Real sample reports copied alone into tmp_path,
checked against the whole module they came from."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from conftest import SAMPLES, hlotop
from hlotop import load
from hlotop.units import human_bytes

TPU = SAMPLES / "tpu" / "v5e_1x1-mlp_adam"  # era B, 4 memory spaces, 51 default tables
TPU_PREFIX = "module_0000.jit_train_step.cl_933746096.after_optimizations"
ERA_A = SAMPLES / "jax" / "jax-0.9.0" / "mlp_train"  # era A, combined layout, 38 allocations
ERA_A_PREFIX = "module_0001.jit_train_step.cpu_after_optimizations"
REPORT = "-memory-usage-report.txt"


def alone(tmp_path: Path, source: Path, name: str | None = None) -> Path:
    """A copy of the real file ``source`` in a directory of its own (as ``name``)."""
    target = tmp_path / (name or source.name)
    shutil.copyfile(source, target)
    return target


def whole(folder: Path, prefix: str):
    """The whole module the report came from."""
    return load(folder / f"{prefix}-buffer-assignment.txt")


def test_a_report_alone_is_report_only_with_its_total_and_no_peak_in_json(tmp_path):
    """Before: layout "split", the report's total null (era B) and peak_bytes 0."""
    report = alone(tmp_path, TPU / f"{TPU_PREFIX}{REPORT}")
    out = hlotop("--json", str(report))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["layout"] == "report-only"
    assert doc["allocations"] == [] and doc["total_bytes_used"] is None  # the dump's: none
    full = whole(TPU, TPU_PREFIX)
    # Era B prints a total per memory space; theirs is XLA's Total bytes used.
    assert doc["memory_usage_report"]["total_bytes"] == full.total_bytes_used == 20515372
    a = doc["analysis"]
    assert a["peak_step"] is None and a["peak_bytes_source"] == "no-live-ranges"
    assert (a["peak_bytes"], a["peak_logical_bytes"], a["peak_occupied_bytes"]) == (None,) * 3
    assert "memory-usage report without its buffer assignment" in doc["diagnostics"][0]["message"]


def test_no_live_ranges_means_no_peak_figure_not_zero(tmp_path):
    """A jax >= 0.10 -buffer-assignment.txt alone: allocations, but no peak."""
    ba = alone(tmp_path, TPU / f"{TPU_PREFIX}-buffer-assignment.txt")
    a = json.loads(hlotop("--json", str(ba)).stdout)["analysis"]
    assert (a["peak_step"], a["peak_bytes"], a["peak_bytes_source"]) == (
        None,
        None,
        "no-live-ranges",
    )
    with_peak = json.loads(
        hlotop("--json", str(TPU / f"{TPU_PREFIX}-buffer-assignment.txt")).stdout
    )
    assert with_peak["analysis"]["peak_bytes"] > 0


def test_era_b_space_totals_add_up_to_total_bytes_used_on_every_sample():
    """What makes an era-B report's total XLA's Total bytes used: true of every sample."""
    checked = 0
    for path in sorted(SAMPLES.rglob(f"*{REPORT}")):
        m = load(path)
        report = m.memory_usage_report
        if report.era == "B" and m.total_bytes_used is not None:
            assert report.total == m.total_bytes_used, path
            checked += 1
    assert checked >= 40


@pytest.mark.parametrize("how", ["renamed", "stdin"])
def test_a_report_alone_under_any_name_says_what_is_missing_and_fails_strict(tmp_path, how):
    """Before: a pasted report (not XLA's name, or on standard input) had no warning,
    and --strict exited 0."""
    source = ERA_A / f"{ERA_A_PREFIX}{REPORT}"
    if how == "renamed":
        out = hlotop("--strict", "--summary", str(alone(tmp_path, source, "pasted.txt")))
    else:
        out = hlotop("--strict", "--summary", "-", stdin=source.read_bytes())
    assert out.returncode == 1
    text = " ".join(out.stdout.decode().split())
    why = "its name is not XLA's" if how == "renamed" else "standard input names no file"
    assert f"memory-usage report without its buffer assignment ({why}" in text
    assert "no XLA peak step or peak bytes and no memory_analysis() figures" in text
    assert "the report lists 38 allocations and a total of 895.8KiB (917336 bytes)" in text


def test_the_summary_of_an_era_a_report_alone_gives_its_total_and_allocations(
    tmp_path, monkeypatch
):
    """Before: 'Total bytes used unknown ... (see below)' and nothing below."""
    monkeypatch.setenv("COLUMNS", "200")  # a row a line
    report = alone(tmp_path, ERA_A / f"{ERA_A_PREFIX}{REPORT}")
    out = hlotop("--summary", str(report))
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    lines = text.splitlines()
    total = next(line for line in lines if line.startswith("Total bytes used"))
    assert (
        total.split()
        == "Total bytes used 895.8KiB (917,336 B) the memory-usage report's Total bytes used".split()
    )
    assert "Allocations in the memory-usage report" in text
    # Its allocations as the whole dump has them: index, size (XLA's rounding), kinds.
    full = whole(ERA_A, ERA_A_PREFIX)
    by_index = {a.index: a for a in full.allocations}
    table = text.split("Allocations in the memory-usage report")[1].split("... and")[0]
    rows = [line.split() for line in table.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 15
    assert rows[0][:3] == ["37", "432.0KiB", "preallocated-temp"]
    assert "f32[256,256]," in rows[0] and "f32[64,256]" in " ".join(rows[0])
    for row in rows:
        alloc = by_index[int(row[0])]
        assert row[1] == human_bytes(alloc.size)
    assert "... and 23 more (see --json)" in text


def test_the_summary_of_an_era_b_report_alone_gives_its_spaces_and_tables(tmp_path):
    report = alone(tmp_path, TPU / f"{TPU_PREFIX}{REPORT}")
    text = hlotop("--summary", str(report)).stdout.decode()
    assert "19.56MiB  (20,515,372 B)  the memory-usage report's" in text
    spaces = {line.split()[0]: line.split()[3] for line in text.splitlines() if "(color " in line}
    assert spaces == {"default": "13.80MiB", "vmem": "5.76MiB", "smem": "44B", "color_6": "1.5KiB"}
    assert "default (51) may not list them all" in " ".join(text.split())
    from hlotop.analysis.report_listing import report_listings

    listings = report_listings(load(report).memory_usage_report, "tpu")
    assert [(x.space, x.number) for x in listings][:2] == [("default", 1), ("default", 2)]
    assert ("vmem", 1) in [(x.space, x.number) for x in listings]


def test_the_browser_shows_the_reports_allocations_and_total(tmp_path):
    """Before: an empty allocation tree, and 0B on the figures screen (o)."""
    from hlotop.ui.apps.app import HlotopApp
    from hlotop.ui.base.textual_compat import screen_lines
    from hlotop.ui.screens.overview import OverviewScreen
    from hlotop.ui.widgets.report_tree import ReportTree

    report = alone(tmp_path, ERA_A / f"{ERA_A_PREFIX}{REPORT}")

    async def run() -> None:
        app = HlotopApp(str(report))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_until_loaded()
            await pilot.pause()
            screen = app.screen
            tree = screen.query_one(ReportTree)
            assert app.focused is tree and tree.row_count() == 38
            text = "\n".join(screen_lines(screen))
            assert "memory-usage report's total 895.8KiB in 38 allocations" in text
            assert (
                tree.render_row(0).plain
                == "▸ 37   432.0KiB  default  preallocated-temp  (13 offsets)"
            )
            assert "4 allocation 37 (memory-usage report)" in text  # its card
            await pilot.press("enter")  # its table's rows
            await pilot.pause()
            assert tree.row_count() == 38 + 13
            assert (
                tree.render_row(1).plain.split()
                == "@0 256.0KiB 2 values: f32[256,256], f32[64,256]".split()
            )
            await pilot.press("o")
            await pilot.pause()
            assert isinstance(app.screen, OverviewScreen)
            figures = "\n".join(screen_lines(app.screen))
            assert "895.8KiB  (917,336 B)  the memory-usage report's Total bytes used" in figures
            assert "0B" not in figures.split("Allocations in")[0]

    asyncio.run(run())


# -- a directory with modules known by their report alone ---------------------------

TPU_RUNS = ("v5e_1x1-gpt_loop", "v5e_1x1-mlp_adam", "v5e_1x1-donation")
CPU_RUN = SAMPLES / "dirs" / "jax-0.10.2-cpu-train"


def mixed_run(tmp_path: Path) -> Path:
    """Three TPU programs dumped as their memory-usage reports alone, and two whole
    CPU modules: real files."""
    for run in TPU_RUNS:
        for report in (SAMPLES / "tpu" / run).glob(f"*{REPORT}"):
            shutil.copyfile(report, tmp_path / report.name)
    for module in ("module_0034.", "module_0036."):
        for f in CPU_RUN.glob(f"{module}*"):
            shutil.copyfile(f, tmp_path / f.name)
    return tmp_path


def tpu_total(run: str) -> int:
    """The whole TPU module's Total bytes used."""
    return load(next((SAMPLES / "tpu" / run).glob("*-buffer-assignment.txt"))).total_bytes_used


def test_report_only_modules_are_listed_and_ranked_within_their_platform(tmp_path):
    """Before: the three TPU programs (the largest) were not listed at all."""
    from hlotop.loading.directory import list_modules, rank_modules

    entries = list_modules(mixed_run(tmp_path))
    assert len(entries) == 5
    from hlotop.loading.directory import platform_ranks

    assert sorted(e.platform for e in entries if e.report_only) == ["tpu"] * 3
    figures = rank_modules(entries)
    names = [f.entry.name.split(".")[1] for f in figures]
    assert names == [
        "jit_gpt_train_step",
        "jit_train_step",
        "jit_train_step_donated",
        "jit_train_step",
        "jit_evaluate",
    ]
    assert [f.entry.platform for f in figures] == ["tpu"] * 3 + ["cpu"] * 2
    assert platform_ranks(figures) == [1, 2, 3, 1, 2]
    # A report-only module's total is its report's: the whole module's Total bytes used.
    assert [f.total_bytes_used for f in figures[:3]] == [tpu_total(r) for r in TPU_RUNS]
    assert all(f.peak_bytes is None and f.memory_stats is None for f in figures[:3])


def test_summary_and_json_of_a_mixed_directory_say_largest_per_platform(tmp_path):
    """Before: the TPU programs vanished and the CPU module was called the largest."""
    folder = str(mixed_run(tmp_path))
    out = hlotop("--summary", folder)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.decode().split())
    assert "Largest single program:" not in text  # no largest across platforms
    assert "Largest single program on cpu: 9.18MiB XLA peak, module_0034.jit_train_step." in text
    assert (
        "Largest module on tpu known by its memory-usage report alone: 34.33MiB total "
        "(the report's; no peak), module_0000.jit_gpt_train_step.cl_933746096." in text
    )
    assert "module_0000.jit_gpt_train_step.cl_933746096 (report only) tpu - 34.33MiB" in text
    doc = json.loads(hlotop("--json", folder).stdout)
    first, cpu = doc["modules"][0], doc["modules"][3]
    assert (first["platform"], first["rank"], first["report_only"]) == ("tpu", 1, True)
    assert (first["total_bytes_used"], first["peak_bytes"]) == (tpu_total(TPU_RUNS[0]), None)
    assert (cpu["platform"], cpu["rank"], cpu["report_only"]) == ("cpu", 1, False)
    assert doc["largest_peak"] == {"cpu": {"module": cpu["name"], "bytes": cpu["peak_bytes"]}}
    assert doc["largest_report_total"] == {
        "tpu": {"module": first["name"], "bytes": first["total_bytes_used"]}
    }
    # A module known by its report alone is missing its siblings: --strict fails.
    assert hlotop("--strict", "--summary", folder).returncode == 1
    assert hlotop("--strict", "--json", folder).returncode == 1


def test_a_directory_holding_one_report_opens_it(tmp_path):
    """Before: 'no *-buffer-assignment.txt dump in this directory'."""
    alone(tmp_path, TPU / f"{TPU_PREFIX}{REPORT}")
    out = hlotop("--json", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["layout"] == "report-only"


def test_the_modules_view_lists_report_only_modules_and_opens_one(tmp_path):
    from hlotop.loading.directory import list_modules
    from hlotop.ui.apps.modules_app import ModulesApp
    from hlotop.ui.widgets.report_tree import ReportTree

    folder = mixed_run(tmp_path)

    async def run() -> None:
        app = ModulesApp(str(folder), list_modules(folder))
        async with app.run_test(size=(140, 30)) as pilot:
            await app.wait_until_ranked()
            await app.wait_until_filled()
            await pilot.pause()
            rows = app.modules_screen.list.shown
            assert [(r.rank, r.figures.entry.platform) for r in rows] == [
                (1, "tpu"),
                (2, "tpu"),
                (3, "tpu"),
                (1, "cpu"),
                (2, "cpu"),
            ]
            assert [r.note for r in rows[:3]] == ["report only"] * 3
            line = app.modules_screen.list.render_row(0).plain
            assert line.split()[:5] == [
                "1",
                "module_0000.jit_gpt_train_step.cl_933746096",
                "tpu",
                "-",
                "34.33MiB",
            ]
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            tree = app.screen.query_one(ReportTree)
            assert tree.row_count() == 54

    asyncio.run(run())
