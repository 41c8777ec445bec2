"""The ``hlotop`` command: argument parsing and the choice between the terminal
browser, ``--summary`` and ``--json``.

Exit status: 0 on success; 1 with ``--strict`` when the dump has diagnostics;
2 when the input cannot be opened (one line on stderr: ``hlotop: error: <path>:
<reason>``).
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager
from functools import partial

from hlotop.safe_text import printable
from hlotop.version import __version__

EPILOG = """\
examples:
  hlotop module_0042.jit_train_step.cpu_after_optimizations-buffer-assignment.txt
  hlotop --summary dump_dir/module_0042...-live-range.txt   (any file of a split module)
  cat dump.txt | hlotop -
  hlotop --json dump.txt | jq .analysis.peak_step
  hlotop --summary --group-by phase,scope dump.txt      (what is live at XLA's peak)
  hlotop --export folded dump.txt > peak.folded        (open in speedscope)

  hlotop diff --summary --fail-over 5% before/ after/   (compare two compiles)

make a dump with:  XLA_FLAGS=--xla_dump_to=DIR python train.py
"""


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``hlotop [--summary | --json] [--strict] PATH``."""
    parser = argparse.ArgumentParser(
        prog="hlotop",
        description="Browse the memory of a compiled XLA program: allocations, the values "
        "packed into them, live ranges over the schedule and the peak, from an "
        "XLA buffer-assignment dump (--xla_dump_to).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "path",
        metavar="PATH",
        help="a *-buffer-assignment.txt dump (any XLA era), any file of a "
        "split module, a directory holding one module, or - for stdin",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--summary",
        action="store_true",
        help="print a report (totals, peak, largest values at the peak) "
        "instead of opening the browser; the default when stdout is "
        "not a terminal",
    )
    mode.add_argument(
        "--json", action="store_true", help="print the parsed dump and its analysis as JSON"
    )
    mode.add_argument(
        "--export",
        choices=("csv", "tsv", "folded"),
        help="write the live set at a step (XLA's peak by default) to stdout: csv/tsv one "
        "row per group with --group-by, else one row per value; folded: collapsed "
        "stacks (speedscope, flamelens, inferno)",
    )
    group = parser.add_argument_group("grouping the live set (--summary, --json, --export)")
    group.add_argument(
        "--group-by",
        metavar="KEYS",
        help="comma-separated keys, outermost first: scope, phase, source, opcode, "
        "shape, dtype, kind, space, param (e.g. phase,scope)",
    )
    group.add_argument(
        "--step",
        type=int,
        metavar="N",
        help="the schedule step whose live set is grouped (default: XLA's peak step)",
    )
    group.add_argument(
        "--accounting",
        choices=("logical", "occupied"),
        default="logical",
        help="which bytes are summed: logical (each value at its shape, no padding; "
        "the default) or occupied (allocation bytes in use, padding included, shared "
        "bytes once)",
    )
    group.add_argument(
        "--scope-rule",
        action="append",
        default=[],
        metavar="REGEX=REPL",
        help="rewrite scopes (re.sub), after layer indices are folded; repeatable",
    )
    group.add_argument(
        "--no-fold",
        action="store_true",
        help="keep layer indices in scopes and parameter paths (layers_17, not layers_*)",
    )
    parser.add_argument(
        "--capacity",
        metavar="SIZE|DEVICE",
        help="the device's memory: a size (16GiB, 15.48G, 80GB) or a device (v5e, v4, "
        "v5p, v6e, a100-80gb, h100 ...; a GPU's pool is JAX's default 75%%): says the "
        "headroom or by how much the program is over, and what to shed to fit",
    )
    parser.add_argument(
        "--dump",
        metavar="PATH",
        help="with an out-of-memory text: the dump (a module, or a directory) whose "
        "values the text's buffers are linked to",
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit with status 1 if the dump has any diagnostic"
    )
    parser.add_argument("--version", action="version", version=f"hlotop {__version__}")
    return parser


def _error(message: str) -> int:
    # A path from a directory listing is text from a dump's author too: no control codes.
    print(f"hlotop: error: {printable(message)}", file=sys.stderr)
    return 2


def _reattach_terminal() -> bool:
    """After reading a dump from a pipe, read keys from the terminal instead."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return False
    os.dup2(fd, 0)
    os.close(fd)
    return True


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer the pipe closed on


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def run() -> None:
    """The ``hlotop`` command: :func:`main`, then exit at once. A big dump's model is
    millions of objects, and freeing them one by one at interpreter shutdown took a
    second at 100 MB after the output was complete; the OS frees it all in one go."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe (hlotop --json | head)
        code = code or EXIT_BROKEN_PIPE
    os._exit(code)


def build_diff_parser() -> argparse.ArgumentParser:
    """``hlotop diff OLD NEW [--summary | --json] [--fail-over SIZE|PERCENT]``."""
    parser = argparse.ArgumentParser(
        prog="hlotop diff",
        description="Compare two compiles of one program: their figures, their values "
        "matched without ids or instruction names, and the change by group.",
        epilog="examples:\n"
        "  hlotop diff --summary before/ after/\n"
        "  hlotop diff --json old-buffer-assignment.txt new-buffer-assignment.txt\n"
        "  hlotop diff --summary --fail-over 5% main/ branch/   (exit 1 if it grew more)\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "old",
        metavar="OLD",
        help="a dump file, any file of a split module, or a directory holding one module",
    )
    parser.add_argument("new", metavar="NEW", help="the same, for the other compile")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--summary",
        action="store_true",
        help="print the comparison as text instead of opening the diff browser (the "
        "default when stdout is not a terminal, or with --fail-over)",
    )
    mode.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--fail-over",
        metavar="SIZE|PERCENT",
        help="exit 1 when NEW's XLA peak or total bytes exceed OLD's by more than this "
        "(5%%, 512MiB, 1.5GiB or bytes), with one line saying which grew by how much",
    )
    parser.add_argument(
        "--group-by",
        metavar="KEYS",
        default="phase,scope",
        help="the keys of the grouped change (default phase,scope)",
    )
    parser.add_argument("--accounting", choices=("logical", "occupied"), default="logical")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``hlotop`` with ``argv`` (default ``sys.argv[1:]``); return the exit status
    (0, 1 for --strict with diagnostics or a --fail-over that is exceeded, 2 for input
    that is not a dump, 70 for a bug)."""
    argv = sys.argv[1:] if argv is None else argv
    diff = argv[:1] == ["diff"]
    args = build_diff_parser().parse_args(argv[1:]) if diff else build_parser().parse_args(argv)
    try:
        return _diff(args) if diff else _main(args)
    except BrokenPipeError:  # hlotop --json DUMP | head: the reader has all it wants
        _stdout_to_devnull()  # so that the final flush does not fail again
        return EXIT_BROKEN_PIPE
    except Exception as err:  # an hlotop bug: a log file, one line, never a traceback
        from hlotop.crashlog import write_crash_log

        log = write_crash_log(err, f"argv: {sys.argv!r}")
        where = f"; details in {log}" if log else ""
        print(
            printable(f"hlotop: error: internal error ({type(err).__name__}: {err}){where}"),
            file=sys.stderr,
        )
        return 70


def _main(args) -> int:
    from hlotop.loading.loader import LoadError, load, load_bytes

    try:
        grouping = _grouping_options(args)
    except ValueError as err:
        return _error(str(err))
    try:
        capacity = _capacity(args.capacity)
    except ValueError as err:
        return _error(str(err))
    interactive = not (args.summary or args.json or args.export) and sys.stdout.isatty()
    oom = _oom_text(args.path)
    if oom is not None:
        return _oom(args, *oom, interactive=interactive)
    if args.path == "-" and _STDIN:  # read while looking for an OOM text: a dump
        load = partial(_load_read_stdin, load_bytes, _STDIN[0])

    directory = _modules_of(args.path)
    if directory is not None and not interactive:
        return _directory_report(args, directory)
    if directory is not None:
        from hlotop.ui.modules_app import run_modules_browser

        return run_modules_browser(args.path, directory, capacity)
    try:
        if interactive:
            return _run_browser(args.path, load, load_bytes, args.strict, capacity)
        with _reporting():
            if args.json:
                return _write_json(args, load, grouping, capacity)
            module = load(args.path, lazy=True)  # records are read on demand
            if args.export and grouping is not None:
                return _export(module, args, grouping)
            from hlotop.report.summary import print_summary

            groups = None
            if grouping is not None and grouping["keys"] is not None:
                groups = _group(module, grouping)[0]
            print_summary(module, groups=groups, fit=_fit(module, capacity))
            return _strict_status(module, args.strict)
    except LoadError as err:
        return _error(str(err))
    except _GroupingError as err:
        return _error(str(err))
    except KeyboardInterrupt:
        return 130


def _diff(args) -> int:
    """``hlotop diff``: both compiles loaded, compared, printed; the gate's status."""
    from hlotop.analysis.diff import diff_modules
    from hlotop.analysis.grouping import parse_keys
    from hlotop.loading.loader import LoadError, load
    from hlotop.report.diff_report import Threshold, gate, render_diff, write_diff_json

    try:
        keys = parse_keys(args.group_by)
        threshold = Threshold.parse(args.fail_over) if args.fail_over else None
    except ValueError as err:
        return _error(str(err))
    if not (args.summary or args.json or threshold) and sys.stdout.isatty():
        from hlotop.ui.diff_app import run_diff_browser

        return run_diff_browser(args.old, args.new, keys, args.accounting)
    try:
        with _reporting():
            old, new = load(args.old, lazy=True), load(args.new, lazy=True)
            diff = diff_modules(old, new, keys, args.accounting)
            if args.json:
                from hlotop.report.diff_report import write_diff_json

                write_diff_json(diff, sys.stdout)
            else:
                from rich.console import Console

                from hlotop.report.summary import PIPE_WIDTH

                console = Console(highlight=False)
                if not console.is_terminal and "COLUMNS" not in os.environ:
                    console = Console(highlight=False, width=PIPE_WIDTH)
                console.print(render_diff(diff))
    except LoadError as err:
        return _error(str(err))
    over = gate(diff, threshold) if threshold is not None else None
    if over is not None:
        print(printable(over), file=sys.stderr)
        return 1
    return 0


