"""Text shapes a dump can arrive in (issue 4): invalid UTF-8, megabyte-long lines, huge
numbers, tabs and control characters in labels."""

from __future__ import annotations

from pathlib import Path

from conftest import sample
from hlotop import load
from hlotop.cli import main
from hlotop.parse.live_range import MISSING_STEP
from hlotop.safe_text import printable
from hlotop.ui.apps.app import HlotopApp
from hlotop.units import human_bytes
from pilot import pilot_test, plain, started

SEED2 = Path(sample("seeds/002_c2e226da3172e77e.txt"))


def test_invalid_utf8_is_replaced_and_reported_at_its_line(tmp_path):
    data = SEED2.read_bytes().replace(b'op_name="args[1]"', b'op_name="args\xff\xfe[1]"')
    path = tmp_path / "x.txt"
    path.write_bytes(data)
    m = load(path)
    line = data[: data.index(b"\xff")].count(b"\n") + 1
    assert [(d.line, d.severity, "UTF-8" in d.message) for d in m.diagnostics] == [
        (line, "warning", True)
    ]
    rec = next(r for r in m.used_values if r.value.name == "args_1_.1")
    assert rec.instruction.op_name == "args\ufffd\ufffd[1]"
    assert m.total_bytes_used == 36864


def test_megabyte_lines_and_huge_numbers(tmp_path):
    text = SEED2.read_text()
    huge_name = "x" * 3_000_000
    text = text.replace('op_name="args[0]"', f'op_name="{huge_name}"')
    text = text.replace("allocation 4: size 23040,", f"allocation 4: size {10**30},")
    path = tmp_path / "x.txt"
    path.write_text(text)
    m = load(path)
    # No int64 is that large: the line is reported as damaged (it reached the model's
    # 64-bit columns and crashed, issue 32), the other allocations are read.
    line = text[: text.index(f"size {10**30}")].count("\n") + 1
    assert [d.line for d in m.diagnostics if "below 2^63" in d.message] == [line]
    assert [a.index for a in m.allocations] == [0, 1, 2, 3]  # 4, the last, left out
    rec = next(r for r in m.used_values if r.value.name == "args_0_.1")
    assert rec.instruction.op_name == huge_name
    assert human_bytes(10**30).endswith("EiB")


SEED3 = Path(sample("seeds/003_a3085531593bac68.txt"))  # HloLiveRange (max 15), peak at 11


def _seed3_with(tmp_path, old: str, new: str):
    text = SEED3.read_text()
    assert text.count(old) == 1
    path = tmp_path / "x.txt"
    path.write_text(text.replace(old, new))
    line = text[: text.index(old)].count("\n") + 1
    return main(["--json", str(path)]), load(path), line


def test_a_huge_live_range_end_is_reported_and_skipped(tmp_path, capsys):
    """One damaged number must not size the timeline (it made hlotop run out of
    memory building a live-bytes curve of 10**15 steps: exit 70)."""
    status, m, line = _seed3_with(
        tmp_path, "    fusion.10{}:9-11\n", f"    fusion.10{{}}:9-{10**15}\n"
    )
    assert status == 0
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "error")]
    assert "ends after the schedule's last step, 15" in m.diagnostics[0].message
    assert m.analysis.max_time == 15 and len(m.analysis.live_bytes) == 16
    assert ("fusion.10", ()) not in {b.key for b in m.live_range.buffers}
    assert len(m.live_range.buffers) == 17


def test_a_huge_schedule_end_is_reported_and_the_listed_steps_used(tmp_path, capsys):
    status, m, line = _seed3_with(
        tmp_path, "HloLiveRange (max 15):", f"HloLiveRange (max {10**14}):"
    )
    assert status == 0
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "warning")]
    assert "does not fit its instruction sequence of 15 steps: using 15" in m.diagnostics[0].message
    assert m.live_range.max_time == m.analysis.max_time == 15
    assert m.analysis.peak_step == 11 and len(m.live_range.buffers) == 18


