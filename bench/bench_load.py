"""Load on a real ``zhiwen serve`` (loopback): rps and p50/p99 at 50 and 200 clients, healthy and
with one hung dependency (an LLM that never answers, a reranker that never answers).

Each client loops for ``--seconds``: ``POST /knowledge-base/search`` then ``POST /api/v1/qa``
(generic QA over the bundled manual, KB ``demo``, ``hash`` embedder). The LLM is a local fake
OpenAI-compatible server (``tests/support/fake_openai.py``), the reranker a local TEI-style fake
(``tests/support/fake_rerank.py``); rerank is on (remote backend) in every scenario. The server
runs with ``llm.timeout_s`` 5 (the request deadline) and ``rerank.timeout_s`` 2.

Per scenario, concurrency and route the table gives requests, rps, p50 / p99 latency, 503s (full
queue, ``Retry-After``), other errors (5xx, client timeouts after 60 s) and the share of answers
that said they degraded (``X-Zhiwen-Degraded``). ``/healthz`` is probed once a second during each
run: its worst latency is the last column.

``--src DIR`` serves another source tree (e.g. ``git archive HEAD | tar -x -C /tmp/before``)
with the same venv, for a before/after comparison.

Example::

    python bench/bench_load.py                         # 3 scenarios x 50/200 clients, ~3 min
    python bench/bench_load.py --clients 50 --seconds 10 --scenarios healthy hung_llm
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from support.fake_openai import FakeOpenAI, Reply  # noqa: E402
from support.fake_rerank import FakeReranker  # noqa: E402

QUESTIONS = ["怎么安装知问？", "如何建立知识库？", "混合检索是什么？", "怎么配置大模型？", "重排序有什么用？"]
HANG_S = 600.0
ZHIWEN = [sys.executable, "-m", "zhiwen.cli"]
COLUMNS = (
    "scenario | clients | route | requests | rps | p50 ms | p99 ms | 503 | errors | degraded | healthz max ms"
)


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    busy: int = 0
    errors: int = 0
    degraded: int = 0
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)

    def row(self, seconds: float) -> tuple[int, float, float, float, int, int, float]:
        lat = sorted(self.latencies)
        n = len(lat)
        p50 = statistics.median(lat) if lat else 0.0
        p99 = lat[min(n - 1, int(0.99 * n))] if lat else 0.0
        ok = n - self.busy - self.errors
        return n, n / seconds, p50 * 1000, p99 * 1000, self.busy, self.errors, self.degraded / max(ok, 1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_home(home: Path) -> None:
    env = {**os.environ, "ZHIWEN_HOME": str(home)}
    subprocess.run(
        [*ZHIWEN, "index", str(REPO / "src/zhiwen/sample_kb"), "--kb", "demo", "-e", "hash", "-q"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def start_server(
    home: Path, llm_url: str, rerank_url: str, src: Path | None, log: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "ZHIWEN_HOME": str(home),
        "ZHIWEN_LLM__BASE_URL": llm_url,
        "ZHIWEN_LLM__MODEL": "fake",
        "ZHIWEN_LLM__TIMEOUT_S": "5",
        "ZHIWEN_RERANK__ENABLED": "true",
        "ZHIWEN_RERANK__BACKEND": "remote",
        "ZHIWEN_RERANK__ENDPOINT": rerank_url,
        "ZHIWEN_RERANK__TIMEOUT_S": "2",
        "ZHIWEN_RERANK__SCORE_THRESHOLD": "-1",
        "ZHIWEN_LOG_LEVEL": "ERROR",
    }
    if src is not None:
        env["PYTHONPATH"] = str(src)
    proc = subprocess.Popen(
        [*ZHIWEN, "serve", "--port", str(port)],
        env=env,
        cwd=tempfile.gettempdir(),
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab") if log is not None else subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError("zhiwen serve did not start")


async def client_loop(
    http: httpx.AsyncClient, base: str, until: float, tallies: dict[str, Tally], seed: int
) -> None:
    i = seed
    while time.perf_counter() < until:
        for route, body in (
            ("search", {"kb": "demo", "query": QUESTIONS[i % len(QUESTIONS)]}),
            ("qa", {"kb": "demo", "question": QUESTIONS[i % len(QUESTIONS)]}),
        ):
            path = "/knowledge-base/search" if route == "search" else "/api/v1/qa"
            tally = tallies[route]
            t0 = time.perf_counter()
            try:
                response = await http.post(base + path, json=body)
                status = response.status_code
                degraded = response.headers.get("x-zhiwen-degraded", "")
            except httpx.HTTPError:
                status, degraded = 0, ""
            tally.latencies.append(time.perf_counter() - t0)
            if status == 503:
                tally.busy += 1
            elif status != 200:
                tally.errors += 1
            elif degraded:
                tally.degraded += 1
                tally.reasons.update(part.strip() for part in degraded.split(","))
            i += 1


async def probe_health(base: str, until: float) -> float:
    worst = 0.0
    async with httpx.AsyncClient(timeout=60) as http:
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            with contextlib.suppress(httpx.HTTPError):
                await http.get(base + "/healthz")
            worst = max(worst, time.perf_counter() - t0)
            await asyncio.sleep(1.0)
    return worst


async def run_load(base: str, clients: int, seconds: float) -> tuple[dict[str, Tally], float, float]:
    tallies = {"search": Tally(), "qa": Tally()}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        started = time.perf_counter()
        until = started + seconds
        health = asyncio.create_task(probe_health(base, until))
        await asyncio.gather(*(client_loop(http, base, until, tallies, i) for i in range(clients)))
        elapsed = time.perf_counter() - started  # includes the requests still in flight at the end
        return tallies, elapsed, await health


def scenario_fakes(name: str) -> tuple[FakeOpenAI, FakeReranker]:
    llm = FakeOpenAI(
        Reply.fault("hang", delay_s=HANG_S) if name == "hung_llm" else Reply("好的，知问可以这样安装。[1]")
    )
    rerank = FakeReranker(delay_s=HANG_S if name == "hung_rerank" else 0.0)
    return llm, rerank


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--scenarios", nargs="+", default=["healthy", "hung_llm", "hung_rerank"])
    parser.add_argument("--src", type=Path, default=None, help="serve this source tree (its src/ dir)")
    parser.add_argument("--server-log", type=Path, default=None, help="append the server's stderr here")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    rows: list[str] = []
    reasons: list[str] = []
    with tempfile.TemporaryDirectory(prefix="zhiwen-load-") as tmp:
        home = Path(tmp)
        build_home(home)
        for name in args.scenarios:
            llm, rerank = scenario_fakes(name)
            with llm, rerank:
                proc, base = start_server(home, llm.base_url, rerank.url, args.src, args.server_log)
                try:
                    for clients in args.clients:
                        tallies, seconds, health_s = asyncio.run(run_load(base, clients, args.seconds))
                        for route, tally in tallies.items():
                            n, rps, p50, p99, busy, errors, degraded = tally.row(seconds)
                            rows.append(
                                f"| {name} | {clients} | {route} | {n} | {rps:.1f} | {p50:.0f} | {p99:.0f} "
                                f"| {busy} | {errors} | {degraded:.0%} | {health_s * 1000:.0f} |"
                            )
                            top = ", ".join(f"{k} {v}" for k, v in tally.reasons.most_common(3))
                            reasons.append(f"{name} / {clients} / {route}: {top or '—'}")
                        print(rows[-2] + "\n" + rows[-1], file=sys.stderr, flush=True)
                finally:
                    proc.terminate()
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
    load_after = os.getloadavg()[0]
    print(f"| {COLUMNS} |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nwhat degraded (X-Zhiwen-Degraded, most frequent):\n" + "\n".join(f"- {r}" for r in reasons))
    note = " — measured under CPU contention" if max(load_before, load_after) > 1.5 else ""
    print(f"\nload average {load_before:.2f} before, {load_after:.2f} after (2 cores){note}")


if __name__ == "__main__":
    main()
