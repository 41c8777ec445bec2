"""hlotop's benchmark suite: big dumps, measured as a user meets them. Prints one table.

    .venv/bin/python benchmarks/run.py                  # 10, 100 and 500 MB
    .venv/bin/python benchmarks/run.py --sizes 10 100   # quicker

For each size it scales a real JAX dump (``benchmarks/make_dumps.py``) in the combined
and the split layout, then measures, each in a fresh process:

* the yardstick: a bare regular-expression scan of the same files (``regex_scan.py``);
* ``hlotop --summary`` and ``hlotop --json`` wall time (output read and discarded);
  these three are run ``--repeat`` times (3) in turn, and the median of each is shown;
* peak RSS of those and of the browser (of the largest process: ``--json`` and the
  records index of a big dump use a second, forked process, see ``hlotop.report.forked``);
* the browser, headless (``app_probe.py``): time to the first painted main screen
  (a big dump's preview), time until every value record is read, and key-press latency
  (p50/p99 over cursor moves in the allocation tree and the timeline) both while the
  dump is still loading and after; then the same dump opened again, unchanged (what
  the records pass found comes from hlotop's cache, which is otherwise empty for every
  measurement).

Then it checks the targets of issue 3 and prints each as met or not. Nothing here is a
unit test: it measures and reports.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
HLOTOP = [PY, "-m", "hlotop"]
TINY = ROOT / "sample_dumps" / "seeds" / "000_aa093b3e4f73e23a.txt"


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


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def module_files(entry: Path) -> list[Path]:
    prefix = entry.name[: -len("-buffer-assignment.txt")]
    return sorted(p for p in entry.parent.glob(prefix + "*") if p.suffix == ".txt")


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
        "mb": size / 1e6,
        "scan_s": scan,
        "summary_s": summary,
        "json_s": js,
        "first_s": app["first_screen_s"],
        "loaded_s": app["loaded_s"],
        "reopen_s": again["loaded_s"],
        "rss_mb": max(summary_rss, json_rss, app_rss) / 1e6,
        "keys_idle": app["keys_idle_ms"],
        "keys_loading": app["keys_loading_ms"],
    }


def table(rows: list[dict], tiny_first: float) -> str:
    head = (
        "| dump | MB | regex scan s | --summary s (×scan) | --json s (×scan) | first screen s "
        "(×tiny) | all loaded s | re-opened: all loaded s | peak RSS MB (×file) "
        "| key p50/p99 ms | key p99 ms while loading |"
    )
    lines = [head, "|" + "---|" * 11]
    for r in rows:
        lines.append(
            f"| {r['dump']} | {r['mb']:.0f} | {r['scan_s']:.2f} "
            f"| {r['summary_s']:.2f} ({r['summary_s'] / r['scan_s']:.1f}×) "
            f"| {r['json_s']:.2f} ({r['json_s'] / r['scan_s']:.1f}×) "
            f"| {r['first_s']:.2f} ({r['first_s'] / tiny_first:.1f}×) | {r['loaded_s']:.2f} "
            f"| {r['reopen_s']:.2f} "
            f"| {r['rss_mb']:.0f} ({r['rss_mb'] / r['mb']:.1f}×) "
            f"| {pct(r['keys_idle'], 0.5):.0f}/{pct(r['keys_idle'], 0.99):.0f} "
            f"| {pct(r['keys_loading'], 0.99):.0f} ({len(r['keys_loading'])} keys) |"
        )
    return "\n".join(lines)


def targets(rows: list[dict], tiny_first: float) -> list[str]:
    out = []
    by_size: dict[str, list[dict]] = {}
    for r in rows:
        by_size.setdefault(r["layout"], []).append(r)
    for r in rows:
        if 80 <= r["mb"] <= 150:
            checks = [
                ("first screen within 2× a tiny dump's", r["first_s"] <= 2 * tiny_first),
                ("--summary within 2× the regex scan", r["summary_s"] <= 2 * r["scan_s"]),
                ("--json within 4× the regex scan", r["json_s"] <= 4 * r["scan_s"]),
                ("peak RSS at most 4× the file size", r["rss_mb"] <= 4 * r["mb"]),
                ("p99 key latency under 50 ms", pct(r["keys_idle"], 0.99) < 50),
                (
                    "p99 key latency under 50 ms while loading",
                    pct(r["keys_loading"], 0.99) < 50 if r["keys_loading"] else True,
                ),
            ]
            for name, ok in checks:
                out.append(f"{'met    ' if ok else 'NOT MET'}  {r['dump']}: {name}")
    for layout, rs in by_size.items():
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--out", type=Path, default=Path("/tmp/hlotop-bench"))
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of the scan, --summary and --json (the median is shown)",
    )
    args = parser.parse_args(argv)
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
    tiny = json.loads(
        run([PY, str(HERE / "app_probe.py"), str(TINY), "--moves", "20"], keep=True)[2]
    )
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
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}"
    )
    print(f"Tiny dump ({TINY.name}): first screen {tiny['first_screen_s']:.2f} s\n")
    print(table(rows, tiny["first_screen_s"]))
    print()
    print("\n".join(targets(rows, tiny["first_screen_s"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
