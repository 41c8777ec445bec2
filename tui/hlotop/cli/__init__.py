"""The ``hlotop`` command: argument parsing and the choice between the terminal
browser, ``--summary``, ``--json`` and ``--export`` for a dump; the other inputs (a
directory of modules, an out-of-memory text) and ``hlotop diff`` are in
:mod:`hlotop.cli.commands`, ``hlotop fit`` in :mod:`hlotop.cli.fit_command`, ``hlotop why``
in :mod:`hlotop.cli.why`.

Exit status: 0 on success; 1 with ``--strict`` when the dump has diagnostics, when
``hlotop diff --fail-over`` is exceeded, or when the output cannot be written whole (a
full disk, ``ulimit -f``: one line on stderr); 2 when the input cannot be opened or an
option cannot be used (one line on stderr: ``hlotop: error: <path>: <reason>``); 3 when a
directory's report is partial (a module could not be read: the report names it and
why); 70 for an hlotop bug; 130 after ctrl-c (one line on stderr); 141 when the reader
closed the pipe. SIGTERM and SIGHUP stop the worker processes and remove their temporary
files before hlotop ends as the signal would have it
(:func:`hlotop.loading.workers.stop_with_signals`).
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial

from hlotop.cli.commands import (
    STDIN,
    GroupingError,
    capacity_of,
    diff_command,
    directory_report,
    export,
    fit_of,
    group,
    grouping_options,
    load_read_stdin,
    modules_of,
    oom_command,
    oom_text,
)
from hlotop.cli.common import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    NO_ROOM,
    error,
    output_failed,
    reattach_terminal,
    reporting,
    show,
    stdout_to_devnull,
    strict_status,
    whole_stdout,
)
from hlotop.cli.fit_command import build_fit_parser, fit_command
from hlotop.cli.why import build_why_parser, why_command
from hlotop.safe_text import printable
from hlotop.version import __version__

DEFAULT_TOP = 10  # report.top_text's, not imported for --help
ACCOUNTINGS = ("logical", "occupied")  # analysis.grouping's, not imported for --help (a test)
ACCOUNTING_HELP = (
    "which bytes are summed: logical (each value at its shape, no padding; the "
    "default) or occupied (allocation bytes in use, padding included, shared bytes once)"
)
EPILOG = """\
examples:
  hlotop module_0042.jit_train_step.cpu_after_optimizations-buffer-assignment.txt
  hlotop --summary dump_dir/module_0042...-live-range.txt   (any file of a split module)
  cat dump.txt | hlotop -
  hlotop --json dump.txt | jq .analysis.peak_step
  hlotop --summary --group-by phase,scope dump.txt      (what is live at XLA's peak)
  hlotop --export folded dump.txt > peak.folded        (open in speedscope)

  hlotop /tmp/xla_dump                                 (every module, ranked)
  hlotop oom.log                                       (an out-of-memory error text)
  hlotop --summary --capacity v5e dump.txt             (headroom on a device)
  hlotop diff --summary --fail-over 5% before/ after/   (compare two compiles)
  hlotop fit --capacity h100 b8/ b16/ b32/             (the largest batch that fits)
  hlotop why dump.txt fusion.12                        (why a value is live at the peak)

make a dump with:  XLA_FLAGS=--xla_dump_to=DIR python train.py

exit status: 0; 1 --strict found diagnostics, or diff --fail-over was exceeded; 2 not
a dump, or a bad argument; 3 a directory's report is partial (a module could not be
read: the report says which and why); 70 an hlotop bug; 130 ctrl-c
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
        help="a *-buffer-assignment.txt dump (any XLA era), any file of a split module, "
        "a directory (one module opens; several are ranked), an out-of-memory error "
        "text, or - for stdin",
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
    # No default: given or not, so that one given without --group-by is refused.
    group.add_argument("--accounting", choices=ACCOUNTINGS, help=ACCOUNTING_HELP)
    group.add_argument(
        "--scope-rule",
        action="append",
        default=[],
        metavar="REGEX=REPL",
        help="rewrite scopes (re.sub), after layer indices are folded; repeatable",
    )
    group.add_argument(
        "--top",
        type=int,
        nargs="?",
        const=DEFAULT_TOP,
        metavar="N",
        help="with --summary: the live set as pprof's top (flat, flat%%, sum%%, cum, cum%%) "
        f"of its N groups of most bytes of their own (default {DEFAULT_TOP}), a scope "
        "split at its / into a tree (--group-by keys; default scope); with a directory: "
        "the groups each module lists",
    )
    group.add_argument(
        "--icicle",
        action="store_true",
        help="with --summary: the live set as an icicle (a flame graph drawn as text), "
        "its groups' tree as nested bars scaled to the step's total",
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
        "v5p, v6e, a100-80gb, h100 ...; a GPU's is JAX's default pool: measured for "
        "h100 and h200, else estimated as 75%% of its nominal HBM): says the headroom "
        "or by how much the program is over, and what to shed to fit; with a directory, "
        "each module's",
    )
    parser.add_argument(
        "--advise",
        action="store_true",
        help="with --summary or --json: what to change and the bytes it saves (donation, "
        "remat, replication, padding), largest first",
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


def run() -> None:
    """The ``hlotop`` command: :func:`main`, then exit at once. A big dump's model is
    millions of objects, and freeing them one by one at interpreter shutdown took a
    second at 100 MB after the output was complete; the OS frees it all in one go.
    Big buffers are given back to the OS when freed (:func:`~hlotop.process.give_back_big_buffers`).
    Standard output is written whole or the command fails saying why
    (:func:`~hlotop.cli.common.whole_stdout`)."""
    from hlotop.loading.workers import stop_with_signals
    from hlotop.process import exit_frees_memory, give_back_big_buffers

    exit_frees_memory()
    give_back_big_buffers()
    stop_with_signals()  # SIGTERM, SIGHUP: the workers and their files go too
    whole_stdout()
    code = main()
    try:
        sys.stdout.flush()
    except OSError as err:  # a closed pipe (hlotop --json | head), a full disk
        failed = output_failed(err)
        code = code if code and failed == EXIT_BROKEN_PIPE else failed
    except ValueError:  # closed
        code = code or EXIT_BROKEN_PIPE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def build_diff_parser() -> argparse.ArgumentParser:
    """``hlotop diff OLD NEW [--summary | --json] [--fail-over SIZE|PERCENT]``."""
    parser = argparse.ArgumentParser(
        prog="hlotop diff",
        description="Compare two compiles of one program: their figures, their values "
        "matched without ids or instruction names, and the change by group. Two whole "
        "dump directories: every program both runs compiled, paired by name, and those "
        "only one did.",
        epilog="examples:\n"
        "  hlotop diff --summary before/ after/\n"
        "  hlotop diff --json old-buffer-assignment.txt new-buffer-assignment.txt\n"
        "  hlotop diff --summary --fail-over 5% main/ branch/   (exit 1 if it grew more)\n"
        "  hlotop diff --summary --fail-over 5% run1/ run2/     (whole --xla_dump_to runs)\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "old",
        metavar="OLD",
        help="a dump file, any file of a split module, a directory holding one module, or "
        "a whole dump directory (NEW one too: each program compared, by its figures)",
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
        "(5%%, 512MiB, 1.5GiB or bytes), with one line saying which grew by how much (of "
        "two dump directories: any program both compiled)",
    )
    parser.add_argument(
        "--group-by",
        metavar="KEYS",
        default="phase,scope",
        help="the keys of the grouped change (default phase,scope)",
    )
    parser.add_argument(
        "--accounting", choices=ACCOUNTINGS, default="logical", help=ACCOUNTING_HELP
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``hlotop`` with ``argv`` (default ``sys.argv[1:]``); return the exit status
    (0, 1 for --strict with diagnostics, a --fail-over that is exceeded or output that
    could not be written, 2 for input that is not a dump or an option that cannot be
    used, 3 for a directory's report that lacks a module it could not read, 70 for a
    bug, 130 after ctrl-c)."""
    argv = sys.argv[1:] if argv is None else argv
    command = argv[0] if argv[:1] in (["diff"], ["fit"], ["why"]) else None
    if command == "fit":
        args = build_fit_parser().parse_args(argv[1:])
    elif command == "why":
        args = build_why_parser().parse_args(argv[1:])
    elif command == "diff":
        args = build_diff_parser().parse_args(argv[1:])
    else:
        args = build_parser().parse_args(top_without_number(argv))
    try:
        if command == "fit":
            return fit_command(args)
        if command == "why":
            return why_command(args)
        return diff_command(args) if command == "diff" else _main(args)
    except BrokenPipeError:  # hlotop --json DUMP | head: the reader has all it wants
        stdout_to_devnull()  # so that the final flush does not fail again
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:  # ctrl-c: the workers are stopped on the way out
        print("hlotop: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as err:
        if err.errno not in NO_ROOM:
            return _internal_error(err)
        return output_failed(err)  # a full disk, ulimit -f: not an hlotop bug
    except Exception as err:
        return _internal_error(err)


def top_without_number(argv: list[str]) -> list[str]:
    """``argv`` with a ``--top`` not followed by a number written ``--top=10`` (its
    default): ``hlotop --summary --top dump.txt`` names the dump, not N."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        if arg == "--top" and not (i + 1 < len(out) and out[i + 1].lstrip("-").isdigit()):
            out[i] = f"--top={DEFAULT_TOP}"
    return out


def _internal_error(err: BaseException) -> int:
    """An hlotop bug: a log file with the traceback, one line, never a traceback; 70."""
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
        grouping = grouping_options(args)
    except ValueError as err:
        return error(str(err))
    try:
        capacity = capacity_of(args.capacity)
    except ValueError as err:
        return error(str(err))
    interactive = not (args.summary or args.json or args.export) and sys.stdout.isatty()
    try:
        oom = oom_text(args.path)
    except LoadError as err:  # standard input that is binary, or no dump
        return error(str(err))
    if isinstance(oom, str):  # an OOM text's block, but no report read
        return error(oom)
    if oom is not None:
        return oom_command(args, *oom, interactive=interactive)
    if args.path == "-" and STDIN:  # read while looking for an OOM text: a dump
        load = partial(load_read_stdin, load_bytes, STDIN[0])

    directory = modules_of(args.path)
    if directory is not None and not interactive:
        return directory_report(args, directory, capacity, grouping)
    if args.json and args.top is not None:
        return error(
            "--top with --json bounds the groups of each module of a directory; one "
            "module's --json --group-by lists all its groups"
        )
    if directory is not None:
        from hlotop.ui.apps.modules_app import run_modules_browser

        return run_modules_browser(args.path, directory, capacity)
    try:
        if interactive:
            return _run_browser(args.path, load, load_bytes, args.strict, capacity)
        with reporting():
            if args.json:
                return _write_json(args, load, grouping, capacity)
            from hlotop.process import keep_until_exit, report_workers

            # records are read on demand; the live ranges on another core if there is
            # one, and while this process waits for them it imports what prints the
            # summary
            module = load(
                args.path,
                lazy=True,
                workers=report_workers(),
                meanwhile=None if args.export else _summary_imports,
            )
            keep_until_exit(module)  # freed by the OS when the command exits
            if args.export and grouping is not None:
                return export(module, args, grouping)
            show(_summary(module, args, grouping, capacity))
            return strict_status(module, args.strict)
    except LoadError as err:
        return error(str(err))
    except GroupingError as err:
        return error(str(err))


def _summary(module, args, grouping: dict | None, capacity, workers: int = 0, ahead=None):
    """The :class:`~hlotop.report.reports.SummaryReport` of ``module``: its live set
    grouped as ``--group-by`` says (``grouping``), against ``--capacity``, with
    ``--advise``'s advice; ``workers`` and ``ahead`` format ``--json``'s records."""
    from hlotop.report.reports import SummaryReport

    groups = None
    if grouping is not None and grouping["keys"] is not None:
        groups = group(module, grouping)[0]
    fit, advice = fit_of(module, capacity), _advice(args, module)
    return SummaryReport(
        module,
        groups,
        fit,
        advice,
        workers,
        ahead,
        top=getattr(args, "top", None),
        icicle=getattr(args, "icicle", False),
    )


def _advice(args, module):
    """``--advise``: the module's advice, ranked (:func:`hlotop.analysis.advice.advise`);
    None without the flag."""
    if not args.advise:
        return None
    from hlotop.analysis.advice import advise

    return advise(module)


def _summary_imports() -> None:
    """What ``--summary`` prints with (rich's console and tables, 30 ms), imported while
    the load waits for its worker (:func:`hlotop.loading.loader.load`'s ``meanwhile``)."""
    import hlotop.report.summary  # noqa: F401


def _write_json(args, load, grouping: dict | None = None, capacity=None) -> int:
    """``--json``: records are read once as they are written; on a big dump by worker
    processes, one a core (this is the only process of ours and it runs no threads),
    and a split module's live ranges by another (:mod:`hlotop.loading.ahead`)."""
    from hlotop.process import big_buffers_for_writing, keep_until_exit, report_workers
    from hlotop.report.json_doc import RecordsAhead

    big_buffers_for_writing()
    workers = report_workers()
    ahead = RecordsAhead(workers)  # on the records while the rest of the dump is read
    try:
        # the live ranges on another core too, ahead of the (lower-priority) records
        module = load(args.path, lazy=True, on_records=ahead.start, workers=workers)
        keep_until_exit(module)  # freed by the OS when the command exits
        show(_summary(module, args, grouping, capacity, workers, ahead), as_json=True)
    finally:
        ahead.close()
    return strict_status(module, args.strict)


def _run_browser(path: str, load, load_bytes, strict: bool, capacity=None) -> int:
    from hlotop.ui.apps.app import HlotopApp
    from hlotop.ui.apps.ending_signals import run_app

    if path == "-":
        data = STDIN[0] if STDIN else sys.stdin.buffer.read()
        if not reattach_terminal():
            return error("-: no terminal to run the browser on; use --summary or --json")
        app = HlotopApp("<stdin>", lambda: load_bytes(data), capacity=capacity)
    else:
        if not os.path.exists(path):
            return error(f"{path}: no such file or directory")
        app = HlotopApp(path, capacity=capacity)
    run_app(app)
    code = app.return_code or 0
    module = getattr(app, "module", None)
    if code == 0 and strict and module is not None and module.diagnostics:
        return 1
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
