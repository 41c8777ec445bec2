"""hlotop's benchmark suite: big dumps, measured as a user meets them. Prints one table.

    .venv/bin/python benchmarks/run.py                  # 10, 100 and 500 MB
    .venv/bin/python benchmarks/run.py --sizes 10 100   # quicker
    .venv/bin/python benchmarks/run.py --real --sizes 10          # + real big models
    .venv/bin/python benchmarks/run.py --real --sizes --real-models gpt-256l-unrolled

For each size it scales a real JAX dump (``benchmarks/make_dumps.py``) in the combined
and the split layout. With ``--real`` it also measures the dumps of real big models
(flax GPT train steps, 64 and 256 layers, unrolled and scanned, in ``benchmarks/real/``):
those missing are made first by ``scripts/generate_big_models.py``, which compiles them
with JAX in virtualenvs of its own (minutes each; see that script). Scaled copies of a
small module are lighter than real big ones (peak RSS 3.0× the file on them, 5.9× on a
real 45 MB dump), so the targets are checked on the real dumps of 30 MB and more.
Each dump is measured, each in a fresh process, with hlotop's modules compiled to
bytecode first, as on a user's machine after the first run (``compiled()``):

* the yardstick: a bare regular-expression scan of the same files (``regex_scan.py``);
* ``hlotop --summary`` and ``hlotop --json`` wall time (output read and discarded);
  these three are run ``--repeat`` times (3) in turn, and the median of each is shown;
* peak RSS of those and of the browser (of the largest process: ``--json`` on a big dump
  formats its records in worker processes, see ``hlotop.report.parallel``);
* the browser, headless (``app_probe.py``): time to the first truthful screen (the
  allocation tree shows every allocation, the largest first, with the true total): the
  median of ``--repeat`` runs, each right after one on a tiny dump, whose median is
  the row's yardstick (a single run of either moves by ±30% here); the first painted
  screen of any kind (e.g. a big dump's preview of its head), time until every value
  record is read, and key-press latency (p50/p99 over cursor
  moves in the allocation tree and the timeline once the dump is loaded, and p99 in the
  tree while its records are still being read); then the same dump opened again,
  unchanged (what the records pass found comes from hlotop's cache, which is otherwise
  empty for every measurement).

Then it checks the targets of issue 9 and prints each as met or not: on the real dumps
of 30 MB and more (on the scaled ~100 MB ones when no real dump was measured), the first
truthful screen within 2× a tiny dump's, ``--summary`` within 2× and ``--json`` within 4×
the regex scan, peak RSS at most 4× the file, key p99 under 50 ms in the tree and the
timeline, also while loading; and linear growth over the scaled sizes. Nothing here is a
unit test: it measures and reports. The figures are noisy on a busy machine. Last, with
real dumps, the commands that read every record (``--summary --group-by``, ``hlotop
diff``) are timed on the big ones (:func:`other_commands`).

``--small-allocations N ...`` also measures peak RSS of ``--summary``, ``--json`` and the
browser on a dump of N small allocations of one value each (``make_dumps.py
--small-allocations``; a 1,000,000-allocation dump is ~550 MB), where the per-allocation
costs show, and on the same dump without its value records (``lean-N``, ~200 MB: the
ratios of issue 32's 1,000,000-allocation dump), and holds each to 4× the file
(:func:`small_rows`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
HLOTOP = [PY, "-m", "hlotop"]
TINY = ROOT / "sample_dumps" / "seeds" / "000_aa093b3e4f73e23a.txt"
GENERATE_REAL = ROOT / "scripts" / "generate_big_models.py"
REAL_MIN_MB = 30  # real dumps this big or bigger are held to the targets


def run(cmd: list[str], cache: str | None = None, keep: bool = False) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (bytes) and stdout (if ``keep``; else read and dropped) of
    a command in a fresh process, with hlotop's cache in ``cache`` (default: a new empty
    folder, as on a first open).

    This process must stay small: Linux starts a spawned process's peak RSS at the
    peak of the process that spawned it (``exec`` keeps the high-water mark), so
    holding one ``--json`` document here once made every later figure 100 MB larger."""
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "tui"),
        XDG_CACHE_HOME=cache or tempfile.mkdtemp(prefix="hlotop-bench-cache-"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see compiled()
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT
    )
    kept = []
    while chunk := proc.stdout.read(1 << 16):
        if keep:
            kept.append(chunk)
    out = b"".join(kept)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0,):
        raise SystemExit(f"failed ({status}): {' '.join(cmd)}")
    return wall, usage.ru_maxrss * 1024, out.decode(errors="replace")


