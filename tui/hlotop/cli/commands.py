"""The ``hlotop`` command's other inputs and reports: ``hlotop diff``, an out-of-memory
text, a directory of modules, the grouped live set and its export, and a capacity."""

from __future__ import annotations

import os
import sys

from hlotop.cli.common import (
    EXIT_PARTIAL,
    error,
    reattach_terminal,
    reporting,
    show,
    strict_status,
)
from hlotop.safe_text import printable


def diff_command(args) -> int:
    """``hlotop diff``: both compiles loaded, compared, printed; the gate's status."""
    from hlotop.analysis.diff import diff_modules
    from hlotop.analysis.grouping import parse_keys
    from hlotop.loading.loader import LoadError, load
    from hlotop.report.diff_report import gate
    from hlotop.report.reports import DiffReport

    try:
        keys = parse_keys(args.group_by)
        threshold = fail_over(args.fail_over) if args.fail_over else None
    except ValueError as err:
        return error(str(err))
    old_modules, new_modules = modules_of(args.old), modules_of(args.new)
    if old_modules is not None and new_modules is not None:
        return directories_diff(args, old_modules, new_modules, threshold)
    try:  # one module against a whole run: the run's module of the same program
        if new_modules is not None:
            args.new = same_program(args.old, new_modules, "NEW")
        elif old_modules is not None:
            args.old = same_program(args.new, old_modules, "OLD")
    except LoadError as err:
        return error(str(err))
    if not (args.summary or args.json or threshold) and sys.stdout.isatty():
        from hlotop.ui.apps.diff_app import run_diff_browser

        return run_diff_browser(args.old, args.new, keys, args.accounting)
    try:
        with reporting():
            from hlotop.process import keep_until_exit, report_workers

            # each module as --summary reads it: a split one's live ranges on another core
            workers = report_workers()
            old = load(not_oom_text(args.old, "OLD"), lazy=True, workers=workers)
            new = load(not_oom_text(args.new, "NEW"), lazy=True, workers=workers)
            keep_until_exit((old, new))  # freed by the OS when the command exits
            diff = diff_modules(old, new, keys, args.accounting)
            show(DiffReport(diff), args.json)
    except LoadError as err:
        return error(str(err))
    over = gate(diff, threshold) if threshold is not None else None
    if over is not None:
        print(printable(over), file=sys.stderr)
        return 1
    return 0


def fail_over(text: str):
    """``--fail-over``: a :class:`~hlotop.report.diff_report.Threshold` of 0 or more
    bytes, or a finite percentage of 0 or more. Raises ValueError saying what it takes
    (``nan%`` made a gate that never fired; a negative one, a gate that always did)."""
    import math

    from hlotop.report.diff_report import Threshold

    threshold = Threshold.parse(text)
    percent, size = threshold.percent, threshold.bytes
    if (percent is not None and not (math.isfinite(percent) and percent >= 0)) or (
        size is not None and size < 0
    ):
        raise ValueError(
            f"--fail-over {text.strip()!r}: give a percentage of 0% or more (5%) or a size "
            "(512MiB, 1.5GiB, 1048576)"
        )
    return threshold


def not_oom_text(path: str, side: str) -> str:
    """``path``, unless it holds an out-of-memory error text and no dump: then
    :class:`~hlotop.loading.errors.LoadError` saying so (the loader said it was
    "nor an out-of-memory error text")."""
    from hlotop.loading.errors import LoadError

    if path != "-" and oom_text(path) is not None:
        raise LoadError(
            path,
            f"{side} is an out-of-memory error text, not a dump: hlotop diff compares two "
            f"dumps (open the text alone, hlotop {path}, or with its dump, --dump DUMP)",
        )
    return path