def _capacity(text: str | None) -> tuple[int, str] | None:
    """``--capacity``: (bytes, what it is). Raises ValueError naming what it takes."""
    if text is None:
        return None
    from hlotop.model.devices import parse_capacity

    return parse_capacity(text)


def _fit(module, capacity: tuple[int, str] | None):
    if capacity is None:
        return None
    from hlotop.analysis.capacity import fit

    return fit(module, *capacity)


MAX_OOM_TEXT = 64 << 20  # bytes of a log read to look for an out-of-memory message


def _oom_text(path: str):
    """(the OOM report, its text's label) when ``path`` is a file (or stdin) holding an
    out-of-memory error text and no dump; None otherwise (a dump, a directory, or a
    file the loader then refuses). Reads stdin into ``_STDIN`` so a dump there still
    loads."""
    from hlotop.parse.oom import looks_like_oom, parse_oom

    if path == "-":
        data = sys.stdin.buffer.read()
        _STDIN.append(data)
        label = "<stdin>"
    else:
        if not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_OOM_TEXT)
        except OSError:
            return None
        label = path
    if data.startswith(b"BufferAssignment:") or b"\nHloLiveRange (max " in data[: 1 << 20]:
        return None  # a dump
    text = data.decode("utf-8", errors="replace")
    if not looks_like_oom(text):
        return None
    report = parse_oom(text, label)
    if report is None or not (
        report.entries
        or any(
            x is not None
            for x in (
                report.capacity_bytes,
                report.used_bytes,
                report.over_bytes,
                report.requested_bytes,
            )
        )
    ):
        return None  # a text that quotes an OOM message but holds none of its figures
    return report, label


