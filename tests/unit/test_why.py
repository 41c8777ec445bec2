"""Why a value is live (hlotop.analysis.why): its last use and the reasons at a step,
checked on real dumps against the dump's own text, read here with regular expressions
(not hlotop's parser); ``hlotop why``; ``--json``'s values live at the peak; and the
browser's detail card."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SAMPLES, sample
from hlotop.analysis.why import last_use, value_facts, why_live
from hlotop.analysis.why_index import WhyIndex
from hlotop.cli import main
from hlotop.loading.loader import load
from hlotop.report.why_report import reason_text
from hlotop.ui.apps.app import HlotopApp
from pilot import pilot_test, started, widget_lines

SCAN = "cpu/transformer_scan"  # while loops (scan), SSA phis
DONATION = "cpu/donation"  # parameters 0-24 donated, 25 and 26 not (input_output_alias)
TPU_LOOP = "tpu/v5e_1x1-transformer_loop"
SEED = "seeds/003_a3085531593bac68.txt"  # combined layout, V1 peak lines


# -- the dump's text, read independently -----------------------------------------------


class Text:
    """What a module's text says, read with regular expressions: the schedule, the
    live ranges, the records' uses and positions, the allocations' value lines."""

    HEAD = re.compile(r"^<(\d+) ([^\s{}<>]+)(\{[\d,]*\})?( \(phi\))?(?: @\d+)?>$")

    def __init__(self, relative: str):
        path = SAMPLES / relative
        files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
        skip = ("usage-report.txt", "after_optimizations.txt")  # the report, the HLO text
        text = "\n".join(f.read_text() for f in files if not f.name.endswith(skip))
        lines = text.split("\n")
        self.sequence: list[str] = []
        self.ranges: dict[str, tuple[int, int]] = {}
        self.uses: dict[int, list[tuple[str, str]]] = {}  # id -> (instruction, use line)
        self.positions: dict[int, list[str]] = {}
        self.label: dict[int, str] = {}
        self.opcode: dict[str, str] = {}
        self.allocation_line: dict[int, str] = {}  # value id -> its allocation's line
        section, record, block, alloc = None, None, None, ""
        for line in lines:
            if line.startswith("HloLiveRange (max "):
                self.max = int(line[len("HloLiveRange (max ") : -2])
            if line == "  InstructionSequence:":
                section = "seq"
                continue
            if line == "  BufferLiveRange:":
                section = "ranges"
                continue
            if line.startswith("  Live ranges at"):
                section = None
                continue
            if line.startswith("allocation "):
                alloc = line
            m = re.match(r"^ value: <(\d+) ", line)
            if m:
                self.allocation_line[int(m.group(1))] = alloc
            if section == "seq" and (m := re.match(r"^    (\d+):(\S+)$", line)):
                assert int(m.group(1)) == len(self.sequence)
                self.sequence.append(m.group(2))
            elif section == "ranges" and (
                m := re.match(r"^    (\S+?)(\{[\d,]*\}):(\d+)-(\d+)$", line)
            ):
                self.ranges[m.group(1) + m.group(2)] = (int(m.group(3)), int(m.group(4)))
            head = self.HEAD.match(line)
            if head:
                record, block = int(head.group(1)), None
                self.label[record] = head.group(2) + (head.group(3) or "")
                self.uses[record], self.positions[record] = [], []
            elif record is not None and line in (" positions:", " uses:"):
                block = line.strip(" :")
            elif record is not None and line.startswith(" from instruction: %"):
                m = re.match(r"^ from instruction: %(\S+) = .*? ([a-z][a-z0-9\-]*)\(", line)
                if m:
                    self.opcode.setdefault(m.group(1), m.group(2))
                block = None
            elif (
                record is not None
                and block == "uses"
                and line.startswith("  ")
                and line != "  (none)"
            ):
                self.uses[record].append((line[2:].split(", operand ")[0], line[2:]))
            elif record is not None and block == "positions" and line.startswith("  "):
                self.positions[record].append(line[2:].split(" ")[0])
        self.step = {name: i for i, name in enumerate(self.sequence)}

    def last_use(self, vid: int) -> tuple[str, int] | None:
        """(use line, step) of the use of value ``vid`` latest in the schedule, the
        first printed of those at that step."""
        best = None
        for name, line in self.uses.get(vid, []):
            if name in self.step and (best is None or self.step[name] > best[1]):
                best = (line, self.step[name])
        return best


def _module(relative: str):
    path = SAMPLES / relative
    entry = next(path.glob("*-buffer-assignment.txt")) if path.is_dir() else path
    return load(str(entry), lazy=True)


# -- last use ----------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [SCAN, DONATION, TPU_LOOP, SEED])
def test_every_values_last_use_is_its_latest_use_in_the_schedule(relative):
    text, module = Text(relative), _module(relative)
    index = WhyIndex(module)
    checked = 0
    for info in module.analysis.values:
        got = last_use(info, index)
        want = text.last_use(info.value.id)
        if want is None:
            assert got is None, info.value
            continue
        line, step = want
        assert got is not None, info.value
        written = f"{got.instruction}, operand {got.operand}"
        if got.operand_index is not None:
            written += " {" + ",".join(map(str, got.operand_index)) + "}"
        assert (written, got.step) == (line, step), info.value
        live = text.ranges.get(
            info.value.label if info.value.shape_index else info.value.name + "{}"
        )
        assert got.ends_live_range == (live is not None and live[1] == step)
        assert got.opcode == text.opcode.get(got.instruction)
        checked += 1
    assert checked >= 10


def test_a_loops_initial_value_is_last_used_by_the_while_after_its_range_ends():
    """XLA counts a while's use at its body's start: copy.87 (the loop counter's initial
    value) ends at step 90 though its one use, while.4, is at step 219."""
    text, module = Text(SCAN), _module(SCAN)
    info = next(i for i in module.analysis.values if i.value.label == "copy.87")
    got = last_use(info, WhyIndex(module))
    assert got is not None
    assert (got.instruction, got.step, got.opcode) == ("while.4", text.step["while.4"], "while")
    assert text.ranges["copy.87{}"] == (85, 90) and got.step == 219
    assert not got.ends_live_range
    assert got.op_name == "jit(transformer_train_step)/jvp()/while" and got.phase == "forward"


# -- reasons ----------------------------------------------------------------------------


def _info(module, label):
    return next(i for i in module.analysis.values if i.value.label == label)


def test_a_donated_parameter_reads_entry_parameter_donated():
    text, module = Text(DONATION), _module(DONATION)
    index = WhyIndex(module)
    hlo = next((SAMPLES / DONATION).glob("*after_optimizations.txt")).read_text()
    alias = re.search(r"input_output_alias=\{ (.*?) \}, ", hlo.split("\n", 1)[0])
    assert alias is not None
    donated = {int(p) for p in re.findall(r"\((\d+), \{\}, may-alias\)", alias.group(1))}
    seen = {True: 0, False: 0}
    for info in module.analysis.values:
        head = text.allocation_line.get(info.value.id, "")
        number = re.search(r", parameter (\d+), ", head)
        if not number or text.opcode.get(info.value.name) != "parameter":
            continue
        start, end = text.ranges[info.value.name + "{}"]
        reasons = why_live(info, start, index)
        param = [r for r in reasons if r.kind == "entry-parameter"]
        assert len(param) == 1 and param[0].parameter == int(number.group(1))
        is_donated = int(number.group(1)) in donated
        assert param[0].donated is is_donated and param[0].donation_source == "input_output_alias"
        said = reason_text(param[0], start)
        assert (", donated (" in said) is is_donated and (
            ", not donated (" in said
        ) is not is_donated
        if not is_donated:  # XLA keeps a parameter nobody donated live to the end
            assert end == text.max
        seen[is_donated] += 1
    assert seen[True] >= 20 and seen[False] == 2


def test_an_output_reads_output_and_a_donated_buffer_reused_shares_it():
    text, module = Text(DONATION), _module(DONATION)
    index = WhyIndex(module)
    outputs = 0
    for info in module.analysis.values:
        key = info.value.label if info.value.shape_index else info.value.name + "{}"
        if key not in text.ranges:
            continue
        start, end = text.ranges[key]
        reasons = {r.kind for r in why_live(info, end, index)}
        out = "maybe-live-out" in text.allocation_line.get(info.value.id, "") and end == text.max
        if text.opcode.get(info.value.name) == "parameter":
            out = False  # the donated parameters end before the end; the others are kept
        assert ("output" in reasons) is out, info.value
        outputs += out
    assert outputs >= 20
    # multiply_add_fusion.13 writes Adam's nu in place of the donated parameter 20
    info = _info(module, "multiply_add_fusion.13")
    start = text.ranges["multiply_add_fusion.13{}"][0]
    shares = [r for r in why_live(info, start, index) if r.kind == "shares-buffer"]
    assert [(r.other_id, r.other_name) for r in shares] == [(594, "opt_state_0__nu_1___w__.1")]
    assert text.label[594] == "opt_state_0__nu_1___w__.1"


def test_a_value_a_while_carries_reads_loop_carried():
    text, module = Text(SCAN), _module(SCAN)
    index = WhyIndex(module)
    info = _info(module, "while.4{2}")
    start, end = text.ranges["while.4{2}"]
    named = [info.value.name, *text.positions[info.value.id]]
    whiles = list(dict.fromkeys(p for p in named if text.opcode.get(p) == "while"))
    assert whiles == ["while.4", "while.6"]
    reasons = why_live(info, 300, index)
    carried = [(r.instruction, r.step) for r in reasons if r.kind == "loop-carried"]
    assert carried == [(w, text.step[w]) for w in whiles]
    nxt = min((text.step[n], n) for n, _ in text.uses[info.value.id] if text.step.get(n, -1) >= 300)
    used = [r for r in reasons if r.kind == "used-later"]
    assert [(used[0].instruction, used[0].step)] == [(nxt[1], nxt[0])]
    assert "carried by while.4" in reason_text(reasons[1], 300)
    assert why_live(info, end + 1, index)[0].kind == "not-live"
    assert why_live(info, start, index)[0].kind == "defined-here"


def test_every_value_live_at_a_step_has_a_reason_and_others_are_not_live():
    text, module = Text(SCAN), _module(SCAN)
    index = WhyIndex(module)
    for info in module.analysis.values[::7]:
        facts = value_facts(info, index)
        key = info.value.label if info.value.shape_index else info.value.name + "{}"
        start, end = text.ranges.get(key, (None, None))
        for step in (0, 100, 219, 376, text.max):
            kinds = [r.kind for r in why_live(info, step, index)]
            live = start is not None and start <= step <= end
            assert (kinds == ["not-live"]) is not live, (info.value, step)
            uses_after = [s for s, _ in facts.uses if s >= step]
            assert ("used-later" in kinds) is (live and bool(uses_after))


# -- hlotop why ----------------------------------------------------------------------------


def test_hlotop_why_prints_the_value_its_last_use_and_reasons(capsys):
    dump = sample(SCAN)
    assert main(["why", dump, "while.4{2}", "--step", "300"]) == 0
    out = capsys.readouterr().out
    assert "<2110 while.4{2} (phi) @0>" in out
    assert re.search(r"^live range +steps 219-417: while\.4 → while\.6$", out, re.M)
    assert re.search(r"^last use +while\.6, operand 0 \{8\} at step 417 · ", out, re.M)
    assert "At step 300, " in out and "carried by while.4 (step 219)" in out
    assert main(["why", dump, "copy.87"]) == 0  # at XLA's peak by default
    out = capsys.readouterr().out
    assert "At step 376 (XLA's peak)" in out and "not live at step 376 (steps 85-90)" in out
    assert "not where its live range ends" in out


def test_hlotop_why_says_output_and_donated_parameter(capsys):
    dump = sample(DONATION)
    assert main(["why", dump, "multiply_add_fusion.13", "--step", "83"]) == 0
    out = capsys.readouterr().out
    assert "· an output: live out of the program, to its end" in out
    assert "· shares its buffer with <594 opt_state_0__nu_1___w__.1>, live here too" in out
    assert main(["why", dump, "opt_state_0__nu_1___w__.1", "--step", "83"]) == 0
    out = capsys.readouterr().out
    assert "· entry parameter 20 {}, donated (from the HLO text's input_output_alias)" in out


def test_hlotop_why_names_a_value_by_id_and_as_xla_prints_it(capsys):
    dump = sample(SCAN)
    outs = []
    for name in ("2110", "<2110 while.4{2} (phi) @0>"):
        assert main(["why", dump, name]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


def test_hlotop_why_json(capsys):
    argv = ["why", "--json", sample(DONATION), "opt_state_0__nu_1___w__.1", "--step", "83"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["value"]["id"] == 594 and doc["step"] == 83 and doc["step_is_peak"] is True
    assert doc["live_range"] == {"start": 0, "end": 83}
    last = doc["last_use"]
    assert (last["instruction"], last["operand"], last["step"]) == ("multiply_add_fusion.13", 0, 83)
    assert last["ends_live_range"] is True and last["phase"] == "optimizer"
    assert doc["reasons"] == [
        {"kind": "used-later", "instruction": "multiply_add_fusion.13", "step": 83},
        {
            "kind": "entry-parameter",
            "parameter": 20,
            "parameter_index": [],
            "donated": True,
            "donation_source": "input_output_alias",
        },
        {"kind": "shares-buffer", "other_id": 595, "other_name": "multiply_add_fusion.13"},
    ]
    assert doc["allocation"]["kinds"] == ["parameter", "maybe-live-out"]
    assert doc["defined_by"]["phase"] == "argument"


@pytest.mark.parametrize("relative", [DONATION, SCAN])
def test_hlotop_why_without_a_name_answers_for_every_value_live_at_the_peak(capsys, relative):
    text = Text(relative)
    assert main(["why", "--json", sample(relative)]) == 0
    doc = json.loads(capsys.readouterr().out)
    peak = doc["step"]
    assert doc["step_is_peak"] is True
    live = {
        vid
        for vid, label in text.label.items()
        if (r := text.ranges.get(label if "{" in label else label + "{}")) and r[0] <= peak <= r[1]
    }
    assert {v["id"] for v in doc["values"]} == live
    sizes = [v["logical_bytes"] for v in doc["values"]]
    assert sizes == sorted(sizes, reverse=True)  # XLA's peak-list order
    for v in doc["values"]:
        kinds = [r["kind"] for r in v["reasons"]]
        assert kinds and "not-live" not in kinds
        want = text.last_use(v["id"])
        got = v["last_use"]
        assert (None if got is None else (got["instruction"], got["step"])) == (
            None if want is None else (want[0].split(",")[0], want[1])
        )
        later = [text.step[n] for n, _ in text.uses[v["id"]] if text.step.get(n, -1) >= peak]
        assert ("used-later" in kinds) is bool(later)
    assert main(["why", sample(relative)]) == 0
    out = capsys.readouterr().out
    assert f"{len(live)} values live at step {peak} (XLA's peak)" in out


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["copy.8"], "no value copy.8; close: copy.87"),
        (["while.4"], "while.4 names 33 values: while.4{}, while.4{0}"),
        (["copy.87", "--step", "450"], "no step 450 (its steps: 0 to 449)"),
    ],
)
def test_hlotop_why_refuses_with_the_usage_and_status_2(capsys, args, said):
    assert main(["why", sample(SCAN), *args]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "usage: hlotop why DUMP [NAME] [--step N] [--json]"
    assert said in err[1] and err[1].startswith("hlotop why: error: ")


def test_hlotop_why_of_a_dump_without_live_ranges(capsys, tmp_path):
    """Before 2021-04 the dump has no HloLiveRange: the value, its allocation and uses,
    no step; without NAME there is nothing to answer for."""
    text = (SAMPLES / "seeds/000_aa093b3e4f73e23a.txt").read_text()
    dump = tmp_path / "old-buffer-assignment.txt"
    dump.write_text(text[: text.index("HloLiveRange (max ")])
    assert main(["why", str(dump), "concatenate_convert_fusion"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^live range +\(none printed\)$", out, re.M)
    assert "No live ranges in this dump: no step to ask about." in out
    assert main(["why", str(dump)]) == 2
    assert "no live ranges, so no step to ask about" in capsys.readouterr().err
    assert main(["why", str(dump), "concatenate_convert_fusion", "--step", "1"]) == 2


def test_hlotop_why_of_a_missing_dump_is_one_line(capsys, tmp_path):
    assert main(["why", str(tmp_path / "none.txt"), "x"]) == 2
    assert capsys.readouterr().err.startswith("hlotop: error: ")


# -- hlotop --json's values live at the peak --------------------------------------------


# The reasons the two samples give at their peaks, each one at least once.
JSON_REASONS = {"used-later", "output", "entry-parameter", "loop-carried", "shares-buffer"}


def test_json_says_of_each_value_live_at_the_peak_what_hlotop_why_says(capsys):
    """--json --advise's peak_values carry each value's why: its defining instruction, live
    range, last use and the reasons at the peak, equal to what ``hlotop why --json DUMP
    ID`` says of that value, for a value of each kind of reason (a loop's state in the
    scan; an output, donated and undonated parameters and a shared buffer in the
    donation sample); the last use is the one the dump's text gives."""
    seen: set[str] = set()
    donated: set[bool] = set()
    for relative in (SCAN, DONATION):
        text, dump = Text(relative), sample(relative)
        assert main(["--json", dump]) == 0  # without --advise: no why (costly)
        plain = json.loads(capsys.readouterr().out)["analysis"]["peak_values"]
        assert plain and all(
            v["defined_by"] is None and v["last_use"] is None and v["reasons"] is None
            for v in plain
        )
        assert main(["--json", "--advise", dump]) == 0
        doc = json.loads(capsys.readouterr().out)
        values = doc["analysis"]["peak_values"]
        assert [v["id"] for v in values] == [v["id"] for v in plain]
        assert len(values) >= 30
        picked: dict[object, dict] = {}
        for v in values:
            want = text.last_use(v["id"])
            got = v["last_use"]
            assert (None if got is None else (got["instruction"], got["step"])) == (
                None if want is None else (want[0].split(",")[0], want[1])
            )
            for r in v["reasons"]:
                key = (r["kind"], r.get("donated"))
                picked.setdefault(key, v)
        for (kind, is_donated), v in picked.items():
            assert main(["why", "--json", dump, str(v["id"])]) == 0
            why = json.loads(capsys.readouterr().out)
            assert why["step"] == doc["analysis"]["peak_step"] and why["step_is_peak"]
            for key in ("defined_by", "live_range", "last_use", "reasons"):
                assert v[key] == why[key], (relative, v["id"], key)
            seen.add(kind)
            if kind == "entry-parameter":
                donated.add(is_donated)
    assert JSON_REASONS <= seen and donated == {True, False}