def same_program(path: str, run: list, side: str) -> str:
    """The module of ``run`` (a dump directory's modules) that compiles the program of
    the one module ``path`` names, said on stderr. Raises LoadError when the run has
    none or several of it (naming them)."""
    from hlotop.loading.directory import program_of
    from hlotop.loading.loader import LoadError, module_name, resolve

    program = program_of(module_name(resolve(path)))
    found = [m for m in run if program_of(m.name) == program]
    folder = os.path.dirname(str(run[0].path)) or "."
    if len(found) != 1:
        which = (
            f"{len(found)} of them {program}: {', '.join(m.path.name for m in found)}"
            if found
            else f"none of them {program}, the program of {path}"
        )
        raise LoadError(folder, f"{len(run)} modules here, {which}; name one")
    print(f"hlotop diff: {side} is {found[0].path} ({program})", file=sys.stderr)
    return str(found[0].path)


def directories_diff(args, old_modules: list, new_modules: list, threshold) -> int:
    """``hlotop diff OLD_DIR NEW_DIR``, both whole runs: their programs paired and
    compared by their first looks (:mod:`hlotop.report.modules_diff`), read in
    parallel; ``--fail-over`` gates each program both compiled. On a terminal without
    ``--summary`` or ``--json``, the report in a scrollable screen."""
    from hlotop.loading.directory import pair_modules, rank_modules
    from hlotop.report.modules_diff import gate_modules
    from hlotop.report.modules_table import ModulesDiff
    from hlotop.report.reports import ModulesDiffReport

    with reporting():
        count = len(old_modules) + len(new_modules)
        old = rank_modules(old_modules, workers=module_workers(count))
        new = rank_modules(new_modules, workers=module_workers(count))
        pairs = pair_modules(old, new)
        over = gate_modules(pairs, threshold) if threshold is not None else []
        report = ModulesDiffReport(ModulesDiff(args.old, args.new, pairs, over))
        if not (args.json or args.summary) and threshold is None and sys.stdout.isatty():
            from hlotop.ui.apps.text_app import run_text_browser

            return run_text_browser("hlotop diff · two runs", report.render())
        show(report, args.json)
    for line in over:
        print(printable(line), file=sys.stderr)
    if over:
        return 1
    return EXIT_PARTIAL if any(f.error for f in old + new) else 0


def capacity_of(text: str | None) -> tuple[int, str] | None:
    """``--capacity``: (bytes, what it is). Raises ValueError naming what it takes."""
    if text is None:
        return None
    from hlotop.analysis.devices import parse_capacity

    size, label = parse_capacity(text)
    if size <= 0:  # "0" or "0.0001": every program would be over by all it needs
        raise ValueError(
            f"--capacity {text.strip()!r}: a device's memory is more than 0 bytes "
            "(16GiB, 15.48G, 80GB, or a device such as v5e)"
        )
    return size, label


def fit_of(module, capacity: tuple[int, str] | None):
    if capacity is None:
        return None
    from hlotop.analysis.capacity import fit

    return fit(module, *capacity)


MAX_OOM_TEXT = 64 << 20  # bytes of a log read to look for an out-of-memory message


def oom_text(path: str):
    """(the OOM reports, its text's label) when ``path`` is a file (or stdin) holding
    out-of-memory error texts and no dump; a ``str`` saying why not when it holds
    a block of one but no report reads (the nearest block seen); None otherwise (a
    dump, a directory, or a file the loader then refuses). Reads stdin into ``STDIN``
    so a dump there still loads, under :func:`~hlotop.loading.input_bytes.read_stream`'s
    bounds (raises its :class:`~hlotop.loading.errors.LoadError`: binary, or text that
    is no dump)."""
    from hlotop.loading.input_bytes import DUMP_STARTS, LIVE_RANGE_START, read_stream

    if path == "-":
        data = read_stream(sys.stdin.buffer, "<stdin>")
        STDIN.append(data)
        label = "<stdin>"
    else:
        if not os.path.isfile(path):
            return None
        try:
            with open(path, "rb") as f:
                data = f.read(1 << 16)
                if data.startswith(DUMP_STARTS):
                    return None  # a dump file (the usual case): nothing more to read
                data += f.read(MAX_OOM_TEXT - len(data))
        except OSError:
            return None
        label = path
    if data.startswith(DUMP_STARTS) or b"\n" + LIVE_RANGE_START in data[: 1 << 20]:
        return None  # a dump
    from hlotop.parse.oom import find_ooms, looks_like_oom, refusal

    text = data.decode("utf-8", errors="replace")
    if not looks_like_oom(text):
        return None
    reports = find_ooms(text, label)
    if not reports:
        why = refusal(text, label)
        return f"{label}: not an out-of-memory text hlotop can read: {why}" if why else None
    return reports, label


