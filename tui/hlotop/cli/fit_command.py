"""``hlotop fit DUMP DUMP [DUMP...]``: compiles of one program at several sizes, each
figure fitted as ``a + b * size``; the figures at other sizes (``--at``) and the
largest size that fits a capacity (``--capacity``).

Exit status: 0 with the report (a figure refused at an ``--at`` size is said in it); 2
when a dump cannot be opened, or the compiles are not of one program, or no one size
tells them apart (one line on stderr)."""

from __future__ import annotations

import argparse


def _sizes(text: str) -> list[int]:
    """``"4,16,32"`` -> ``[4, 16, 32]``: positive integers. Raises
    argparse.ArgumentTypeError otherwise."""
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError(f"{text!r}: give positive integers, e.g. 8,16,32")
    return sizes


def build_fit_parser() -> argparse.ArgumentParser:
    """``hlotop fit DUMP DUMP [DUMP...] [--summary | --json] [--sizes S,S,...]
    [--at N]... [--capacity SIZE|DEVICE]``."""
    from hlotop.cli import ACCOUNTING_HELP, ACCOUNTINGS

    parser = argparse.ArgumentParser(
        prog="hlotop fit",
        description="What if the batch or sequence size changed: compiles of one program "
        "at several sizes, each figure (XLA's peak, the bytes --capacity measures, JAX's "
        "memory_analysis() sizes) fitted as a + b * size by least squares, with its "
        "residuals; the figures at other sizes, and the largest size that fits a "
        "capacity. A fit that is not linear (3 sizes or more, a compile over 0.1% off its "
        "line) is not extrapolated.",
        epilog="examples:\n"
        "  hlotop fit b8/ b16/ b32/                    (the size found from the shapes)\n"
        "  hlotop fit --at 64 --capacity h100 b8/ b16/ b32/\n"
        "  hlotop fit --sizes 4,16 --json small.txt big.txt | jq .fit.peak_bytes\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dumps",
        nargs="+",
        metavar="DUMP",
        help="two compiles or more of one program: each a dump file, any file of a split "
        "module, or a directory holding one module",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--summary", action="store_true", help="print the fit as text (the default)")
    mode.add_argument("--json", action="store_true", help="print the fit as JSON")
    parser.add_argument(
        "--sizes",
        type=_sizes,
        metavar="S,S,...",
        help="each compile's size, in the order of the dumps (default: found from the "
        "entry parameters' dimension that changes)",
    )
    parser.add_argument(
        "--at",
        type=_sizes,
        action="append",
        default=[],
        metavar="N[,N...]",
        help="give the figures at this size (repeatable)",
    )
    parser.add_argument(
        "--capacity",
        metavar="SIZE|DEVICE",
        help="the device's memory (16GiB, v5e, h100 ...): the largest size whose "
        "argument + output - alias + temp fits it",
    )
    parser.add_argument(
        "--group-by",
        metavar="KEYS",
        default="scope",
        help="the keys the values live at each XLA peak are grouped by (default scope)",
    )
    parser.add_argument(
        "--accounting",
        choices=ACCOUNTINGS,
        default="logical",
        help=ACCOUNTING_HELP,
    )
    return parser


def fit_command(args) -> int:
    """``hlotop fit``: the compiles loaded, fitted, printed."""
    from hlotop.analysis.fit import fit_compiles, largest, predict
    from hlotop.analysis.fit_sizes import Compile, SizeError
    from hlotop.analysis.grouping import parse_keys
    from hlotop.cli.commands import capacity_of
    from hlotop.cli.common import error, reporting, show
    from hlotop.loading.directory import program_of
    from hlotop.loading.loader import LoadError, load
    from hlotop.report.fit_table import FitReport
    from hlotop.report.reports import FitCommandReport

    if len(args.dumps) < 2:
        return error("hlotop fit: give two compiles at least, of one program at two sizes")
    try:
        keys = parse_keys(args.group_by)
        capacity = capacity_of(args.capacity)
    except ValueError as err:
        return error(str(err))
    try:
        with reporting():
            from hlotop.process import keep_until_exit, report_workers

            workers = report_workers()
            compiles = []
            for path in args.dumps:
                module = load(path, lazy=True, workers=workers)
                compiles.append(Compile(path, module, program_of(module.name)))
            keep_until_exit(compiles)  # freed by the OS when the command exits
            fit = fit_compiles(compiles, args.sizes, keys, args.accounting)
            at = tuple(dict.fromkeys(size for sizes in args.at for size in sizes))
            report = FitReport(
                fit,
                tuple((size, predict(fit, size)) for size in at),
                None if capacity is None else _largest(largest(fit, capacity[0]), capacity),
            )
            show(FitCommandReport(report), args.json)
    except (LoadError, SizeError) as err:
        return error(str(err))
    return 0


def _largest(found, capacity: tuple[int, str]):
    return None if found is None else (found, capacity[1])