_STDIN: list[bytes] = []  # what _oom_text read of stdin, for the loader


def _load_read_stdin(load_bytes, data: bytes, path: str, *, lazy: bool = False, **_ignored):
    """``load`` for a dump already read from stdin (``hlotop -``)."""
    return load_bytes(data, lazy=lazy)


def _oom(args, report, label: str, *, interactive: bool) -> int:
    """An out-of-memory text: its breakdown, linked to ``--dump``'s values if given
    (or a dump beside it). ``--capacity`` is the text's own."""
    from hlotop.report.oom_report import oom_json, render_oom, write_oom_json

    links, module_name = [], ""
    dump = args.dump or _dump_beside(label)
    if dump is not None:
        from hlotop.analysis.oom_link import link_entries
        from hlotop.loading.loader import LoadError, load

        try:
            with _reporting():
                module = load(dump, lazy=True)
        except LoadError as err:
            return _error(str(err))
        links, module_name = link_entries(module, report.entries), module.name
    if args.json:
        write_oom_json(oom_json(report, links, module_name), sys.stdout)
        return 0
    from rich.console import Console

    from hlotop.report.summary import PIPE_WIDTH

    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, width=PIPE_WIDTH)
    rendered = render_oom(report, links, module_name)
    if interactive and label == "<stdin>" and not _reattach_terminal():
        interactive = False  # no terminal to read keys from: print it
    if interactive:
        from hlotop.ui.text_app import run_text_browser

        return run_text_browser(f"out of memory · {label}", rendered)
    console.print(rendered)
    return 0


