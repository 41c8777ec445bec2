"""Value records read back from their file (hlotop.loading.file_bytes): once indexed, a
dump's ``Used values`` text is not held; each record is read from the file when asked
for, and gives exactly what the text held in memory gives. A file changed on disk after
it was opened is said so, never read as the old one."""

from __future__ import annotations

import os
import platform
import re
import shutil
from itertools import pairwise
from pathlib import Path

import pytest

import hlotop.loading.file_bytes as file_bytes
from conftest import BIG, COMBINED, SEEDS, sample
from hlotop.loading.file_bytes import FileBytes
from hlotop.loading.loader import load, load_bytes
from hlotop.model import UsedValues
from hlotop.parse.dump import ReadHooks, parse_text
from hlotop.process import give_back_big_buffers
from hlotop.ui.apps.app import HlotopApp
from pilot import pilot_test, plain, started

SPLIT_VALUES = (
    "jax/jax-0.10.2/transformer_big/module_0016.jit_transformer_train_step"
    ".cpu_after_optimizations-buffer-assignment.txt"
)
DUMPS = [str(p.relative_to(p.parents[1])) for p in SEEDS] + [BIG, COMBINED, SPLIT_VALUES]


def _records(dump) -> UsedValues:
    records = dump.sections.used_values
    assert isinstance(records, UsedValues)
    return records