def compiled() -> None:
    """Compile hlotop's modules to bytecode once, as Python does on a user's machine the
    first time it imports them (``pip install`` does it for a package installed
    whole): the measured runs then load them, as every later run of hlotop does. A
    machine that sets ``PYTHONDONTWRITEBYTECODE`` compiles them again in every run
    (0.05 s here); run() lets its children use the cache."""
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "tui")], check=True)


def first_screen(entry: Path) -> dict:
    """The app probe's first screens of ``entry`` (``--first-only``), with an empty
    cache."""
    out = run([PY, str(HERE / "app_probe.py"), str(entry), "--first-only"], keep=True)[2]
    return json.loads(out)


def _median(values: list[float | None]) -> float | None:
    """The median, a screen never seen (None) counting as the slowest."""
    middle = statistics.median(math.inf if v is None else v for v in values)
    return None if middle == math.inf else middle


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def module_files(entry: Path) -> list[Path]:
    """The module's buffer-assignment files: ``<prefix>-*.txt`` (not ``<prefix>.txt``,
    the module's HLO text, of which hlotop reads only the head; and not the files of
    ``combined-100mb`` for ``combined-10mb``)."""
    prefix = entry.name[: -len("-buffer-assignment.txt")]
    return sorted(p for p in entry.parent.glob(prefix + "-*") if p.suffix == ".txt")


def measure(entry: Path, moves: int, repeat: int) -> dict:
    files = module_files(entry)
    size = sum(p.stat().st_size for p in files)
    # The yardstick and the two reports, each run `repeat` times in turn (so that a
    # busy spell of the machine hits all three alike); the median of each is kept.
    scans, summaries, jsons = [], [], []
    for _ in range(repeat):
        scans.append(run([PY, str(HERE / "regex_scan.py"), *map(str, files)]))
        summaries.append(run(HLOTOP + ["--summary", str(entry)]))
        jsons.append(run(HLOTOP + ["--json", str(entry)]))
    # The first screens, `repeat` times, each right after a tiny dump's: one run moves
    # by ±30% on this machine, and the tiny dump's with it.
    firsts, tiny_firsts = [], []
    for _ in range(repeat):
        tiny_firsts.append(first_screen(TINY)["first_screen_s"])
        firsts.append(first_screen(entry)["first_screen_s"])
    scan = statistics.median(r[0] for r in scans)
    summary = statistics.median(r[0] for r in summaries)
    summary_rss = max(r[1] for r in summaries)
    js = statistics.median(r[0] for r in jsons)
    json_rss = max(r[1] for r in jsons)
    cache = tempfile.mkdtemp(prefix="hlotop-bench-cache-")
    _, app_rss, out = run(
        [PY, str(HERE / "app_probe.py"), str(entry), "--moves", str(moves)], cache, keep=True
    )
    app = json.loads(out)
    # Opened again, unchanged: what the records pass found comes from the cache.
    again = json.loads(
        run([PY, str(HERE / "app_probe.py"), str(entry), "--moves", "20"], cache, keep=True)[2]
    )
    return {
        "dump": entry.name,
        "real": False,
        "mb": size / 1e6,
        "scan_s": scan,
        "summary_s": summary,
        "json_s": js,
        "first_s": _median(firsts),
        "tiny_s": statistics.median(tiny_firsts),
        "first_by": app["first_screen_by"],
        "paint_s": app["preview_s"],
        "loaded_s": app["loaded_s"],
        "reopen_s": again["loaded_s"],
        "rss_mb": max(summary_rss, json_rss, app_rss) / 1e6,
        "keys_idle": app["keys_idle_ms"],
        "keys_tree": app["keys_tree_ms"],
        "keys_timeline": app["keys_timeline_ms"],
        "keys_loading": app["keys_loading_ms"],
    }


