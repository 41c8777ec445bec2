"""What a records pass found, kept for re-opening the unchanged dump (hlotop.loading.record_cache),
on real damaged dumps and in the browser."""

from __future__ import annotations

import os
import shutil

from conftest import sample
from hlotop.loading.loader import load
from hlotop.loading.record_cache import (
    cache_dir,
    cached_record_diagnostics,
    store_record_diagnostics,
)
from hlotop.ui.apps.app import HlotopApp
from pilot import pilot_test

TPU = "seeds/003_a3085531593bac68.txt"


def _bad_record_dump(tmp_path):
    """Seed 003 with a line inside its first record that no grammar reads."""
    lines = open(sample(TPU)).read().split("\n")
    at = lines.index(" uses:") + 1
    lines.insert(at, "this is not a record line")
    path = tmp_path / "bad-record.txt"
    path.write_text("\n".join(lines))
    return path, at + 1


def test_a_pass_is_remembered_until_the_dump_changes(tmp_path):
    path, bad_line = _bad_record_dump(tmp_path)
    dump = load(path, lazy=True)
    assert cached_record_diagnostics(dump) is None  # never read before
    before = len(dump.diagnostics)
    dump.read_records()
    found = dump.diagnostics[before:]
    assert [d.line for d in found] == [bad_line]
    store_record_diagnostics(dump, found)
    assert cache_dir() != path.parent and list(cache_dir().glob("records-*.json"))
    again = load(path, lazy=True)
    assert cached_record_diagnostics(again) == found
    again.take_record_diagnostics(found)
    assert again.records_read and again.diagnostics == dump.diagnostics
    # Changed (a newer modification time, another size): the entry no longer applies.
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 10**9))
    assert cached_record_diagnostics(load(path, lazy=True)) is None
    with open(path, "a") as f:
        f.write("\n")
    assert cached_record_diagnostics(load(path, lazy=True)) is None


def test_a_damaged_cache_is_ignored(tmp_path):
    path, _ = _bad_record_dump(tmp_path)
    dump = load(path, lazy=True)
    store_record_diagnostics(dump, [])
    for entry in cache_dir().glob("records-*.json"):
        entry.write_text('{"schema": 1, "files": [')  # cut short
    assert cached_record_diagnostics(load(path, lazy=True)) is None
    shutil.rmtree(cache_dir())
    cache_dir().parent.joinpath("hlotop").write_text("not a folder")  # cannot be written
    store_record_diagnostics(dump, [])  # ignored, no error
    assert cached_record_diagnostics(load(path, lazy=True)) is None


@pilot_test
async def test_reopening_an_unchanged_dump_skips_the_records_pass(tmp_path, monkeypatch):
    from hlotop.loading.loader import ModuleDump

    path, bad_line = _bad_record_dump(tmp_path)
    passes = []
    real_read = ModuleDump.read_records

    def read_records(self, progress=None):
        passes.append(self.name)
        return real_read(self, progress)

    monkeypatch.setattr(ModuleDump, "read_records", read_records)
    seen = []
    for _ in range(2):
        app = HlotopApp(str(path))
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_until_loaded()
            await pilot.pause()
            seen.append([(d.line, d.message) for d in app.dump.diagnostics])
            await pilot.press("q")
    assert len(passes) == 1  # the second time, the cache had it
    assert seen[0] == seen[1] and any(line == bad_line for line, _ in seen[1])
