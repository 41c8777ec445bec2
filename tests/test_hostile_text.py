"""Text shapes a dump can arrive in (issue 4): invalid UTF-8, megabyte-long lines, huge
numbers, tabs and control characters in labels."""

from __future__ import annotations

from pathlib import Path

from hlotop import load
from hlotop.cli import main
from hlotop.safe_text import printable
from hlotop.units import human_bytes

from conftest import sample

SEED2 = Path(sample("seeds/002_c2e226da3172e77e.txt"))


def test_invalid_utf8_is_replaced_and_reported_at_its_line(tmp_path):
    data = SEED2.read_bytes().replace(b'op_name="args[1]"', b'op_name="args\xff\xfe[1]"')
    path = tmp_path / "x.txt"
    path.write_bytes(data)
    m = load(path)
    line = data[:data.index(b"\xff")].count(b"\n") + 1
    assert [(d.line, d.severity, "UTF-8" in d.message) for d in m.diagnostics] == [
        (line, "warning", True)]
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
    assert m.allocations[4].size == 10**30
    assert "allocations add up to" in m.diagnostics[0].message  # total no longer matches
    rec = next(r for r in m.used_values if r.value.name == "args_0_.1")
    assert rec.instruction.op_name == huge_name
    assert human_bytes(10**30).endswith("EiB")


def test_control_characters_never_reach_the_terminal(tmp_path, capsys):
    hostile = r'\x1b]0;owned\x07\x1b[31m\tred'  # CEscaped as XLA prints op_names
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