def _ratio(value: float | None, base: float, digits: int = 2) -> str:
    if value is None:
        return "never"
    return f"{value:.{digits}f} ({value / base:.1f}×)"


def table(rows: list[dict]) -> str:
    head = (
        "| dump | layout | MB | regex scan s | --summary s (×scan) | --json s (×scan) "
        "| first truthful screen s (×tiny) | first paint s | all loaded s "
        "| re-opened: all loaded s | peak RSS MB (×file) | tree key p50/p99 ms "
        "| timeline key p50/p99 ms | tree key p99 ms while loading |"
    )
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        loading = r["keys_loading"]
        lines.append(
            f"| {r['dump']} | {r['layout']} | {r['mb']:.0f} | {r['scan_s']:.2f} "
            f"| {_ratio(r['summary_s'], r['scan_s'])} | {_ratio(r['json_s'], r['scan_s'])} "
            f"| {_ratio(r['first_s'], r['tiny_s'])} | {r['paint_s']:.2f} "
            f"| {r['loaded_s']:.2f} | {r['reopen_s']:.2f} "
            f"| {_ratio(r['rss_mb'], r['mb'], 0)} "
            f"| {pct(r['keys_tree'], 0.5):.0f}/{pct(r['keys_tree'], 0.99):.0f} "
            f"| {pct(r['keys_timeline'], 0.5):.0f}/{pct(r['keys_timeline'], 0.99):.0f} "
            + (
                f"| {pct(loading, 0.99):.0f} ({len(loading)} keys) |"
                if loading
                else "| – (loaded before a key) |"
            )
        )
    return "\n".join(lines)


def held(rows: list[dict]) -> list[dict]:
    """The rows the targets apply to: the real dumps of REAL_MIN_MB and more, or, when
    none was measured, the scaled ones of about 100 MB."""
    real = [r for r in rows if r["real"] and r["mb"] >= REAL_MIN_MB]
    return real or [r for r in rows if not r["real"] and 80 <= r["mb"] <= 150]


def targets(rows: list[dict]) -> list[str]:
    out = []
    if not held(rows):
        out.append(f"(no real dump of {REAL_MIN_MB} MB or more, nor a scaled ~100 MB one)")
    for r in held(rows):
        first, tiny = r["first_s"], r["tiny_s"]
        loading = r["keys_loading"]
        checks = [
            (
                f"first truthful screen within 2× a tiny dump's ({_ratio(first, tiny)})",
                first is not None and first <= 2 * tiny,
            ),
            (
                f"--summary within 2× the regex scan ({r['summary_s'] / r['scan_s']:.1f}×)",
                r["summary_s"] <= 2 * r["scan_s"],
            ),
            (
                f"--json within 4× the regex scan ({r['json_s'] / r['scan_s']:.1f}×)",
                r["json_s"] <= 4 * r["scan_s"],
            ),
            (
                f"peak RSS at most 4× the file size ({r['rss_mb'] / r['mb']:.1f}×)",
                r["rss_mb"] <= 4 * r["mb"],
            ),
            (
                f"p99 key latency under 50 ms in the tree ({pct(r['keys_tree'], 0.99):.0f} ms)",
                pct(r["keys_tree"], 0.99) < 50,
            ),
            (
                "p99 key latency under 50 ms in the timeline "
                f"({pct(r['keys_timeline'], 0.99):.0f} ms)",
                pct(r["keys_timeline"], 0.99) < 50,
            ),
            (
                "p99 key latency under 50 ms while loading "
                + (
                    f"({pct(loading, 0.99):.0f} ms, {len(loading)} keys)"
                    if loading
                    else "(no key: loaded before the first)"
                ),
                pct(loading, 0.99) < 50 if loading else True,
            ),
        ]
        name = f"{r['dump']} ({r['layout']}, {r['mb']:.0f} MB)"
        for what, ok in checks:
            out.append(f"{'met    ' if ok else 'NOT MET'}  {name}: {what}")
    by_layout: dict[str, list[dict]] = {}
    for r in rows:
        if not r["real"]:  # linear growth: over the scaled sizes
            by_layout.setdefault(r["layout"], []).append(r)
    for layout, rs in by_layout.items():
        rs = sorted(rs, key=lambda r: r["mb"])
        for a, b in zip(rs, rs[1:], strict=False):
            growth = b["mb"] / a["mb"]
            for key in ("summary_s", "json_s", "loaded_s"):
                ratio = b[key] / a[key]
                ok = ratio <= growth * 1.1
                out.append(
                    f"{'met    ' if ok else 'NOT MET'}  {layout} {key} grows {ratio:.1f}× for "
                    f"{growth:.1f}× the input (linear: at most {growth * 1.1:.1f}×)"
                )
    return out


