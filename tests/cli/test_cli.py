"""The hlotop command: --summary, --json, --strict, refusals, diagnostics."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import json_oracle
from conftest import BIG, ROOT, options_without_help, sample
from hlotop.cli import main

SEED3 = sample("seeds/003_a3085531593bac68.txt")


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hlotop", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )


def test_version_and_help():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.decode().startswith("hlotop 0.")
    help_text = run("--help").stdout.decode()
    for flag in ("--summary", "--json", "--strict", "PATH"):
        assert flag in help_text


def test_summary_reports_the_peak_and_largest_values():
    out = run("--summary", SEED3)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert "286.05MiB  (299,944,008 B)" in text
    assert "Peak step         11 = XLA's  at fusion" in text
    assert "VMEM (color 1)" in text and "SMEM (color 2)" in text
    lines = [ln for ln in text.splitlines() if ln.split()[:1] == ["1"]]
    assert "copy-start{0}" in lines[0] and "56.00MiB" in lines[0]


def test_summary_at_80_columns_keeps_names_and_shapes_whole():
    """``COLUMNS=80 hlotop --summary`` (80x24 over SSH): no line is wider, and the
    values' names, sizes, shapes and memory spaces are whole (op_name goes first)."""
    out = subprocess.run(
        [sys.executable, "-m", "hlotop", "--summary", SEED3],
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.decode().splitlines()
    assert all(len(line) <= 80 for line in lines)
    top = lines[next(i for i, ln in enumerate(lines) if ln.startswith("Largest values")) :]
    assert top[1].split() == ["#", "value", "bytes", "allocated", "shape", "space"]
    assert top[2].split() == [
        "1",
        "copy-start{0}",
        "56.00MiB",
        "56.00MiB",
        "f32[4096,3584]{1,0:T(8,128)S(1)}",
        "VMEM",
    ]
    assert "f32[8,128,4096]{2,1,0:T(8,128)S(1)}" in top[6]


def test_piped_output_without_flags_is_the_summary():
    out = run(SEED3)
    assert out.returncode == 0 and "Largest values live at the peak" in out.stdout.decode()


def test_json_schema_and_figures(capsys):
    assert main(["--json", SEED3]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["total_bytes_used"] == 299944008
    assert sum(a["size"] for a in doc["allocations"]) == doc["total_bytes_used"]
    a12 = doc["allocations"][12]
    assert (a12["index"], a12["color"], a12["memory_space"], a12["kinds"]) == (
        12,
        1,
        "VMEM",
        ["preallocated-temp"],
    )
    assert {v["id"] for v in a12["values"]} == {31, 36, 39, 41}
    assert doc["allocations"][1]["parameter"] == {
        "number": 4,
        "shape": "f32[3584,4096]",
        "shape_index": [],
    }
    uv = next(u for u in doc["used_values"] if u["id"] == 29)
    assert uv["positions"] == ["p3.6", "copy-start.1 {1}"]
    assert uv["uses"][-1] == "copy-done.1, operand 0 {1}"
    live = doc["live_range"]
    assert live["max"] == 15 and len(live["instruction_sequence"]) == 15
    assert live["peak"]["time"] == 11 and live["peak"]["variant"] == "V1"
    assert {"name": "all-reduce.28", "shape_index": [1], "start": 12, "end": 12} in live["buffers"]
    assert doc["analysis"]["peak_step"] == 11
    assert len(doc["analysis"]["live_bytes"]) == 16
    assert doc["stack_trace"] is None and doc["memory_usage_report"] is None
    assert doc["diagnostics"] == []


def test_json_loads_no_terminal_rendering():
    """``--json`` writes no rich text: rich's console (40 ms of imports, a tenth of a
    small dump's whole run) is not imported by it, while ``--summary`` needs it."""
    code = (
        "import sys; from hlotop.cli import main; rc = main(sys.argv[1:]); "
        "print('rich.console' in sys.modules, file=sys.stderr); sys.exit(rc)"
    )
    for flag, imported in (("--json", "False"), ("--summary", "True")):
        run = subprocess.run(
            [sys.executable, "-c", code, str(SEED3), flag],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert run.stderr.strip().splitlines()[-1] == imported, flag


def test_json_stack_trace_tree(capsys):
    assert main(["--json", sample("seeds/000_aa093b3e4f73e23a.txt")]) == 0
    tree = json.loads(capsys.readouterr().out)["stack_trace"]
    assert tree["total"] == 41943040
    assert [c["label"] for c in tree["tree"][0]["children"]][:2] == [
        "concatenate_convert_fusion",
        "args[0]",
    ]


@pytest.mark.parametrize(
    "content,reason",
    [
        (b"", "the file is empty"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "a binary file"),
        (b'{"a": 1}\n', "not an XLA buffer-assignment dump"),
        (
            b"HloModule jit_f, entry_computation_layout={()->f32[]}\n\nENTRY %main {\n}\n",
            "not an XLA buffer-assignment dump",
        ),
    ],
)
def test_refusals_are_one_line_with_status_2(tmp_path, content, reason):
    path = tmp_path / "input.txt"
    path.write_bytes(content)
    for args in (["--summary", str(path)], ["--json", str(path)]):
        out = run(*args)
        err = out.stderr.decode()
        assert out.returncode == 2
        assert err.count("\n") == 1 and err.startswith(f"hlotop: error: {path}: ")
        assert reason in err and "Traceback" not in err


def test_missing_path_and_empty_directory(tmp_path):
    out = run("--summary", str(tmp_path / "nope.txt"))
    assert out.returncode == 2 and "no such file" in out.stderr.decode()
    out = run("--summary", str(tmp_path))
    assert out.returncode == 2
    assert (
        out.stderr.decode()
        == f"hlotop: error: {tmp_path}: no *-buffer-assignment.txt dump in this directory\n"
    )


def test_stdin_dash():
    out = run("--json", "-", stdin=Path(ROOT / SEED3).read_bytes())
    assert out.returncode == 0
    assert json.loads(out.stdout)["analysis"]["peak_step"] == 11


def test_bad_lines_become_diagnostics_and_strict_fails(tmp_path):
    lines = Path(ROOT / SEED3).read_text().splitlines(keepends=True)
    lines.insert(5, "garbage that is no dump line\n")
    lines[8] = "allocation 3: size lots, parameter 1:\n"  # was allocation 3
    bad = tmp_path / "bad-buffer-assignment.txt"
    bad.write_text("".join(lines))
    out = run("--json", str(bad))
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    diags = [(d["line"], d["severity"]) for d in doc["diagnostics"] if d["severity"] == "error"]
    assert diags == [(6, "error"), (9, "error")]
    assert "expected" in doc["diagnostics"][1]["message"]  # what, and what it found:
    assert "lots" in doc["diagnostics"][1]["message"]
    assert len(doc["allocations"]) == 12  # the rest of the dump still opens
    assert doc["analysis"]["peak_step"] == 11
    assert run("--json", "--strict", str(bad)).returncode == 1
    assert run("--summary", "--strict", SEED3).returncode == 0


def test_an_internal_error_is_one_line_and_a_log_file(tmp_path, monkeypatch, capsys):
    import hlotop.report.summary

    def broken(module, *figures):
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(hlotop.report.summary, "render_summary", broken)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert main(["--summary", SEED3]) == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(
        "hlotop: error: internal error (RuntimeError: simulated bug); details in "
    )
    log = Path(err.strip().rsplit(" ", 1)[1])
    assert log.parent == tmp_path / "hlotop"
    assert "simulated bug" in log.read_text() and "Traceback" in log.read_text()


@pytest.mark.parametrize(
    "relative",
    [
        "seeds/003_a3085531593bac68.txt",
        "seeds/000_aa093b3e4f73e23a.txt",
        "jax/jax-0.4.31/scan_layers/module_0001.jit_scan_train_"
        "step.cpu_after_optimizations-buffer-assignment.txt",
        # stack frames from the module text beside it
        "jax/jax-0.9.2/mlp_train/module_0001.jit_train_step."
        "cpu_after_optimizations-buffer-assignment.txt",
        "jax/jax-0.9.2/tuple_outputs/module_0001.jit_tuple_update."
        "cpu_after_optimizations-buffer-assignment.txt",
    ],
)
@pytest.mark.parametrize("batch", [1, 7, 1024])
def test_json_is_streamed_as_the_same_document(relative, batch, monkeypatch):
    """--json writes the records a batch at a time: the same document, byte for byte,
    as the dict oracle builds whole, whatever the batch size."""
    import hlotop.report.json_doc as export
    from hlotop.loading.loader import load

    monkeypatch.setattr(export, "BATCH", batch)
    out = io.StringIO()
    export.write_json(load(sample(relative), lazy=True), out)
    assert out.getvalue() == json_oracle.dumps(load(sample(relative), lazy=True))
    written = json.loads(out.getvalue())
    assert len(written["used_values"]) == len(load(sample(relative)).used_values) > 1
    assert out.getvalue().endswith("}\n")


def _damaged_at_both_ends(tmp_path) -> tuple[Path, str]:
    """A big sample with an unreadable use line in its first and its last record."""
    text = Path(
        sample(
            "jax/jax-0.9.2/transformer_big/module_0001.jit_transformer_train_"
            "step.cpu_after_optimizations-buffer-assignment.txt"
        )
    ).read_text()
    first, last = text.index("\n uses:\n"), text.rindex("\n uses:\n")
    cut = len("\n uses:\n")
    damaged = (
        text[:first]
        + "\n uses:\n  ?bad\n"
        + text[first + cut : last]
        + "\n uses:\n  ?worse\n"
        + text[last + cut :]
    )
    path = tmp_path / "damaged-buffer-assignment.txt"
    path.write_text(damaged)
    return path, damaged


@pytest.mark.parametrize("workers_fail", ["never", "cannot start", "one dies", "one raises"])
def test_json_of_a_big_dump_written_by_workers_is_the_same_document(
    workers_fail, monkeypatch, tmp_path
):
    """From PARALLEL_RECORDS records on, worker processes format chunks of records and
    hlotop writes them in order; the document (with the diagnostics of every chunk, in
    dump order) is the one a single process writes: if the pool cannot start, or a
    worker fails on the way, hlotop formats the chunks it did not get itself; the
    chunks of a worker that dies are formatted again by other workers."""
    import os

    import hlotop.loading.workers as workers
    import hlotop.report.json_doc as export
    import hlotop.report.json_text as json_text
    import hlotop.report.parallel as parallel
    from hlotop.loading.loader import load

    path, damaged = _damaged_at_both_ends(tmp_path)
    single = io.StringIO()
    export.write_json(load(path, lazy=True), single)
    parent = os.getpid()
    real_format = json_text.FORMATTERS["used_value"]
    formatted = {"here": 0}
    ids = load(path, lazy=True).used_values.ids
    # Enough records for workers, in four chunks: each worker formats two or more.
    assert len(ids) >= export.PARALLEL_RECORDS and len(ids) > 3 * parallel.CHUNK + 100
    first_chunk_ends = ids[parallel.CHUNK - 1]
    second_chunk = parallel.CHUNK + 100  # records a worker has formatted, into its second
    first_chunk_done = tmp_path / "first-chunk-formatted"
    died = tmp_path / "a-worker-died"

    def fmt(record, ctx):
        if os.getpid() == parent:
            formatted["here"] += 1
        else:
            formatted["there"] = formatted.get("there", 0) + 1  # in the worker's copy
            if record.value.id == first_chunk_ends:
                first_chunk_done.touch()
            if workers_fail == "one dies" and formatted["there"] == second_chunk:
                # Past its first chunk; it dies once the first chunk of all is handed
                # back (the workers run at a lower priority, at their own pace), so
                # that the parent takes over part of the way, not from the start.
                while not first_chunk_done.exists():
                    time.sleep(0.01)
                time.sleep(0.2)
                died.touch()
                os._exit(1)
            if workers_fail == "one raises" and formatted["there"] == second_chunk:
                raise RuntimeError("simulated bug in a worker")
        return real_format(record, ctx)

    def no_pool(*args, **kwargs):
        raise ValueError("no fork here")

    monkeypatch.setitem(json_text.FORMATTERS, "used_value", fmt)
    if workers_fail == "cannot start":
        monkeypatch.setattr(workers, "fork_context", no_pool)
    many = io.StringIO()
    module = load(path, lazy=True)
    export.write_json(module, many, workers=2)
    assert many.getvalue() == single.getvalue()
    records = len(module.used_values)
    assert died.exists() == (workers_fail == "one dies")
    if workers_fail in ("never", "one dies"):
        assert formatted["here"] == 0, "the parent formatted records itself"
    elif workers_fail == "cannot start":
        assert formatted["here"] == records
    else:
        assert 0 < formatted["here"] < records, "the parent did not take over"
    lines = [d["line"] for d in json.loads(many.getvalue())["diagnostics"]]
    for bad in ("  ?bad", "  ?worse"):
        assert lines.count(damaged[: damaged.index(bad)].count("\n") + 1) == 1, bad
    assert lines == sorted(lines)


def test_json_writes_any_text_of_a_record_as_the_encoder_would(tmp_path):
    """Records are written as JSON text directly; quotes, backslashes, control codes and
    non-ASCII in names and op_names come out as json.dumps writes them."""
    import hlotop.report.json_doc as export
    from hlotop.loading.loader import load

    text = Path(
        sample(
            "jax/jax-0.9.2/tuple_outputs/module_0001.jit_tuple_update."
            "cpu_after_optimizations-buffer-assignment.txt"
        )
    ).read_text()
    hostile = 'q\\"uo\\\\te é \\x1b]0;t\\x07 \\t'  # CEscaped in the dump
    assert 'op_name="' in text
    text = text.replace('op_name="', 'op_name="' + hostile, 3)
    dump = tmp_path / "hostile-buffer-assignment.txt"
    dump.write_text(text)
    out = io.StringIO()
    export.write_json(load(dump, lazy=True), out)
    assert out.getvalue() == json_oracle.dumps(load(dump, lazy=True))
    written = json.loads(out.getvalue())
    op_names = [v["op_name"] for v in written["used_values"] if v["op_name"]]
    assert any(n.startswith('q"uo\\te é \x1b]0;t\x07 \t') for n in op_names), op_names[:3]
    assert out.getvalue().isascii()


def test_a_reader_that_stops_early_ends_hlotop_quietly():
    """``hlotop --json DUMP | head``: exit status 141 (as SIGPIPE), nothing on stderr."""
    big = sample(
        "jax/jax-0.9.2/transformer_big/module_0001.jit_transformer_train_step"
        ".cpu_after_optimizations-buffer-assignment.txt"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "hlotop", "--json", big],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(100).startswith(b'{"hlotop_version":')
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert err == b""


def test_json_of_a_damaged_split_module_is_the_whole_document_in_file_order(
    tmp_path, monkeypatch, capsys
):
    """``hlotop --json`` reads a split module's values file first and starts worker
    processes on its records while it reads the rest; the document, diagnostics
    included and in the same order, is the one built whole from the same files."""
    import hlotop.report.json_doc as export
    from hlotop.loading.loader import load

    folder = Path(
        sample(
            "jax/jax-0.10.2/transformer_big/module_0016.jit_transformer_train_step."
            "cpu_after_optimizations-buffer-assignment.txt"
        )
    ).parent
    for f in folder.iterdir():
        text = f.read_text()
        if f.name.endswith(
            ("-buffer-assignment.txt", "-buffer-assignment-values.txt", "-live-range.txt")
        ):
            lines = text.splitlines(keepends=True)
            lines.insert(len(lines) // 2, "garbage in " + f.name + "\n")
            text = "".join(lines)
        (tmp_path / f.name).write_text(text)
    entry = next(tmp_path.glob("*-buffer-assignment.txt"))
    started = []
    real = export.OrderedChunks

    def spy(records, fmt, ctx, workers):
        started.append(real(records, fmt, ctx, workers))
        return started[-1]

    monkeypatch.setattr(export, "OrderedChunks", spy)
    monkeypatch.setattr("hlotop.process.report_workers", lambda: 2)
    assert main(["--json", str(entry)]) == 0
    text = capsys.readouterr().out
    module = load(entry, lazy=True)
    assert len(module.used_values) >= export.PARALLEL_RECORDS  # enough for workers
    assert text == json_oracle.dumps(module)
    written = json.loads(text)
    damaged = {Path(d["path"]).name for d in written["diagnostics"] if d["severity"] == "error"}
    assert len(damaged) == 3, damaged
    assert len(started) == 1 and started[0].parallel  # once, while the dump was read


def test_only_the_hlotop_command_starts_workers(monkeypatch, capsys):
    """A program that writes --json through the library gets no worker process (it may
    run threads Python cannot see); the command passes as many as
    hlotop.process.report_workers allows."""
    import gc

    import hlotop.report.json_doc as export
    from hlotop.loading.loader import load

    big = sample(BIG)  # 3,504 records
    asked = []
    real = export.OrderedChunks

    def spy(records, fmt, ctx, workers):
        asked.append(workers)
        return real(records, fmt, ctx, workers)

    monkeypatch.setattr(export, "OrderedChunks", spy)
    module = load(big, lazy=True)
    assert len(module.used_values) >= export.PARALLEL_RECORDS  # enough for workers
    export.write_json(module, io.StringIO())
    assert asked == []
    loaded_with = _workers_asked_by_load(monkeypatch)
    monkeypatch.setattr("hlotop.process.report_workers", lambda: 3)
    assert main(["--json", big]) == 0
    assert asked == [3]
    assert loaded_with == [3]  # a split module's live ranges may be read by one
    assert gc.isenabled()
    assert json.loads(capsys.readouterr().out)["used_values"]


def _workers_asked_by_load(monkeypatch) -> list[int]:
    """The ``workers`` each call of ``hlotop.loading.loader.load`` asks for from now on."""
    import hlotop.loading.loader as loader

    asked: list[int] = []
    real_load = loader.load

    def spy(*args, **kwargs):
        asked.append(kwargs.get("workers", 0))
        return real_load(*args, **kwargs)

    monkeypatch.setattr(loader, "load", spy)
    return asked


def test_summary_asks_for_workers_and_keeps_nothing_when_called_as_a_library(monkeypatch, capsys):
    """--summary loads with as many workers as hlotop.process.report_workers allows (its
    live ranges may be read by one); a caller of main() that is not the hlotop command
    (which ends by os._exit) gets nothing kept alive after it returns."""
    import gc

    import hlotop.process as process

    asked = _workers_asked_by_load(monkeypatch)
    monkeypatch.setattr(process, "report_workers", lambda: 2)
    assert main(["--summary", SEED3]) == 0
    assert asked == [2]
    assert not process.ends_by_exit()  # so nothing was kept
    try:
        with process.ending_by_exit() as kept:  # as hlotop.cli.run says
            assert main(["--summary", SEED3]) == 0
    finally:
        gc.unfreeze()
    assert [m.name for m in kept] == [Path(SEED3).stem]
    assert "XLA's peak" in capsys.readouterr().out


def test_worker_chunks_wait_in_files_that_are_gone_once_taken():
    """The record chunks the workers format wait in a temporary folder, not in this
    process: each file is deleted as its chunk is taken, in dump order, and the folder
    when the chunks are closed; the text is what this process formats."""
    from hlotop.loading.loader import load
    from hlotop.report import parallel
    from hlotop.report.json_table import Context
    from hlotop.report.json_text import FORMATTERS

    records = load(SEED3, lazy=True).used_values
    fmt, ctx = FORMATTERS["used_value"], Context()
    here = [parallel.format_chunk(records, fmt, ctx, n, 4) for n in range(-(-len(records) // 4))]
    assert len(here) > 3
    with parallel.OrderedChunks(records, fmt, ctx, 2, chunk=4) as chunks:
        folder = chunks.folder
        assert chunks.parallel and folder is not None and os.path.isdir(folder)
        taken = []
        for text, found in chunks:
            taken.append((text, found))
            assert not os.path.exists(os.path.join(folder, f"{len(taken) - 1}.json"))
        assert taken == here
    assert not os.path.exists(folder)


def _chunk_texts():
    """SEED3's records in chunks of 4: the parallel pieces, and the text that iterating
    the chunks and writing each, comma-separated, gives."""
    from hlotop.loading.loader import load
    from hlotop.report import parallel
    from hlotop.report.json_table import Context
    from hlotop.report.json_text import FORMATTERS

    records = load(SEED3, lazy=True).used_values
    fmt, ctx = FORMATTERS["used_value"], Context()
    pieces = [parallel.format_chunk(records, fmt, ctx, n, 4) for n in range(-(-len(records) // 4))]
    text = ",".join(t for t, _ in pieces if t)
    return records, fmt, ctx, text, [d for _, found in pieces for d in found]


@pytest.mark.parametrize("to", ["file", "pipe", "string", "utf-16"])
def test_chunks_written_to_a_stream_are_the_chunks_in_order(tmp_path, to):
    """write_to puts the workers' chunk files on the stream's file descriptor by the
    kernel (a file, a pipe), else writes their text (a StringIO, an encoding whose
    bytes are not the files'); either way the stream gets exactly the chunks'
    text, comma-separated, after what was written before, and the diagnostics come
    back in order."""
    import threading

    from hlotop.report import parallel

    records, fmt, ctx, expected, diagnostics = _chunk_texts()
    reader = None
    if to == "string":
        out = io.StringIO()
    elif to == "pipe":
        r, w = os.pipe()
        out = open(w, "w", encoding="utf-8")  # noqa: SIM115 - closed below
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(open(r, "rb").read()))
        reader.start()
    else:
        encoding = "utf-16" if to == "utf-16" else "utf-8"
        out = open(tmp_path / "out.json", "w", encoding=encoding)  # noqa: SIM115
    out.write("[")
    with parallel.OrderedChunks(records, fmt, ctx, 2, chunk=4) as chunks:
        assert chunks.parallel
        assert parallel.sendable_descriptor(out) is (
            None if to in ("string", "utf-16") else out.fileno()
        )
        found = chunks.write_to(out)
    out.write("]")
    if to == "string":
        written = out.getvalue()
    else:
        out.close()
        if reader is not None:
            reader.join()
            written = got[0].decode("utf-8")
        else:
            written = (tmp_path / "out.json").read_text(encoding=encoding)
    assert written == "[" + expected + "]"
    assert found == diagnostics


def test_a_chunk_the_system_will_not_send_is_written(tmp_path, monkeypatch):
    """Where os.sendfile refuses the kind of file (macOS sends only to sockets) or stops
    part-way, the rest of the chunk is written by plain writes: the same bytes."""
    import errno

    from hlotop.report import parallel

    records, fmt, ctx, expected, _ = _chunk_texts()
    real = os.sendfile
    calls = []

    def refuse_after_a_few_bytes(out_fd, in_fd, offset, count):
        calls.append(offset)
        if len(calls) % 2:
            return real(out_fd, in_fd, offset, min(count, 7))
        raise OSError(errno.ENOTSOCK, "not a socket")

    monkeypatch.setattr(os, "sendfile", refuse_after_a_few_bytes)
    with open(tmp_path / "out.json", "w", encoding="utf-8") as out:
        with parallel.OrderedChunks(records, fmt, ctx, 2, chunk=4) as chunks:
            chunks.write_to(out)
    assert len(calls) > 2
    assert (tmp_path / "out.json").read_text() == expected


def test_record_workers_run_below_the_callers_priority():
    """The workers that format records ahead yield the cores to this process (which
    reads the rest of the dump meanwhile): each runs at this process's nice value plus
    parallel.NICENESS."""
    from hlotop.loading.loader import load
    from hlotop.report import parallel
    from hlotop.report.json_table import Context

    records = load(SEED3, lazy=True).used_values

    def niceness(record, ctx):
        return str(os.nice(0))

    with parallel.OrderedChunks(records, niceness, Context(), 2, chunk=4) as chunks:
        assert chunks.parallel
        seen = {n for text, _ in chunks for n in text.split(",")}
    assert seen == {str(min(os.nice(0) + parallel.NICENESS, 19))}


def test_every_option_of_both_commands_says_what_it_does():
    from hlotop.analysis import grouping
    from hlotop.cli import ACCOUNTINGS, build_diff_parser, build_parser

    assert ACCOUNTINGS == grouping.ACCOUNTINGS

    for parser in (build_parser(), build_diff_parser()):
        assert options_without_help(parser) == [], parser.prog


def test_a_report_leaves_its_model_frozen_only_when_the_command_ends_by_exit(capsys):
    """--summary runs with the collector paused; the hlotop command (which ends by
    os._exit) freezes the model before re-enabling it, so the collector never scans it
    after the output (0.1-0.2 s at 46 MB); a library caller's heap is left as it was."""
    import gc

    import hlotop.process as process

    frozen = gc.get_freeze_count()
    assert main(["--summary", SEED3]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    try:
        with process.ending_by_exit():  # as hlotop.cli.run says
            assert main(["--summary", SEED3]) == 0
            assert gc.isenabled() and gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()
    assert "XLA's peak" in capsys.readouterr().out


def test_diff_loads_each_compile_with_the_workers_a_report_may_use(monkeypatch, capsys):
    """hlotop diff reads each side as --summary does (a split module's live ranges on
    another core), and the command keeps both until it exits."""
    import gc

    import hlotop.process as process

    asked = _workers_asked_by_load(monkeypatch)
    monkeypatch.setattr(process, "report_workers", lambda: 2)
    try:
        with process.ending_by_exit() as kept:  # as hlotop.cli.run says
            assert main(["diff", "--summary", SEED3, SEED3]) == 0
    finally:
        gc.unfreeze()
    assert asked == [2, 2]
    assert len(kept) == 1 and [m.name for m in kept[0]] == [Path(SEED3).stem] * 2
    assert "XLA" in capsys.readouterr().out


# Options that were taken and then did nothing, or did harm (issue 32): each is refused
# with one line saying what it takes, exit 2, never an internal error.
OOM_TEXT = sample("oom/jax-24309-remat-bfc.txt")


def _refused(capsys, *args: str) -> str:
    assert main(list(args)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "internal error" not in captured.err
    return captured.err


@pytest.mark.parametrize("gate", ["nan%", "inf%", "-5%", "-5MiB"])
def test_a_fail_over_that_can_never_or_always_fire_is_refused(capsys, gate):
    """``--fail-over nan%`` made a gate that never fired (exit 0 whatever grew)."""
    err = _refused(capsys, "diff", "--summary", f"--fail-over={gate}", SEED3, SEED3)
    assert err == (
        f"hlotop: error: --fail-over '{gate}': give a percentage of 0% or more (5%) or a "
        "size (512MiB, 1.5GiB, 1048576)\n"
    )


@pytest.mark.parametrize("size", ["0", "0GiB", "0.0001"])
def test_a_capacity_of_no_bytes_is_refused(capsys, size):
    err = _refused(capsys, "--summary", "--capacity", size, SEED3)
    assert f"--capacity '{size}': a device's memory is more than 0 bytes" in err


@pytest.mark.parametrize("rule", [r"a=\2", r"(a)=\g<name>", "a=b\\"])
def test_a_scope_rule_whose_replacement_cannot_be_made_is_refused(capsys, rule):
    """A replacement naming a group the expression lacks was an internal error (exit
    70, a crash log) at the first scope it matched."""
    path = sample("cpu/gpt_loop")
    err = _refused(capsys, "--summary", "--group-by", "scope", "--scope-rule", rule, path)
    assert err.startswith(f"hlotop: error: scope rule {rule!r}: ")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--summary", "--step", "3"), "--step without --group-by: it chooses"),
        (("--json", "--accounting", "occupied"), "--accounting without --group-by"),
        (
            ("--summary", "--step", "3", "--accounting", "logical"),
            "--step and --accounting without --group-by: they choose",
        ),
    ],
)
def test_step_and_accounting_without_group_by_are_refused(capsys, args, said):
    """They were read, and nothing used them: the report was of the peak, as always."""
    assert said in _refused(capsys, *args, SEED3)


def test_step_and_accounting_still_choose_what_is_exported(capsys):
    assert main(["--export", "csv", "--step", "3", "--accounting", "occupied", SEED3]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("id,value,bytes") and len(rows) > 1


def test_export_of_an_out_of_memory_text_is_refused(capsys):
    """It printed the text's report, exit 0."""
    err = _refused(capsys, "--export", "csv", OOM_TEXT)
    assert err == (
        f"hlotop: error: {OOM_TEXT}: an out-of-memory error text, not a dump: --export "
        "takes a dump's live set (show the text with --summary or --json)\n"
    )


@pytest.mark.parametrize("side", ["OLD", "NEW"])
def test_diff_against_an_out_of_memory_text_says_what_it_is(capsys, side):
    """The loader said "nor an out-of-memory error text" of one."""
    old, new = (OOM_TEXT, SEED3) if side == "OLD" else (SEED3, OOM_TEXT)
    err = _refused(capsys, "diff", "--summary", old, new)
    assert f"{side} is an out-of-memory error text, not a dump: hlotop diff compares" in err


def test_export_strict_says_why_it_fails(tmp_path, capsys):
    """stdout is the data: --strict's exit 1 came with no word of why."""
    text = Path(SEED3).read_text().replace("    fusion.10{}:9-11\n", "    fusion.10{}:9-11 x\n")
    path = tmp_path / "x.txt"
    path.write_text(text)
    assert main(["--export", "csv", "--strict", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("id,value,bytes")
    line = text[: text.index("fusion.10{}:9-11 x")].count("\n") + 1
    assert captured.err == (
        f"hlotop: --strict: 1 diagnostic: {path}:{line}: error: buffer live range: column "
        "21: expected EOF, found ' x'\n"
    )