STDIN: list[bytes] = []  # what oom_text read of stdin, for the loader


def load_read_stdin(load_bytes, data: bytes, path: str, *, lazy: bool = False, **_ignored):
    """``load`` for a dump already read from stdin (``hlotop -``)."""
    return load_bytes(data, lazy=lazy)


def oom_command(args, reports, label: str, *, interactive: bool) -> int:
    """Out-of-memory texts: each report's breakdown, linked to ``--dump``'s values if
    given (or a dump beside it); on a terminal, in the OOM browser
    (:mod:`hlotop.ui.apps.oom_app`). ``--capacity`` is the text's own."""
    from hlotop.parse.oom import primary
    from hlotop.report.oom_table import OomTexts
    from hlotop.report.reports import OomTextReport

    given = [
        option
        for option, value in (
            ("--export", args.export),
            ("--group-by", args.group_by),
            ("--step", args.step),
            ("--top", args.top),
            ("--icicle", args.icicle or None),
        )
        if value is not None
    ]
    if given:
        which = given[0]
        return error(
            f"{label}: an out-of-memory error text, not a dump: {which} takes a dump's "
            "live set (show the text with --summary or --json)"
        )
    links: list = []
    module_name = ""
    module = None
    dump = args.dump or dump_beside(label)
    if dump is not None:
        from hlotop.analysis.oom_link import OomLinker
        from hlotop.loading.loader import LoadError, load

        try:
            with reporting():
                module = load(dump, lazy=True)
        except LoadError as err:
            return error(str(err))
        linker = OomLinker(module)
        links = [[linker.find(e) for e in r.entries] for r in reports]
        module_name = module.name
    most_telling = primary(reports) or reports[0]
    report = OomTextReport(OomTexts(reports, most_telling, links, module_name))
    if interactive and label == "<stdin>" and not reattach_terminal():
        interactive = False  # no terminal to read keys from: print it
    if interactive:  # (never with --summary or --json)
        from hlotop.ui.apps.oom_app import run_oom_browser

        first = reports.index(most_telling)
        return run_oom_browser(label, reports, links, module, first)
    show(report, args.json)
    return 0


def dump_beside(label: str) -> str | None:
    """The one module in the OOM text's folder, if there is exactly one."""
    if label == "<stdin>":
        return None
    from hlotop.loading.directory import list_modules

    folder = os.path.dirname(os.path.abspath(label))
    try:
        entries = list_modules(folder)
    except OSError:
        return None
    entries = [e for e in entries if not e.report_only]  # a report alone has no values
    return str(entries[0].path) if len(entries) == 1 else None


def modules_of(path: str) -> list | None:
    """The modules of ``path`` when it is a directory holding other than exactly one
    (a whole --xla_dump_to run), or a folder of runs (each module of each subfolder:
    :func:`~hlotop.loading.directory.list_run_modules`); None otherwise (one module:
    opened as usual)."""
    if path == "-" or not os.path.isdir(path):
        return None
    from hlotop.loading.directory import list_run_modules

    try:
        entries = list_run_modules(path)
    except OSError:
        return None
    runs = bool(entries) and "/" in entries[0].name  # a folder of runs: listed as such
    return entries if len(entries) > 1 or runs else None


