"""Structured logs carry the request id; the web UI is served without a build step."""

from __future__ import annotations

import io
import json
import logging

from fastapi.testclient import TestClient

from zhiwen.config import Settings
from zhiwen.logging import request_id_var, setup_logging


def test_json_logs_with_request_id(zhiwen_home: object) -> None:
    stream = io.StringIO()
    handler = setup_logging(Settings(log_json=True), stream=stream)
    try:
        token = request_id_var.set("rid-42")
        logging.getLogger("zhiwen.test").info("hello %s", "世界", extra={"kb": "demo"})
        request_id_var.reset(token)
        line = json.loads(stream.getvalue().strip().splitlines()[-1])
        assert line["msg"] == "hello 世界" and line["request_id"] == "rid-42" and line["kb"] == "demo"
        assert line["level"] == "INFO" and line["logger"] == "zhiwen.test"
    finally:
        logging.getLogger("zhiwen").removeHandler(handler)
        logging.getLogger("uvicorn").removeHandler(handler)
        logging.getLogger("zhiwen").propagate = True


def test_access_log_line_has_request_id(client: TestClient, caplog: object) -> None:
    import pytest

    assert isinstance(caplog, pytest.LogCaptureFixture)
    with caplog.at_level(logging.INFO, logger="zhiwen.api.access"):
        client.get("/healthz", headers={"X-Request-ID": "trace-me"})
    records = [r for r in caplog.records if r.name == "zhiwen.api.access"]
    assert records and getattr(records[-1], "route", None) == "/healthz"
    assert request_id_var.get() == "-"  # reset after the request


def test_ui_served(client: TestClient) -> None:
    resp = client.get("/")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/html")
    assert "知问" in resp.text
    for asset in ("/static/app.js", "/static/style.css"):
        assert client.get(asset).status_code == 200
    cfg = client.get("/api/v1/ui-config").json()["data"]
    assert cfg["endpoints"]["search"] is True and cfg["llm_configured"] is False


def test_ui_script_parses() -> None:
    import shutil
    import subprocess
    from pathlib import Path

    import pytest

    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed (only used to syntax-check the UI script)")
    script = Path(__file__).resolve().parents[2] / "src" / "zhiwen" / "webui" / "app.js"
    subprocess.run([node, "--check", str(script)], check=True, capture_output=True)
