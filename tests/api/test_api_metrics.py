"""``/metrics`` exposes the counters of issue 4 and they move when the behaviour happens."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

SEARCH = "/knowledge-base/search"


def metric(client: TestClient, name: str, **labels: str) -> float:
    """Sum of samples of ``name`` whose labels include ``labels`` (0 when absent)."""
    text = client.get("/metrics").text
    total = 0.0
    for line in text.splitlines():
        m = re.match(rf"^{re.escape(name)}(\{{(.*)\}})? (\S+)$", line)
        if not m:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(3))
    return total


def test_http_metrics_by_route_template(client: TestClient) -> None:
    before = metric(client, "zhiwen_http_requests_total", route="/api/v1/kbs/{kb}", status="404")
    client.get("/api/v1/kbs/nope-1")
    client.get("/api/v1/kbs/nope-2")
    assert metric(client, "zhiwen_http_requests_total", route="/api/v1/kbs/{kb}", status="404") == before + 2
    assert metric(client, "zhiwen_http_request_seconds_count", route="/api/v1/kbs/{kb}") >= 2
    assert "nope-1" not in client.get("/metrics").text  # templates, never raw paths


def test_search_metrics_move(make_client: Any, settings: Any, reranker: Any, admin: dict[str, str]) -> None:
    client = make_client()
    names = {
        "passed": ("zhiwen_search_passed_threshold_count", {}),
        "empty": ("zhiwen_search_empty_results_total", {"route": "search"}),
        "fallback": ("zhiwen_fallbacks_total", {"kind": "rerank_threshold"}),
        "err_fallback": ("zhiwen_fallbacks_total", {"kind": "rerank_error"}),
        "failures": ("zhiwen_rerank_failures_total", {}),
        "rerank_latency": ("zhiwen_rerank_seconds_count", {}),
        "status413": ("zhiwen_http_requests_total", {"status": "413"}),
    }

    def snapshot() -> dict[str, float]:
        return {k: metric(client, n, **lbl) for k, (n, lbl) in names.items()}

    s0 = snapshot()
    client.post(SEARCH, json={"kb": "demo", "query": "安装"})
    client.put("/admin/settings", json={"rerank": {"enabled": True}}, headers=admin)
    client.post(SEARCH, json={"kb": "demo", "query": "安装"})  # reranked
    client.put("/admin/settings", json={"rerank": {"score_threshold": 5.0}}, headers=admin)
    client.post(SEARCH, json={"kb": "demo", "query": "安装"})  # threshold fallback
    client.put("/admin/settings", json={"rerank": {"fallback": 0}}, headers=admin)
    client.post(SEARCH, json={"kb": "demo", "query": "安装"})  # empty result
    reranker.error = RuntimeError("boom")
    client.post(SEARCH, json={"kb": "demo", "query": "安装"})  # reranker failure
    client.post(SEARCH, json={"kb": "demo", "query": "x" * 70_000})  # 413
    s1 = snapshot()
    assert s1["passed"] - s0["passed"] == 5
    assert s1["empty"] - s0["empty"] == 1
    assert s1["fallback"] - s0["fallback"] == 1
    assert s1["err_fallback"] - s0["err_fallback"] == 1
    assert s1["failures"] - s0["failures"] == 1
    assert s1["rerank_latency"] - s0["rerank_latency"] == 3
    assert s1["status413"] - s0["status413"] == 1


def test_metrics_content_type(client: TestClient) -> None:
    resp = client.get("/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    for name in ("zhiwen_http_requests_total", "zhiwen_fallbacks_total", "zhiwen_rerank_seconds"):
        assert name in resp.text or name.replace("_total", "") in resp.text