def directory_report(
    args, entries: list, capacity: tuple[int, str] | None = None, grouping: dict | None = None
) -> int:
    """``--summary DIR`` / ``--json DIR``: the modules ranked, read in parallel across
    the cores (forked workers, each reads its modules' first look); with
    ``capacity`` (``--capacity``), each module's room or excess; with ``grouping``
    (``--group-by``, ``--top``, ``--icicle``: :func:`grouping_options`), the live set
    grouped (:func:`directory_groups`)."""
    from hlotop.loading.directory import rank_modules
    from hlotop.report.modules_table import Modules
    from hlotop.report.reports import ModulesReport

    if args.export:
        return error(
            f"{args.path}: a directory of {len(entries)} modules; name one to export its live set"
        )
    with reporting():
        figures = rank_modules(entries, workers=module_workers(len(entries)))
        groups = directory_groups(args, figures, grouping)
        grouped = groups.get("json") if grouping is not None and grouping["keys"] else None
        modules = Modules(args.path, figures, capacity, grouped, tuple(groups.get("summary", ())))
        show(ModulesReport(modules), args.json)
    if any(f.error for f in figures):  # a module not read: named, with why, above
        return 1 if args.strict else EXIT_PARTIAL
    # As for one module: a report without its buffer assignment (whose load warns that
    # its siblings are missing) fails --strict.
    return 1 if args.strict and any(f.entry.report_only for f in figures) else 0


def directory_groups(args, figures: list, grouping: dict | None) -> dict:
    """The grouped live set of a directory's modules, as a user of each output reads
    it. ``--summary``: the module of the largest XLA peak on each platform (programs
    run one at a time, so that one decides whether the device's memory suffices; the
    ranking names it), grouped as for one module (a table, or ``--top``'s rows and
    ``--icicle``): ``{"summary": [renderables]}``. ``--json``: every module, for
    scripts to choose from (``{"json": {module path: groups dict or the reason there
    are none}}``: :func:`~hlotop.report.modules_report.grouping_json`, bounded to
    ``--top`` rows, default 10, the rest summed). ``{}`` without ``grouping``'s keys.
    Modules are read in parallel as the ranking is."""
    if grouping is None or grouping["keys"] is None:
        return {}
    from hlotop.loading.directory import ModuleEntry, collapse_identical
    from hlotop.loading.workers import OrderedMap

    if args.json:
        wanted = [f.entry for f, _ in collapse_identical(figures) if not f.error]
    else:
        largest: dict[str, ModuleEntry] = {}
        for f in figures:  # ranked: the first of each platform with a peak is its largest
            if f.peak_bytes is not None and not f.error and f.entry.platform not in largest:
                largest[f.entry.platform] = f.entry
        wanted = list(largest.values())
    limit = args.top if args.top is not None else DEFAULT_GROUPS
    if not args.json:  # a module or two, drawn here
        from rich.text import Text

        from hlotop.report.modules_report import short_module_name

        parts: list = []
        for entry in wanted:
            on = f" on {entry.platform}" if len(wanted) > 1 else ""
            name = printable(short_module_name(entry.name))
            parts += [Text(""), Text(f"The largest single program{on}, {name}:", style="bold")]
            made = _module_groups(entry, grouping, limit, as_json=False)
            parts += made if isinstance(made, list) else [Text(printable(made), style="yellow")]
        return {"summary": parts}
    from hlotop.process import report_workers

    workers = min(report_workers(), len(wanted))  # one module a task: each a whole load
    with OrderedMap(
        lambda i: _module_groups(wanted[i], grouping, limit, as_json=True),
        len(wanted),
        workers if workers >= 2 else 0,
    ) as read:
        return {"json": {str(e.path): g for e, g in zip(wanted, read, strict=True)}}


DEFAULT_GROUPS = 10  # groups of each module in --json DIR --group-by, without --top


def _module_groups(entry, grouping: dict, limit: int, *, as_json: bool):
    """One module's grouped live set: for --json a dict (made in a worker process:
    it is pickled) (:func:`~hlotop.report.modules_report.grouping_json`), for
    --summary a list of renderables; a str saying why there is none."""
    from hlotop.loading.loader import LoadError, load

    try:
        module = load(entry.path, lazy=True)
        groups = group(module, grouping)[0]
    except (LoadError, GroupingError) as err:
        return str(err)
    if as_json:
        from hlotop.report.modules_report import grouping_json

        return grouping_json(groups, limit)
    from hlotop.report.summary import grouped_parts

    return grouped_parts(groups, grouping["top"], grouping["icicle"])[1:]