def test_a_schedule_end_below_its_listed_steps_is_reported(tmp_path, capsys):
    status, m, line = _seed3_with(tmp_path, "HloLiveRange (max 15):", "HloLiveRange (max 1):")
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "warning")]
    assert m.analysis.max_time == 15 and m.analysis.peak_step == 11
    assert len(m.live_range.buffers) == 18  # none of the ranges is taken for damaged


def test_a_lost_schedule_line_is_not_taken_for_a_damaged_schedule_end(tmp_path, capsys):
    """A deleted instruction-sequence line: 14 steps listed under 'max 15', reported
    once, at the line after it; step 7 is shown as lost and the later steps keep their
    names. The header still fits (lines can be lost), so it is kept and so is every
    live range."""
    status, m, line = _seed3_with(tmp_path, "    7:fusion.12\n", "")
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "warning")]
    assert "step 7" in m.diagnostics[0].message
    sequence = m.live_range.instruction_sequence
    assert len(sequence) == 15 and sequence[7] == MISSING_STEP
    assert sequence[8:] == load(SEED3).live_range.instruction_sequence[8:]
    assert m.analysis.max_time == 15
    assert len(m.live_range.buffers) == 18 and m.analysis.peak_step == 11


def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    hostile = r"\x1b]0;owned\x07\x1b[31m\tred"  # CEscaped as XLA prints op_names
    text = SEED2.read_text().replace('op_name="args[2]"', f'op_name="{hostile}"')
    path = tmp_path / "x.txt"
    path.write_text(text)
    m = load(path)
    rec = next(r for r in m.used_values if r.value.name == "args_2_.1")
    assert rec.instruction.op_name == "\x1b]0;owned\x07\x1b[31m\tred"
    assert printable(rec.instruction.op_name) == "\\x1b]0;owned\\x07\\x1b[31m\\tred"
    assert main(["--summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07" in out.replace("\n", "")


def test_rich_markup_in_labels_is_shown_literally(tmp_path, capsys):
    text = SEED2.read_text().replace('op_name="args[2]"', 'op_name="[bold red]s[0].mu[/]"')
    path = tmp_path / "x.txt"
    path.write_text(text)
    assert main(["--summary", str(path)]) == 0
    assert "[bold red]s[0].mu[/]" in capsys.readouterr().out


def test_rich_markup_in_op_names_is_shown_literally_in_every_table(tmp_path, capsys, monkeypatch):
    """The capacity table's op_names (and the padding table's names and shapes) were
    Rich markup strings: ``[dimension_numbers=x]`` was dropped and a stray ``[/]``
    was an internal error."""
    op_name = "jit(f)/dot[dimension_numbers=x]/[/]"
    text = SEED2.read_text().replace('op_name="args[2]"', f'op_name="{op_name}"')
    path = tmp_path / "x.txt"
    path.write_text(text)
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["--summary", "--capacity", "1KiB", str(path)]) == 0
    out = capsys.readouterr().out
    assert "do not cover the excess" in out
    assert out.count(op_name) == 2  # the values to shed, the largest values at the peak


# Numbers that read but disagree with the rest of the dump (issue 32): each was shown
# with no word said.


def test_an_allocation_listed_twice_is_reported(tmp_path, capsys):
    status, m, line = _seed3_with(
        tmp_path,
        "allocation 5: size 16777216, parameter 3,",
        "allocation 4: size 16777216, parameter 3,",
    )
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "error")]
    assert m.diagnostics[0].message.startswith(
        "allocation 4 is listed again (first at line 10): XLA lists each allocation once"
    )


def test_a_value_past_the_end_of_its_allocation_is_reported(tmp_path, capsys):
    status, m, line = _seed3_with(
        tmp_path,
        "<45 all-reduce.28{1} @0> (size=512,offset=16384)",
        "<45 all-reduce.28{1} @0> (size=512,offset=49000)",
    )
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "error")]
    assert m.diagnostics[0].message == (
        "value <45 all-reduce.28{1} @0> (size=512,offset=49000) ends at byte 49512, past "
        "the end of allocation 10 (49184 bytes)"
    )