def real_dumps(folder: Path, names: list[str] | None) -> list[tuple[dict, Path]]:
    """(manifest, entry file) of the real dumps in ``folder``, made first if missing
    (all of ``generate_big_models.py``'s models, or ``names``)."""
    cmd = [PY, str(GENERATE_REAL), "--out", str(folder)]
    if names:
        cmd += ["--models", *names]
    subprocess.run(cmd, check=True)  # quick for the models already made
    out = []
    for path in sorted(folder.glob("*/manifest.json")):
        manifest = json.loads(path.read_text())
        if names and manifest["name"] not in names:
            continue
        out.append((manifest, path.parent / manifest["entry"]))
    return sorted(out, key=lambda m: (m[0]["buffer_assignment_bytes"], m[0]["name"]))


GROUP_KEYS = "phase,scope,source"


def other_commands(real: list[tuple[dict, Path]], repeat: int) -> list[str]:
    """The commands that read every record of a big dump, timed on the real dumps of
    :data:`REAL_MIN_MB` and more (the median of ``repeat`` runs): ``--summary --group-by``
    on each, and ``hlotop diff --summary`` of each split dump against the next larger
    one (a CI gate comparing two compiles). No target: figures to watch."""
    big = [(m, e) for m, e in real if m["buffer_assignment_bytes"] / 1e6 >= REAL_MIN_MB]
    if not big:
        return []
    lines = ["| command | dump(s) | s |", "|---|---|---|"]

    def timed(cmd: list[str]) -> float:
        return statistics.median(run(cmd)[0] for _ in range(repeat))

    for manifest, entry in big:
        seconds = timed(HLOTOP + ["--summary", "--group-by", GROUP_KEYS, str(entry)])
        lines.append(f"| --summary --group-by {GROUP_KEYS} | {manifest['name']} | {seconds:.2f} |")
    split = [(m, e) for m, e in big if m["layout"] == "split"]
    for (old, old_entry), (new, new_entry) in pairwise(split):
        seconds = timed(HLOTOP + ["diff", "--summary", str(old_entry), str(new_entry)])
        lines.append(f"| diff --summary | {old['name']} → {new['name']} | {seconds:.2f} |")
    return lines