def _dump_beside(label: str) -> str | None:
    """The one module in the OOM text's folder, if there is exactly one."""
    if label == "<stdin>":
        return None
    from hlotop.loading.directory import list_modules

    folder = os.path.dirname(os.path.abspath(label))
    try:
        entries = list_modules(folder)
    except OSError:
        return None
    return str(entries[0].path) if len(entries) == 1 else None


def _modules_of(path: str) -> list | None:
    """The modules of ``path`` when it is a directory holding other than exactly one
    (a whole --xla_dump_to run); None otherwise (one module: opened as usual)."""
    if path == "-" or not os.path.isdir(path):
        return None
    from hlotop.loading.directory import list_modules

    try:
        entries = list_modules(path)
    except OSError:
        return None
    return entries if len(entries) > 1 else None


def _directory_report(args, entries: list) -> int:
    """``--summary DIR`` / ``--json DIR``: the modules ranked, read in parallel across
    the cores (forked workers, each reads its modules' first look)."""
    from hlotop.loading.directory import rank_modules
    from hlotop.report.modules_report import render_modules, write_modules_json

    if args.export or args.group_by:
        return _error(
            f"{args.path}: a directory of {len(entries)} modules; name one to group or export its live set"
        )
    with _reporting():
        figures = rank_modules(entries, _module_mapper(len(entries)))
        if args.json:
            write_modules_json(args.path, figures, sys.stdout)
        else:
            from rich.console import Console

            from hlotop.report.summary import PIPE_WIDTH

            console = Console(highlight=False)
            if not console.is_terminal and "COLUMNS" not in os.environ:
                console = Console(highlight=False, width=PIPE_WIDTH)
            console.print(render_modules(args.path, figures))
    return 1 if args.strict and any(f.error for f in figures) else 0