def module_workers(count: int) -> int:
    """How many worker processes read ``count`` modules' first looks: one a core when
    there are enough modules (8 a worker) and forking is allowed (hlotop.process),
    else 0 (one at a time here)."""
    from hlotop.process import report_workers

    workers = min(report_workers(), count // 8)
    return workers if workers >= 2 else 0


class GroupingError(Exception):
    """A grouping the dump cannot give (no live ranges, a step outside the schedule)."""


def grouping_options(args) -> dict | None:
    """The grouping asked for on the command line, checked before the dump is read;
    None when there is none (and no --export). Raises ValueError for a bad key, rule
    or option."""
    viewed = args.top is not None or args.icicle  # the grouping drawn otherwise
    asked = args.group_by is not None or args.step is not None or args.scope_rule or viewed
    if not asked and not args.export and args.accounting is None:
        return None
    from hlotop.analysis.grouping import parse_keys
    from hlotop.analysis.scope import ScopeRule

    if asked and not (args.summary or args.json or args.export):
        raise ValueError(
            "--group-by, --step, --scope-rule, --top and --icicle go with --summary, "
            "--json or --export"
        )
    if viewed and not args.summary and not (args.json and args.top is not None):
        raise ValueError(
            f"{'--top' if args.top is not None else '--icicle'} draws the grouped live set "
            "in --summary's report"
            + (" (and --top bounds a directory's groups in --json)" if args.top else "")
        )
    if args.top is not None and args.top < 1:
        raise ValueError(f"--top {args.top}: give a number of rows, 1 or more")
    keys = parse_keys(args.group_by) if args.group_by is not None else None
    if keys is None and viewed:
        keys = ("scope",)  # pprof's top of the scopes: where in the model the bytes are
    rules = tuple(ScopeRule.parse(rule) for rule in args.scope_rule)
    if keys is None and not args.export:  # they were read, and nothing used them
        given = [
            option
            for option, value in (
                ("--step", args.step),
                ("--accounting", args.accounting),
                ("--scope-rule", args.scope_rule or None),
                ("--no-fold", args.no_fold or None),
            )
            if value is not None
        ]
        if given:
            they = "it chooses" if len(given) == 1 else "they choose"
            raise ValueError(
                f"{' and '.join(given)} without --group-by: {they} what is grouped "
                "(--group-by KEYS) or exported (--export), and nothing is"
            )
    return {
        "keys": keys,
        "top": args.top,
        "icicle": args.icicle,
        "step": args.step,
        "accounting": args.accounting or "logical",
        "fold": not args.no_fold,
        "rules": rules,
    }


def group(module, options: dict):
    """(grouping, labeller) of ``module``'s live set as ``options`` say (keys default to
    ``phase,scope``). Raises GroupingError when the dump cannot be grouped so."""
    from hlotop.analysis.grouping import group_live_set
    from hlotop.analysis.labels import Labeller

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
        raise GroupingError(f"{module.name}: {err}") from None
    return grouping, labeller


def export(module, args, options: dict) -> int:
    """``--export csv|tsv|folded``: the live set to stdout. With ``--strict`` and a
    diagnostic, exit 1 saying why on stderr (stdout is the data)."""
    from hlotop.report.reports import ExportReport

    grouping, labeller = group(module, options)
    show(ExportReport(grouping, labeller, options["keys"] or (), args.export))
    status = strict_status(module, args.strict)
    if status:
        print(printable(strict_reason(module)), file=sys.stderr)
    return status


def strict_reason(module) -> str:
    """The line ``--strict`` fails with: how many diagnostics, and the first."""
    found = module.diagnostics
    more = f" (and {len(found) - 1} more: --summary or --json lists them)" if len(found) > 1 else ""
    return f"hlotop: --strict: {len(found)} diagnostic{'' if len(found) == 1 else 's'}: {found[0]}{more}"