def small_rows(counts: list[int], out: Path, moves: int) -> list[str]:
    """Peak RSS of ``--summary``, ``--json`` and the browser (``app_probe.py``, which
    reads every record) on a dump of N small allocations, for each N in ``counts``
    (made first by ``make_dumps.py --small-allocations``): a table, and each figure
    against the 4× target."""
    for lean in ([], ["--without-records"]):
        subprocess.run(
            [PY, str(HERE / "make_dumps.py"), "--out", str(out), *lean, "--small-allocations"]
            + [str(n) for n in counts],
            check=True,
        )
    lines = [
        "| allocations | MB | --summary peak RSS MB (×file) | --json peak RSS MB (×file) "
        "| browser peak RSS MB (×file) |",
        "|---|---|---|---|---|",
    ]
    checks = []
    for n, form in ((n, form) for n in counts for form in ("small", "lean")):
        entry = out / f"{form}-{n}-buffer-assignment.txt"
        mb = entry.stat().st_size / 1e6
        rss = {
            "--summary": run(HLOTOP + ["--summary", str(entry)])[1] / 1e6,
            "--json": run(HLOTOP + ["--json", str(entry)])[1] / 1e6,
            "browser": run([PY, str(HERE / "app_probe.py"), str(entry), "--moves", str(moves)])[1]
            / 1e6,
        }
        lines.append(
            f"| {n:,}{'' if form == 'small' else ', no records'} | {mb:.0f} | "
            + " | ".join(_ratio(v, mb, 0) for v in rss.values())
            + " |"
        )
        for what, value in rss.items():
            ok = value <= 4 * mb
            checks.append(
                f"{'met    ' if ok else 'NOT MET'}  {n:,} small allocations"
                f"{'' if form == 'small' else ' (no records)'}: {what} peak RSS "
                f"at most 4× the file ({value / mb:.1f}×)"
            )
        print(f"measured {entry.name}", file=sys.stderr)
    return lines + [""] + checks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="*",
        default=[10, 100, 500],
        help="MB of the scaled dumps (none: only the real ones)",
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="also the real big models (made by scripts/generate_big_models.py if missing)",
    )
    parser.add_argument(
        "--real-models", nargs="+", metavar="NAME", help="only these real models (default: all)"
    )
    parser.add_argument("--real-dir", type=Path, default=HERE / "real")
    parser.add_argument("--out", type=Path, default=Path("/tmp/hlotop-bench"))
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument(
        "--small-allocations",
        type=int,
        nargs="*",
        default=[],
        metavar="N",
        help="also peak RSS on a dump of N small allocations (e.g. 1000000), per N",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of the scan, --summary and --json (the median is shown)",
    )
    args = parser.parse_args(argv)
    if args.sizes:
        subprocess.run(
            [
                PY,
                str(HERE / "make_dumps.py"),
                "--out",
                str(args.out),
                "--size-mb",
                *map(str, args.sizes),
            ],
            check=True,
        )
    real = real_dumps(args.real_dir, args.real_models) if args.real or args.real_models else []
    compiled()
    rows = []
    for mb in args.sizes:
        for layout, entry in (
            ("combined", args.out / f"combined-{mb}mb-buffer-assignment.txt"),
            (
                "split",
                args.out / f"module_9{mb}mb.scaled.cpu_after_optimizations-buffer-assignment.txt",
            ),
        ):
            row = measure(entry, args.moves, args.repeat)
            row["layout"] = layout
            rows.append(row)
            print(f"measured {entry.name}", file=sys.stderr)
    for manifest, entry in real:
        row = measure(entry, args.moves, args.repeat)
        row.update(real=True, dump=manifest["name"], layout=manifest["layout"])
        rows.append(row)
        print(f"measured {manifest['name']} ({entry.name})", file=sys.stderr)
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}"
    )
    if rows:
        tinies = [r["tiny_s"] for r in rows]
        print(
            f"Tiny dump ({TINY.name}): first screen {statistics.median(tinies):.2f} s "
            f"(median of the {len(tinies)} dumps' medians, {min(tinies):.2f}-{max(tinies):.2f} s)"
        )
        for manifest, _ in real:
            print(
                f"Real dump {manifest['name']}: flax {manifest['flax']} GPT train step "
                f"({manifest['settings']['optimizer']}, dropout {manifest['settings']['dropout']}), "
                f"{manifest['layers']} layers {manifest['layers_are']}, jax {manifest['jax']}, "
                f"{manifest['layout']} layout, {manifest['buffer_assignment_bytes'] / 1e6:.1f} MB"
            )
        firsts = {r["first_by"] for r in rows}
        print(f"First truthful screen from: {'; '.join(sorted(firsts))}\n")
        others = other_commands(real, args.repeat)
        print(table(rows))
        print()
        print("\n".join(targets(rows)))
        if others:
            print()
            print("\n".join(others))
    if args.small_allocations:
        print()
        print("\n".join(small_rows(args.small_allocations, args.out, args.moves)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