def _in_memory(path: str) -> UsedValues:
    """The same file's records with its text held (as standard input is read)."""
    return _records(load_bytes(Path(path).read_bytes(), path, lazy=True))


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of 4 kB: the samples' records then span many pieces, and records and
    line counts cross their edges."""
    monkeypatch.setattr(file_bytes, "CHUNK", 4096)


@pytest.mark.parametrize("relative", DUMPS)
def test_records_read_back_are_the_ones_in_memory(relative, small_pieces):
    records = _records(load(sample(relative), lazy=True))
    values_file = records.path
    held = _in_memory(values_file)
    assert len(records.text) == 0 and len(held.text) > 0  # released; the other holds it
    assert len(records) == len(held) > 0
    assert list(records.ids) == list(held.ids)
    numbers = range(len(held))
    assert [records.line_of(n) for n in numbers] == [held.line_of(n) for n in numbers]
    assert [records.text_of(n) for n in numbers] == [held.text_of(n) for n in numbers]
    assert [records.get(v) for v in held.ids] == [held.get(v) for v in held.ids]
    found, found_held = [], []
    assert list(records.checked(found)) == list(held.checked(found_held))
    assert found == found_held
    for query in ("fusion", "OPERAND 0", "metadata={op_name", "no such text"):
        assert records.find_text(query) == held.find_text(query)
    assert records.problem is None


def test_records_are_read_back_in_pieces_of_a_window(small_pieces):
    """checked() reads a window of records at once, in order, over pieces of any size:
    the records from a middle one on are those of the whole pass."""
    records = _records(load(sample(SPLIT_VALUES), lazy=True))
    every = list(records.checked([]))
    middle = len(every) // 2
    assert list(records.checked([], middle, middle + 5)) == every[middle : middle + 5]
    assert [r.line for r in every] == [records.line_of(n) for n in range(len(every))]


def test_a_file_changed_after_opening_is_not_read_as_the_old_one(tmp_path, small_pieces):
    path = tmp_path / "dump-buffer-assignment.txt"
    shutil.copy(sample(COMBINED), path)
    records = _records(load(path, lazy=True))
    first = records.ids[0]
    assert records.get(first) is not None  # read (and kept) while the file is the same
    # The dump written again in place, as a new run of the same program does.
    path.write_bytes(path.read_bytes().replace(b"fusion", b"FUSION"))
    middle = records.ids[len(records) // 2]  # not read before (the last one was, by the loader)
    assert records.get(middle) is None
    assert records.problem is not None and str(path) in records.problem
    assert "changed on disk" in records.problem
    found: list = []
    assert list(records.checked(found)) == []
    assert [(d.severity, d.path) for d in found] == [("error", records.path)]
    assert "value records not read" in found[0].message
    assert records.find_text("fusion") == []
    # Opened again, it reads the new text.
    again = _records(load(path, lazy=True))
    assert again.get(middle) is not None and again.problem is None
    assert again.find_text("FUSION") and again.find_text("fusion") == again.find_text("FUSION")


def test_a_deleted_file_is_said_so(tmp_path, small_pieces):
    path = tmp_path / "dump-buffer-assignment.txt"
    shutil.copy(sample(COMBINED), path)
    records = _records(load(path, lazy=True))
    os.remove(path)
    assert records.get(records.ids[len(records) // 2]) is None
    assert records.problem is not None and str(path) in records.problem


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("crlf", lambda b: b.replace(b"\n", b"\r\n")),  # read with LF line ends
        ("utf8", lambda b: b.replace(b'op_name="', 'op_name="µ'.encode(), 1)),
    ],
)
def test_a_text_that_is_not_the_files_bytes_is_kept(tmp_path, name, change):
    """CRLF line ends made LF, or a UTF-8 text decoded: the offsets are not the file's,
    so the text is held as before."""
    path = tmp_path / f"{name}-buffer-assignment.txt"
    path.write_bytes(change(Path(sample(COMBINED)).read_bytes()))
    records = _records(load(path, lazy=True))
    assert len(records.text) > 0
    assert records.get(records.ids[-1]) is not None


def test_file_bytes_reads_ranges_across_pieces(tmp_path, small_pieces):
    data = bytes(range(256)) * 100 + b"\n" * 5000  # 30600 bytes, 8 pieces
    path = tmp_path / "bytes.txt"
    path.write_bytes(data)
    source = FileBytes(path)
    for start, end in [(0, 10), (4090, 4100), (100, 20000), (29000, 40000), (5, 5), (9, 3)]:
        assert source.read(start, end) == data[start:end]
        assert source.count(b"\n", start, end) == data.count(b"\n", start, end)
    path.write_bytes(data[:-1])
    with pytest.raises(OSError, match="changed on disk"):
        source.read(12000, 12010)  # a piece not read before


def test_records_out_of_id_order_are_found_by_id():
    """XLA prints the records in id order; a text that does not is still searched by
    bisection (the ids sorted once), and of a repeated id the first record is found."""
    text = Path(sample(COMBINED)).read_bytes()
    records = _in_memory_records(text)
    ids = list(records.ids)
    assert ids == sorted(ids) and len(ids) > 3
    head = text.index(b"Used values:\n") + len(b"Used values:\n")
    body = text[head : records.end]
    spans = [body[a - head : b - head] for a, b in pairwise([*records.starts, records.end])]
    shuffled = (
        text[:head]
        + spans[2]
        + spans[0]
        + spans[1]
        + spans[0]
        + b"".join(spans[3:])
        + text[records.end :]
    )
    mixed = _in_memory_records(shuffled)
    assert list(mixed.ids[:4]) == [ids[2], ids[0], ids[1], ids[0]]
    assert mixed.number_of(ids[0]) == 1  # the first of the two
    assert mixed.number_of(ids[2]) == 0
    assert mixed.number_of(max(ids) + 1) is None
    assert mixed.get(ids[1]).value.id == ids[1]


def _in_memory_records(text: bytes) -> UsedValues:
    return _records(load_bytes(text, "mixed.txt", lazy=True))


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_big_buffers_are_given_back_on_glibc():
    assert give_back_big_buffers() is True


@pilot_test
async def test_the_browser_says_when_records_cannot_be_read_back(tmp_path, small_pieces):
    """The dump written again while it is open: the value pane and the search say the
    records are not read, and why, instead of showing them as missing."""
    path = tmp_path / "dump-buffer-assignment.txt"
    shutil.copy(sample(COMBINED), path)
    app = HlotopApp(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await started(app, pilot)
        path.write_bytes(path.read_bytes().replace(b"fusion", b"FUSION"))
        records = _records(app.dump)
        records._cache.clear()  # records the panes read while the file was the same
        records._source._pieces.clear()  # and the pieces of the file read for them
        info = app.dump.analysis.by_id[records.ids[len(records) // 2]]
        card = plain(screen.detail.value_card(info))
        assert re.search(r"^record +not read: .*changed on disk", card, re.M), card
        await pilot.press("slash", *"jit(")
        await pilot.pause()
        label = str(app.screen.query_one("#search-count").render())
        assert "op_names not read:" in label and "changed on disk" in label


def test_the_parser_drops_a_text_handed_over_once_its_records_are_indexed():
    """Handed over in a list, with the file to read the records back from, the text is
    taken out of the list and the records no longer hold it: nothing keeps the whole
    text while the allocations and live ranges are read (the 36 MB combined dump's
    browser peaked 24 MB higher when it was kept to the end of the parse)."""
    path = sample(COMBINED)
    held = [Path(path).read_bytes()]
    parsed = parse_text(path, held, [], ReadHooks(source=FileBytes(path)))
    records = parsed.used_values
    assert held == [] and isinstance(records, UsedValues) and len(records.text) == 0
    assert len(parsed.allocations) > 0 and parsed.live_range is not None
    assert [r.value.id for r in records] == list(_in_memory(path).ids)


@pytest.mark.parametrize("relative", [COMBINED, SPLIT_VALUES])
def test_a_records_line_is_the_same_in_any_order_of_reading(relative, small_pieces):
    """A record's line is counted once for its whole block of records, in one read,
    and kept: in whatever order the records are asked for (a grouped live set reads
    them in dump order, the panes at random), each gets the line the one pass in dump
    order gives it."""
    import random

    in_order = [r.line for r in _records(load(sample(relative), lazy=True)).checked([])]
    records = _records(load(sample(relative), lazy=True))
    numbers = list(range(len(records)))
    random.Random(0).shuffle(numbers)
    lines = {n: records.line_of(n) for n in numbers}
    assert [lines[n] for n in range(len(records))] == in_order
    assert all(records.record(n).line == in_order[n] for n in numbers[:50])


@pytest.mark.parametrize("records", [0, 1, 255, 256, 257, 600])
def test_the_line_after_the_records_is_counted_on_from_their_checkpoints(records):
    """The records' end line (where the lines after them, a combined dump's live
    ranges, start counting) comes from their line-number checkpoints, every 256th
    record's, and the lines after the last: the line a plain count gives, for a
    section ending before, on and after a checkpoint, and with no record."""
    from hlotop.parse.records import used_values

    record = "<{n} p{n} @0>\n positions:\n  p{n}\n uses:\n  add, operand 0\n"
    head = "BufferAssignment:\n\nUsed values:\n"
    body = "".join(record.format(n=n) for n in range(records))
    text = head + body + "\nHloLiveRange (max 3):\n"
    begin, end = len(head), len(head) + len(body) + 1  # the blank line is the records'
    table = used_values("x.txt", text, 4, begin, end)
    assert table.line_at_end() == text.count("\n", 0, end) + 1 == 4 + 5 * records + 1
    assert len(table) == records
    if records:
        assert table.line_of(records - 1) == 4 + 5 * (records - 1)
    given = used_values("x.txt", text, 4, begin, end, end_line=99)
    assert given.line_at_end() == 99  # as given: not counted