# -- the browser's detail card ---------------------------------------------------------------


@pilot_test
async def test_detail_card_says_why_the_value_is_live_at_the_timeline_step():
    path = str(next((SAMPLES / SCAN).glob("*-buffer-assignment.txt")))
    app = HlotopApp(path)
    async with app.run_test(size=(160, 60)) as pilot:
        screen = await started(app, pilot)
        info = _info(screen.dump, "while.4{2}")
        screen.select_value(info.value.id)
        screen.timeline.set_step(300)
        await pilot.pause()
        detail = screen.detail
        card = "\n".join(line.rstrip() for line in widget_lines(detail))
        assert "why live at step 300:" in card
        assert "carried by while.4 (step 219)" in card
        assert re.search(r"last use +while\.6, operand 0 \{8\} at step 417", card)
        assert re.search(r"phase +forward", card)
        await pilot.press("2", "right")  # the timeline's cursor, one step on
        await pilot.pause()
        assert screen.step == 301
        card = "\n".join(line.rstrip() for line in widget_lines(detail))
        assert "why live at step 301:" in card and "why live at step 300" not in card
        screen.timeline.set_step(418)
        await pilot.pause()
        card = "\n".join(widget_lines(detail))
        assert "not live at step 418 (steps 219-417)" in card


def test_the_text_reader_reads_the_whole_schedule():
    text = Text(SCAN)
    assert len(text.sequence) == text.max == 449 and len(text.ranges) == 450


@pilot_test
async def test_detail_card_of_a_dump_without_live_ranges_says_so(tmp_path):
    text = (SAMPLES / "seeds/000_aa093b3e4f73e23a.txt").read_text()
    dump = tmp_path / "old-buffer-assignment.txt"
    dump.write_text(text[: text.index("HloLiveRange (max ")])
    app = HlotopApp(str(dump))
    async with app.run_test(size=(160, 60)) as pilot:
        screen = await started(app, pilot)
        info = screen.dump.analysis.values[0]
        screen.select_value(info.value.id)
        await pilot.pause()
        card = "\n".join(line.rstrip() for line in widget_lines(screen.detail))
        assert "why live: the dump has no live ranges" in card
        assert "last use" not in card
