"""A folder of --xla_dump_to runs (``hlotop runs/``, one module or more a subfolder):
every module of every subfolder listed by its run, in --summary, --json and the modules
view; and --group-by on a directory: the largest program's live set grouped in
--summary, every module's in --json, bounded by --top."""

from __future__ import annotations

import json
import shutil

from test_modules_view import names, pilot_test, ranked, screen_text, until

from conftest import SAMPLES, hlotop
from hlotop import load
from hlotop.analysis.grouping import group_live_set
from hlotop.loading.directory import list_run_modules, program_of
from hlotop.ui.apps.modules_app import ModulesApp
from hlotop.ui.screens.directory_module import DirectoryMainScreen
from hlotop.ui.screens.modules import ModulesScreen

TPU = SAMPLES / "tpu"
GPT = TPU / "v5e_1x1-gpt_loop"
RUN = SAMPLES / "dirs" / "jax-0.10.2-cpu-train"


def two_runs(tmp_path):
    """``runs/a`` and ``runs/b``: two copies of one run of the GPT train step."""
    runs = tmp_path / "runs"
    shutil.copytree(GPT, runs / "a")
    shutil.copytree(GPT, runs / "b")
    (runs / "logs").mkdir()  # a subfolder without a dump is passed over
    return runs


def test_a_folder_of_runs_lists_each_subfolders_modules_by_their_run():
    entries = list_run_modules(TPU)  # twelve runs, one module each
    subfolders = sorted(p.name for p in TPU.iterdir() if p.is_dir())
    assert [e.name.split("/")[0] for e in entries] == subfolders and len(entries) == 12
    assert all(e.path.parent.name == e.name.split("/")[0] for e in entries)
    name = "v5e_1x1-gpt_loop/module_0000.jit_gpt_train_step.cl_933746096.after_optimizations"
    assert name in [e.name for e in entries]
    # The run stays in the program (two runs' modules are told apart), the number goes.
    assert program_of(name) == "v5e_1x1-gpt_loop/jit_gpt_train_step.after_optimizations"
    assert list_run_modules(RUN)[0].name == "module_0000.jit_stage.cpu_after_optimizations"


def test_two_copies_of_a_run_are_two_rows_in_summary_and_json(tmp_path):
    runs = two_runs(tmp_path)
    out = hlotop("--summary", str(runs))
    assert out.returncode == 0, out.stderr  # was refused: "2 of its subfolders ... name one"
    text = " ".join(out.stdout.decode().split())  # wrapped at the console's width
    assert "2 modules" in text
    assert "1 a/module_0000.jit_gpt" in text
    assert "2 b/module_0000.jit_gpt" in text
    doc = json.loads(hlotop("--json", str(runs)).stdout)
    assert [m["name"].split(".")[0] for m in doc["modules"]] == ["a/module_0000", "b/module_0000"]
    assert [m["identical"] for m in doc["modules"]] == [1, 1]
    assert doc["modules"][0]["peak_bytes"] == load(GPT).analysis.peak_bytes == 24386374


def test_summary_of_a_directory_groups_its_largest_program():
    out = hlotop("--summary", "--group-by", "scope", str(RUN))
    assert out.returncode == 0, out.stderr  # was refused: "name one to group"
    text = " ".join(out.stdout.decode().split())  # wrapped at the console's width
    tail = text[text.index("The largest single program, module_0034.jit_train_step:") :]
    assert "Live set at step" in tail and "by scope" in tail
    module = load(RUN / "module_0034.jit_train_step.cpu_after_optimizations-buffer-assignment.txt")
    grouping = group_live_set(module, ("scope",))
    assert grouping.total_bytes == module.analysis.peak_bytes == 9625876  # 9.18MiB
    assert "total 9.18MiB 100.0% 25" in tail
    top = " ".join(hlotop("--summary", "--top", "3", str(RUN)).stdout.decode().split())
    assert "top 3" in top and "Showing 3 of" in top


def test_json_of_a_directory_groups_every_module_bounded_by_top():
    out = hlotop("--json", "--group-by", "scope", "--top", "3", str(TPU))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert len(doc["modules"]) == 12
    for m in doc["modules"]:
        g = m["groups"]
        assert m["groups_error"] is None and g["keys"] == ["scope"] and len(g["rows"]) <= 3
        assert sum(r["bytes"] for r in g["rows"]) + g["rest"]["bytes"] == g["total_bytes"]
    gpt = next(m for m in doc["modules"] if m["name"].startswith("v5e_1x1-gpt_loop/"))
    grouping = group_live_set(load(GPT), ("scope",))
    assert gpt["groups"]["step"] == grouping.step == 367
    assert gpt["groups"]["rows"] == [
        {"key": list(r.key), "bytes": r.bytes, "values": len(r.values)} for r in grouping.rows[:3]
    ]
    assert gpt["groups"]["rest"]["groups"] == len(grouping.rows) - 3
    plain = json.loads(hlotop("--json", str(TPU)).stdout)  # no --group-by: no groups field
    assert plain["modules"][0]["groups"] is None  # without --group-by
    assert plain["modules"][0]["groups_error"] is None


def test_top_with_json_of_one_module_is_refused_saying_why():
    out = hlotop("--json", "--top", "3", str(GPT))
    assert out.returncode == 2
    assert "--top with --json bounds the groups of each module of a directory" in (
        out.stderr.decode()
    )


@pilot_test
async def test_the_modules_view_lists_two_runs_and_opens_each(tmp_path):
    runs = two_runs(tmp_path)
    app = ModulesApp(str(runs), list_run_modules(runs))
    async with app.run_test(size=(120, 30)) as pilot:
        await ranked(app, pilot)
        assert [n.split(".")[0] for n in names(app)] == ["a/module_0000", "b/module_0000"]
        assert "2 modules" in screen_text(app)
        await pilot.press("down", "enter")
        await until(pilot, lambda: isinstance(app.screen, DirectoryMainScreen))
        assert app.source == str(runs / "b" / GPT.glob("*-buffer-assignment.txt").__next__().name)
        await pilot.press("backspace")
        await until(pilot, lambda: isinstance(app.screen, ModulesScreen))
