"""``hlotop why DUMP [NAME] [--step N] [--json]``: why a value is live at a step, or
why each value live there is."""

from __future__ import annotations

import argparse
import sys

from hlotop.cli.common import error, reporting, show
from hlotop.safe_text import printable

USAGE = "usage: hlotop why DUMP [NAME] [--step N] [--json]"


def build_why_parser() -> argparse.ArgumentParser:
    """``hlotop why DUMP [NAME] [--step N] [--json]``."""
    parser = argparse.ArgumentParser(
        prog="hlotop why",
        description="Why is a value live? Its allocation, live range and last use, and "
        "the reasons it is live at a schedule step (XLA's peak by default): used later, "
        "an output, an entry parameter (donated or not), a while loop's state, a buffer "
        "shared with another value. Without NAME: every value live at the step, a line "
        "each.",
        epilog="examples:\n"
        "  hlotop why dump.txt fusion.12\n"
        "  hlotop why dump.txt 'fusion.12{1}' --step 40\n"
        "  hlotop why --json dump.txt 123            (a value id)\n"
        "  hlotop why --json dump.txt | jq '.values[] | select(.reasons[].kind == \"output\")'\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dump",
        metavar="DUMP",
        help="a dump file, any file of a split module, or a directory holding one module",
    )
    parser.add_argument(
        "name",
        metavar="NAME",
        nargs="?",
        help="the value (default: every value live at the step): its instruction (fusion.12), with its ShapeIndex (fusion.12{1}), "
        "its id (123), or as XLA prints it (<123 fusion.12{1} @0>)",
    )
    parser.add_argument(
        "--step",
        type=int,
        metavar="N",
        help="the schedule step to ask about (default: XLA's peak step)",
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    return parser


def why_command(args) -> int:
    """``hlotop why``: the dump loaded, the value found, the answer printed. Exit 2 (one
    line and the usage) for a name that names no value or several, or a step outside
    the schedule."""
    from hlotop.analysis.search import close_names, values_named
    from hlotop.analysis.why_index import WhyIndex
    from hlotop.loading.loader import LoadError, load
    from hlotop.report.reports import WhyReport
    from hlotop.report.why_report import answer

    try:
        with reporting():
            from hlotop.process import keep_until_exit, report_workers

            module = load(args.dump, lazy=True, workers=report_workers())
            keep_until_exit(module)  # freed by the OS when the command exits
            max_time = module.analysis.max_time
            if args.step is not None and (
                module.live_range is None or not 0 <= args.step <= max_time
            ):
                steps = f"0 to {max_time}" if module.live_range is not None else "none"
                return _usage(f"{module.name}: no step {args.step} (its steps: {steps})")
            index = WhyIndex(module)
            if args.name is None:
                return _every_value(module, args, index)
            values = module.analysis.values
            found = values_named(values, args.name)
            if len(found) != 1:
                return _no_value(module.name, args.name, found, values, close_names)
            show(WhyReport(answer(module, found[0], args.step, index), index), args.json)
    except LoadError as err:
        return error(str(err))
    return 0


def _every_value(module, args, index) -> int:
    """``hlotop why DUMP``: every value live at the step, and why."""
    from hlotop.report.reports import WhyLiveReport
    from hlotop.report.why_report import live_answer

    said = live_answer(module, args.step, index)
    if said is None:
        return _usage(f"{module.name}: no live ranges, so no step to ask about; name a value")
    show(WhyLiveReport(said, index), args.json)
    return 0


def _no_value(module: str, name: str, found: list, values, close_names) -> int:
    if found:
        labels = ", ".join(i.value.label for i in found[:8])
        more = f" and {len(found) - 8} more" if len(found) > 8 else ""
        return _usage(f"{module}: {name} names {len(found)} values: {labels}{more}; name one")
    near = close_names(values, name)
    hint = f"; close: {', '.join(near)}" if near else ""
    return _usage(f"{module}: no value {name}{hint}")


def _usage(message: str) -> int:
    print(USAGE, file=sys.stderr)
    print(printable(f"hlotop why: error: {message}"), file=sys.stderr)
    return 2
