"""hlotop diff OLD NEW: two compiles of a program compared on real dumps: a dump
against itself and against a copy with every value id and instruction name changed
shows no change; real pairs (remat on and off, two JAX versions, scan and a Python
loop) show where the bytes went; --fail-over works as a CI gate."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLES, hlotop
from hlotop import load
from hlotop.analysis.diff import MATCH_KEYS, diff_modules
from hlotop.report.diff_report import Threshold, gate
from hlotop.report.diff_table import diff_json

REMAT_OFF = SAMPLES / "tpu" / "v5e_1x1-transformer_loop"
REMAT_ON = SAMPLES / "tpu" / "v5e_1x1-transformer_remat"
JAX_092 = SAMPLES / "jax" / "jax-0.9.2" / "mlp_train"
JAX_0102 = SAMPLES / "jax" / "jax-0.10.2" / "mlp_train"
COMBINED = [
    SAMPLES / "seeds" / "003_a3085531593bac68.txt",
    SAMPLES / "seeds" / "002_c2e226da3172e77e.txt",
    next(JAX_092.glob("*-buffer-assignment.txt")),
    next((SAMPLES / "jax" / "jax-0.4.31" / "scan_layers").glob("*-buffer-assignment.txt")),
]


def renumbered(text: str, shift: int = 1000) -> str:
    """A combined dump with every value id moved by ``shift`` and every instruction
    renamed (``fusion.12`` -> ``fusion.12_r``), as another compile of the same program
    would number them; op_names, shapes, sizes and steps are kept."""
    out = []
    section = None
    for line in text.split("\n"):
        if line in ("BufferAssignment:", "Used values:") or line.startswith("HloLiveRange"):
            section = line
        line = re.sub(
            r"<(\d+) ([^\s{}<>:,@]+)", lambda m: f"<{int(m.group(1)) + shift} {m.group(2)}_r", line
        )
        line = re.sub(r"%([A-Za-z_][\w.\-]*)", r"%\1_r", line)
        if section == "Used values:" and re.match(r"  [^ (]", line):
            line = re.sub(r"^  ([^\s{},]+)", r"  \1_r", line)
        if section is not None and section.startswith("HloLiveRange"):
            if re.match(r"^    \d+:\S+$", line):  # the instruction sequence
                line += "_r"
            else:  # a live range or a peak line
                line = re.sub(r"^    ([^\s{}:]+)(\{[\d,]*\})?:", r"    \1_r\2:", line)
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("path", COMBINED, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_a_dump_against_itself_and_a_renumbered_copy_shows_no_change(path, tmp_path):
    copy = tmp_path / path.name
    copy.write_text(renumbered(path.read_text()))
    old, new = load(path), load(copy)
    assert not new.diagnostics  # the copy is a well-formed dump
    assert {i.value.id for i in old.analysis.values}.isdisjoint(
        i.value.id for i in new.analysis.values
    )
    for other in (load(path), new):
        diff = diff_modules(old, other)
        assert {c.change for c in diff.changes} == {"unchanged"}, [
            (c.change, c.old and c.old.value.label, c.new and c.new.value.label)
            for c in diff.changes
            if c.change != "unchanged"
        ]
        assert all(g.delta_bytes == 0 for g in diff.groups)
        assert gate(diff, Threshold(bytes=0)) is None
        doc = diff_json(diff)
        assert doc["delta"]["peak_bytes"] == doc["delta"]["total_bytes_used"] == 0
        assert doc["values"]["added"] == doc["values"]["removed"] == doc["values"]["changed"] == []


def test_remat_on_trades_forward_activations_for_recomputation():
    """The same transformer on v5e, Python-loop layers, remat off then on: XLA's peak
    goes down (19.28MiB to 16.60MiB), the forward activations at the peak shrink and
    the rematerialised ones (checkpoint/...) appear in the backward pass, flagged new."""
    old, new = load(REMAT_OFF), load(REMAT_ON)
    diff = diff_modules(old, new)
    assert (diff.old.peak_bytes, diff.new.peak_bytes) == (
        old.analysis.peak_bytes,
        new.analysis.peak_bytes,
    )
    assert diff.new.peak_bytes < diff.old.peak_bytes
    by_key = {g.key: g for g in diff.groups}
    assert by_key[("forward", "(top level)")].delta_bytes < -8 * 2**20
    assert (
        by_key[("backward", "checkpoint")].old_bytes
        == 0
        < by_key[("backward", "checkpoint")].new_bytes
    )
    assert diff.groups[0].key == ("forward", "(top level)")  # the largest change first
    matched = [c for c in diff.changes if c.matched_by is not None]
    assert {c.matched_by for c in matched} <= set(MATCH_KEYS)
    assert sum(1 for c in matched if c.matched_by == "op_name") > len(matched) // 2
    # Each side's figures are what hlotop --json gives for that side alone.
    for side, module in ((diff.old, old), (diff.new, new)):
        assert side.total_bytes == module.total_bytes_used
        assert side.memory_stats == module.analysis.memory_stats.as_dict()
        assert side.space_peaks == {s.name: s.peak_bytes for s in module.analysis.memory_spaces}


def test_two_jax_versions_of_one_program():
    diff = diff_modules(load(JAX_092), load(JAX_0102))
    counts = {k: diff.count(k) for k in ("added", "removed", "unchanged")}
    assert counts["unchanged"] > 50 and counts["added"] < 10 and counts["removed"] < 10


def test_cli_summary_json_and_the_gate():
    old, new = str(REMAT_ON.relative_to(ROOT)), str(REMAT_OFF.relative_to(ROOT))
    summary = hlotop("diff", "--summary", old, new)
    assert summary.returncode == 0, summary.stderr
    text = summary.stdout.decode()
    for shown in (
        "hlotop diff",
        "XLA's peak",
        "temp_size_in_bytes",
        "VMEM occupied peak",
        "matched",
        "By phase, scope",
    ):
        assert shown in text, shown
    doc = json.loads(hlotop("diff", "--json", old, new).stdout)
    assert set(doc) == {"old", "new", "delta", "values", "groups"}
    assert doc["delta"]["peak_bytes"] == doc["new"]["peak_bytes"] - doc["old"]["peak_bytes"] > 0
    alone = json.loads(hlotop("--json", old).stdout)
    assert doc["old"]["peak_bytes"] == alone["analysis"]["peak_bytes"]
    assert doc["old"]["memory_stats"] == {
        k: v
        for k, v in alone["analysis"]["memory_stats"].items()
        if k not in ("alias_source", "peak_memory_rule") and v is not None
    }
    # The gate: remat off grows XLA's peak by 16.1% over remat on.
    grown = hlotop("diff", "--fail-over", "5%", old, new)
    assert grown.returncode == 1
    (line,) = grown.stderr.decode().splitlines()
    assert (
        line.startswith("hlotop diff: XLA's peak grew by 2.68MiB (+16.1%)")
        and "over the 5% allowed" in line
    )
    assert hlotop("diff", "--fail-over", "25%", old, new).returncode == 0  # total +21.6%
    assert hlotop("diff", "--fail-over", "5MiB", old, new).returncode == 0
    assert hlotop("diff", "--fail-over", "5%", new, old).returncode == 0  # it shrank
    for wrong in ("lots", "infGiB", "1e3MiB"):  # infGiB was an internal error
        bad = hlotop("diff", "--fail-over", wrong, old, new)
        assert bad.returncode == 2 and "give a percentage" in bad.stderr.decode(), wrong


def test_fail_over_in_a_shell_script(tmp_path: Path):
    script = tmp_path / "gate.sh"
    script.write_text(
        f"cd {ROOT}\n"
        f"if {sys.executable} -m hlotop diff --summary --fail-over 1% {REMAT_ON} {REMAT_OFF} > /dev/null; "
        "then echo pass; else echo fail $?; fi\n"
    )
    out = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "fail 1"


def test_a_batch_size_change_doubles_the_activations():
    """The CPU GPT train step at batch 8 and 16: the parameters and optimizer state
    match and stay, every forward group at the peak doubles, and XLA's peak grows by
    84.5%; nothing is added or removed."""
    cpu = SAMPLES / "cpu"
    diff = diff_modules(load(cpu / "gpt_loop"), load(cpu / "gpt_loop_batch16"))
    assert diff.count("added") == diff.count("removed") == 0
    assert diff.count("grown") > 200
    by_key = {g.key: g for g in diff.groups}
    for scope in ("GPT/Block_*/attn", "GPT/Block_*/mlp", "GPT/Block_*/ln_*"):
        g = by_key[("forward", scope)]
        assert g.new_bytes == 2 * g.old_bytes > 0
    for key in (("argument", "opt_state/mu"), ("argument", "params/Block_*")):
        assert by_key[key].delta_bytes == 0
    assert round(100 * (diff.new.peak_bytes / diff.old.peak_bytes - 1), 1) == 84.5


def test_the_summary_fits_80_columns_with_names_and_shapes_whole_where_they_fit(monkeypatch):
    """At 80 columns: each side's file beside its label, the curve's legend on a line
    of its own, and the largest value changes with the value named once, "matched by"
    left out, and names and shapes wrapped between their tokens only."""
    import io

    from rich.console import Console

    from hlotop.report.diff_report import ValuesTable

    cpu = SAMPLES / "cpu"
    monkeypatch.setenv("COLUMNS", "80")
    old, new = (str((cpu / name).relative_to(ROOT)) for name in ("gpt_loop", "gpt_loop_batch16"))
    out = hlotop("diff", "--summary", old, new)
    lines = out.stdout.decode().splitlines()
    assert max(len(line) for line in lines) <= 80
    assert lines[1].startswith(" OLD sample_dumps/cpu/gpt_loop/module_0004.")
    assert any(
        line.strip() == "each side scaled to its schedule; ▲ more in NEW, ▼ less" for line in lines
    )

    diff = diff_modules(load(cpu / "gpt_loop"), load(cpu / "gpt_loop_batch16"))
    changes = sorted(diff.changes, key=lambda c: -abs(c.delta_bytes))[:20]
    table = ValuesTable(changes)
    assert table.layout(160) == (list(ValuesTable.COLUMNS), {})  # all of it, unwrapped
    columns, narrow = table.layout(80)
    assert columns == ["change", "value", "shape", "delta"] and narrow["shape"] >= 26
    text = io.StringIO()
    Console(file=text, width=80, color_system=None).print(table)
    header, *body = text.getvalue().splitlines()
    assert "f32[16,4,128,128]{3,2,1,0}" in text.getvalue()  # 26 columns: whole
    # Each row's value and shape, read back from their columns line by line.
    at = {name: header.index(name) for name in ("value", "shape")}
    at["delta"] = len(header.rstrip()) - max(len(row[4].plain) for row in table.rows)
    cells: list[dict[str, list[str]]] = []
    for line in body:
        if line[: at["value"]].strip():  # a row's first line: its change
            cells.append({"value": [], "shape": []})
        for name, end in (("value", "shape"), ("shape", "delta")):
            piece = line[at[name] : at[end]].strip()
            if piece:
                cells[-1][name].append(piece)

    def joined(pieces: list[str]) -> str:  # a line ending "→" lost the space after it
        return "".join(p + " " if p.endswith("→") else p for p in pieces)

    assert [("".join(c["value"]), joined(c["shape"])) for c in cells] == [
        (row[2], row[3]) for row in table.rows
    ]
    for c in cells:  # broken after . _ - in a name, at a comma, a brace or → in a shape
        assert all(piece[-1] in "._-" for piece in c["value"][:-1]), c
        assert all(
            piece[-1] in ",:→" or after[0] in "{("
            for piece, after in zip(c["shape"], c["shape"][1:], strict=False)
        ), c
    # A value matched at another shape (batch 8 and 16) shows both shapes.
    assert any(" → " in row[3] for row in table.rows)


def test_each_record_is_read_once_in_one_pass_not_once_a_key(monkeypatch):
    """The diff labels every value of both sides by op_name, scope, source and opcode.
    Each key read the value's record at random (a few thousand kept): a 46 MB dump
    against a 108 MB one took 62 s, most of it reading records again. Now each side's
    records are read in one pass in dump order, and the diff is the same as labelling
    from records read at random."""
    from hlotop.model import UsedValues

    cpu = SAMPLES / "cpu"
    old, new = load(cpu / "gpt_loop", lazy=True), load(cpu / "gpt_loop_batch16", lazy=True)
    at_random = []
    record = UsedValues.record
    monkeypatch.setattr(
        UsedValues, "record", lambda self, n: at_random.append(n) or record(self, n)
    )
    diff = diff_modules(old, new)
    # only the few values the labeller looks at before the pass (the backward pass's
    # first value, found among the records whose text says transpose()
    assert len(at_random) < 20
    monkeypatch.setattr(UsedValues, "record", record)
    eager = diff_modules(load(cpu / "gpt_loop"), load(cpu / "gpt_loop_batch16"))
    assert [(c.change, c.matched_by) for c in diff.changes] == [
        (c.change, c.matched_by) for c in eager.changes
    ]
    assert diff.groups == eager.groups and diff.count("grown") > 200


JAX = SAMPLES / "jax"
# Real pairs where values of different shapes were paired by position or scope and
# called grown or shrunk: jax 0.4.36 -> 0.5.3 (copy.4 f32[256,128] "grown" into
# f32[256,256] by position), remat off -> on on v5e (f32[512,128] "shrunk" into
# f32[8,128] by position, bf16[8,128,512] into bf16[8,128,128] by scope), jax 0.7.2 ->
# 0.9.0 (mul.6 f32[6,128,128] "shrunk" into a reduce-window's f32[1,4,4] by scope).
RESHAPED_PAIRS = [
    (JAX / "jax-0.4.36" / "mlp_train", JAX / "jax-0.5.3" / "mlp_train"),
    (REMAT_OFF, REMAT_ON),
    (JAX / "jax-0.7.2" / "scan_layers", JAX / "jax-0.9.0" / "scan_layers"),
    (JAX / "jax-0.10.2" / "scan_layers", JAX / "jax-0.4.23" / "scan_layers"),
]


@pytest.mark.parametrize(
    "old, new", RESHAPED_PAIRS, ids=lambda p: str(p.relative_to(SAMPLES)).replace("/", ":")
)
def test_values_of_different_shapes_pair_only_as_one_instruction(old, new):
    """Two values of different shapes are paired only when they are one instruction
    (the same op_name path, opcode and tuple index, element type and rank) at two
    shapes, marked reshaped; else they are removed and added."""
    from hlotop.analysis.labels import Labeller
    from hlotop.analysis.scope import strip_params

    def shape(info) -> str:  # without layout or tuple index comments
        return re.sub(r"\{[^{}]*\}|/\*[^*]*\*/", "", info.shape)

    def kind(info) -> tuple[str, int]:  # element type and rank
        return shape(info).split("[")[0], shape(info).count(",") + ("[]" not in shape(info))

    def path(labeller, info) -> str:  # jit(f)/ and jax <= 0.6's jit(main)/ left out
        return re.sub(r"^jit\([^)]*\)/(jit\(main\)/)?", "", strip_params(labeller.origin(info)[0]))

    a, b = load(old), load(new)
    diff = diff_modules(a, b)
    la, lb = Labeller(a), Labeller(b)
    pairs = [c for c in diff.changes if c.old is not None and c.new is not None]
    reshaped = [c for c in pairs if shape(c.old) != shape(c.new)]
    assert [c.matched_by for c in reshaped] == ["op_name"] * len(reshaped)
    for c in reshaped:
        assert path(la, c.old) == path(lb, c.new) and la.opcode(c.old) == lb.opcode(c.new)
        assert kind(c.old) == kind(c.new)
    assert [c.reshaped for c in diff.changes] == [c in reshaped for c in diff.changes]


def test_a_value_at_another_shape_shows_both_shapes_everywhere():
    """Batch 8 and 16 of the CPU GPT step: one instruction at two shapes is matched
    (by op_name) and shown with both shapes in the text, in JSON (``reshaped``) and in
    the browser's values pane (one shape was shown, NEW's)."""
    from hlotop.report.diff_report import ValuesTable

    def shape(info) -> str:
        return re.sub(r"\{[^{}]*\}", "", info.shape)

    cpu = SAMPLES / "cpu"
    diff = diff_modules(load(cpu / "gpt_loop"), load(cpu / "gpt_loop_batch16"))
    pairs = [c for c in diff.changes if c.old is not None and c.new is not None]
    reshaped = [c for c in pairs if shape(c.old) != shape(c.new)]
    assert len(reshaped) > 100 and {c.matched_by for c in reshaped} == {"op_name"}
    big = max(reshaped, key=lambda c: abs(c.delta_bytes))
    both = f"{big.old.shape} → {big.new.shape}"
    row = next(r for r in ValuesTable([big]).rows)
    assert row[3] == both and row[1] == "op_name, reshaped"
    doc = diff_json(diff)
    changed = doc["values"]["changed"]
    assert [c.get("reshaped") for c in changed] == [
        c in reshaped for c in diff.changes if c.matched_by and c.change != "unchanged"
    ]
    from hlotop.ui.widgets.diff_values import _shape

    assert _shape(big) == both


def test_a_figure_growing_from_0_bytes_is_no_new_figure():
    """v5e MLP against host offload: OLD's host memory peak is 0 B. Its change is
    growth from 0 ("+2.51MiB (from 0B)"), not "(new)": the figure was there, 0."""
    from hlotop.report.diff_report import percent

    out = hlotop(
        "diff",
        "--summary",
        str(SAMPLES / "tpu" / "v5e_1x1-mlp_adam"),
        str(SAMPLES / "tpu" / "v5e_1x1-host_offload"),
    )
    text = out.stdout.decode()
    row = next(line for line in text.splitlines() if line.startswith("host occupied peak"))
    assert row.split()[3:] == ["0B", "2.51MiB", "+2.51MiB", "(from", "0B)"]
    assert "(new)" not in text
    assert percent(0, 5) == "from 0B" and percent(0, 0) == "0%"
    # the gate says it once: "grew by 2.51MiB, from 0B to 2.51MiB"
    from hlotop.report.diff_report import growth

    assert growth(0, 1024) == "1.0KiB" and growth(1024, 2048) == "1.0KiB (+100.0%)"


def test_jax_06s_jit_main_is_no_new_large_group():
    """jax 0.6.2 against 0.7.2 by scope: every group is in both, unchanged (0.6.2's
    values sat under ``jit(main)``: a "new, large" ``(top level)`` and a vanished
    ``jit(main)``), and the op_name round matches most values (it matched 8)."""
    old, new = JAX / "jax-0.6.2" / "mlp_train", JAX / "jax-0.7.2" / "mlp_train"
    text = hlotop("diff", "--summary", "--group-by", "scope", str(old), str(new)).stdout.decode()
    assert "jit(main)" not in text and "new, large" not in text
    diff = diff_modules(load(old), load(new), keys=("scope",))
    assert sum(c.matched_by == "op_name" for c in diff.changes) >= 40
    assert all(g.in_old and g.delta_bytes == 0 for g in diff.groups)


def test_an_op_xla_computes_another_way_is_no_value_at_another_shape():
    """jax 0.9.2 and 0.10.2 compile the 16-layer transformer apart (0.9.2's CPU
    backend through reduce-window partial sums, 0.10.2's through YNNPACK fusions): 137
    values were "grown" and 99 "shrunk" into values of other shapes, by scope and
    position (64 f32[2,32,2] partial sums "grew +3100%" into f32[2,32,64]). A shared
    op_name path with different counts on each side pairs nothing either."""
    big = "transformer_big"
    diff = diff_modules(load(JAX / "jax-0.9.2" / big), load(JAX / "jax-0.10.2" / big))
    changed = [c for c in diff.changes if c.change in ("grown", "shrunk")]
    assert changed == [] and not any(c.reshaped for c in diff.changes)
    assert diff.count("unchanged") > 2000