def test_a_live_range_that_ends_before_it_starts_is_reported(tmp_path, capsys):
    status, m, line = _seed3_with(tmp_path, "    fusion.10{}:9-11\n", "    fusion.10{}:11-9\n")
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "error")]
    assert m.diagnostics[0].message == (
        "the live range of fusion.10{} ends (step 9) before it starts (step 11): it "
        "counts at no step"
    )


def test_a_peak_list_entry_for_an_unknown_value_is_reported(tmp_path, capsys):
    status, m, line = _seed3_with(
        tmp_path, "    fusion.10: 14680064 bytes\n", "    fusion.99: 14680064 bytes\n"
    )
    assert [(d.line, d.severity) for d in m.diagnostics] == [(line, "error")]
    assert m.diagnostics[0].message == (
        "XLA's peak list names fusion.99, which has no live range ('BufferLiveRange:')"
    )
    assert main(["--strict", "--summary", str(tmp_path / "x.txt")]) == 1


def test_a_value_record_lost_from_the_middle_is_reported(tmp_path, capsys):
    """The allocations hold 21 values; a record gone (not cut at the end: the live
    ranges follow) leaves one without its instruction."""
    text = SEED3.read_text()
    start = text.index("<46 tuple.31{} @0>\n")
    end = text.index("\n\n\nHloLiveRange")
    path = tmp_path / "x.txt"
    path.write_text(text[:start] + text[end + 1 :])
    m = load(path)
    assert [(d.line, d.severity) for d in m.diagnostics] == [(0, "warning")]
    assert m.diagnostics[0].message.startswith(
        "the 'Used values' records cover 20 of the 21 values the allocations hold; 1 have "
        "none (<46 tuple.31{} @0>)"
    )


SEED0 = Path(sample("seeds/000_aa093b3e4f73e23a.txt"))  # V4: a stack-trace breakdown


def test_a_stack_trace_total_other_than_the_peak_list_is_reported(tmp_path):
    text = SEED0.read_text()
    old = "  Stack trace breakdown for peak usage: 41 943 040 bytes"
    path = tmp_path / "x.txt"
    path.write_text(text.replace(old, "  Stack trace breakdown for peak usage: 41 943 041 bytes"))
    m = load(path)
    (d,) = m.diagnostics
    assert d.message == (
        "the stack-trace breakdown's total is 41943041 bytes but XLA's peak list adds up "
        "to 41943040: both are printed from the same values"
    )


@pilot_test
async def test_a_megabyte_shape_or_op_name_is_read_whole_and_drawn_cut(tmp_path):
    """A 20 MB shape took 291 s to open in the browser, a 20 MB op_name 30-45 s a key:
    the value card wrapped all of it into half a million lines. What is drawn of one
    text is now cut (the dump still holds, and --json writes, the whole)."""
    big_shape = "(" + ", ".join(["f32[4]{0}"] * 100_000) + ")"  # 1.1 MB
    big_name = "layer/" * 200_000  # 1.2 MB
    text = SEED2.read_text()
    text = text.replace("output shape is |bf16[4,864]|", f"output shape is |{big_shape}|")
    text = text.replace(
        "(size=6912,offset=0): bf16[4,864]{1,0}", f"(size=6912,offset=0): {big_shape}"
    )
    text = text.replace('op_name="args[2]"', f'op_name="{big_name}"')
    path = tmp_path / "big.txt"
    path.write_text(text)
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        a = app.dump.analysis
        by_name = {i.value.name: i for i in a.values}
        named, shaped = by_name["args_2_.1"], by_name["convert.3"]
        assert named.used.instruction.op_name == big_name  # read whole
        assert shaped.shape == big_shape
        for info in (named, shaped):
            card = plain(screen.detail.value_card(info), width=100)
            assert card.count("\n") < 400
            assert "more characters)" in card
        alloc = plain(screen.detail.allocation_card(a.allocation_of[0]), width=100)
        assert alloc.count("\n") < 400 and "more characters)" in alloc