def _module_mapper(count: int):
    """A process pool's map over modules when there are enough of them and forking is
    allowed (hlotop.process), else None (one at a time)."""
    from hlotop.process import report_workers

    workers = min(report_workers(), count // 8)
    if workers < 2:
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    def mapper(function, items):
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            yield from pool.map(function, items, chunksize=4)

    return mapper


class _GroupingError(Exception):
    """A grouping the dump cannot give (no live ranges, a step outside the schedule)."""


def _grouping_options(args) -> dict | None:
    """The grouping asked for on the command line, checked before the dump is read;
    None when there is none (and no --export). Raises ValueError for a bad key, rule
    or option."""
    from hlotop.analysis.grouping import parse_keys
    from hlotop.analysis.scope import ScopeRule

    asked = args.group_by is not None or args.step is not None or args.scope_rule
    if not asked and not args.export and args.accounting == "logical":
        return None
    if asked and not (args.summary or args.json or args.export):
        raise ValueError(
            "--group-by, --step and --scope-rule go with --summary, --json or --export"
        )
    keys = parse_keys(args.group_by) if args.group_by is not None else None
    rules = tuple(ScopeRule.parse(rule) for rule in args.scope_rule)
    return {
        "keys": keys,
        "step": args.step,
        "accounting": args.accounting,
        "fold": not args.no_fold,
        "rules": rules,
    }


def _group(module, options: dict):
    """(grouping, labeller) of ``module``'s live set as ``options`` say (keys default to
    ``phase,scope``). Raises _GroupingError when the dump cannot be grouped so."""
    from hlotop.analysis.grouping import Labeller, group_live_set

    labeller = Labeller(module, options["fold"], options["rules"])
    try:
        grouping = group_live_set(
            module,
            options["keys"] or ("phase", "scope"),
            options["step"],
            options["accounting"],
            labeller=labeller,
        )
    except ValueError as err:
        raise _GroupingError(f"{module.name}: {err}") from None
    return grouping, labeller


def _export(module, args, options: dict) -> int:
    """``--export csv|tsv|folded``: the live set to stdout."""
    from hlotop.report.export import write_folded, write_groups, write_values

    grouping, labeller = _group(module, options)
    if args.export == "folded":
        write_folded(grouping, labeller, sys.stdout, options["keys"] or ())
    elif options["keys"]:
        write_groups(grouping, sys.stdout, args.export)
    else:
        write_values(grouping, labeller, sys.stdout, args.export)
    return _strict_status(module, args.strict)


@contextmanager
def _reporting():
    """While a report is made: no cyclic GC (the model lives until the report is out
    and makes no cycles, so the GC would only re-scan it: a full pass over 10^6
    objects right after loading a 100 MB dump took 0.16 s)."""
    from hlotop.process import gc_paused

    with gc_paused():
        yield


def _write_json(args, load, grouping: dict | None = None, capacity=None) -> int:
    """``--json``: records are read once as they are written; on a big dump by worker
    processes, one a core (this is the only process of ours and it runs no threads)."""
    from hlotop.process import report_workers
    from hlotop.report.json_doc import RecordsAhead, write_json

    workers = report_workers()
    ahead = RecordsAhead(workers)  # on the records while the rest of the dump is read
    try:
        module = load(args.path, lazy=True, on_records=ahead.start)
        groups = None
        if grouping is not None and grouping["keys"] is not None:
            groups = _group(module, grouping)[0]
        write_json(module, sys.stdout, workers, ahead, groups=groups, fit=_fit(module, capacity))
    finally:
        ahead.close()
    return _strict_status(module, args.strict)


def _strict_status(module, strict: bool) -> int:
    if strict:
        module.read_records()  # every line checked
    return 1 if strict and module.diagnostics else 0


def _run_browser(path: str, load, load_bytes, strict: bool, capacity=None) -> int:
    from hlotop.ui.app import HlotopApp

    if path == "-":
        data = _STDIN[0] if _STDIN else sys.stdin.buffer.read()
        if not _reattach_terminal():
            return _error("-: no terminal to run the browser on; use --summary or --json")
        app = HlotopApp("<stdin>", lambda: load_bytes(data), capacity=capacity)
    else:
        if not os.path.exists(path):
            return _error(f"{path}: no such file or directory")
        app = HlotopApp(path, capacity=capacity)
    app.run()
    code = app.return_code or 0
    module = getattr(app, "module", None)
    if code == 0 and strict and module is not None and module.diagnostics:
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
