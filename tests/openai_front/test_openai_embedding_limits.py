"""``POST /v1/embeddings`` does bounded work (#29): caps per input and per request answered with an
OpenAI-shaped 400 before any model runs, and a batch whose client hangs up stops."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from front_support import Server, build_demo, make_settings

from zhiwen.api.app import create_app
from zhiwen.api.openai import embeddings as embeddings_route
from zhiwen.config import EmbeddingSettings, Settings
from zhiwen.embed._common import BaseEmbedder

LIMITS: dict[str, Any] = {
    "provider": "hash",
    "max_input_chars": 100,
    "max_batch_inputs": 5,
    "max_batch_chars": 300,
}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = make_settings(tmp_path_factory.mktemp("limits") / "home")
    settings.embedding = EmbeddingSettings(**LIMITS)
    build_demo(settings)
    return settings


@pytest.fixture(scope="module")
def http(limited: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(limited), raise_server_exceptions=False) as client:
        yield client


def error_of(reply: Any) -> dict[str, Any]:
    assert reply.status_code == 400, reply.text
    error: dict[str, Any] = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "input"
    return error


def test_an_input_over_the_cap_is_refused_naming_it(http: TestClient) -> None:
    reply = http.post("/v1/embeddings", json={"model": "demo", "input": ["短", "长" * 101]})
    error = error_of(reply)
    assert error["code"] == "input_too_long"
    assert "第 1 条" in error["message"] and "101" in error["message"] and "100" in error["message"]


def test_too_many_inputs_are_refused(http: TestClient) -> None:
    error = error_of(http.post("/v1/embeddings", json={"model": "demo", "input": ["知识库"] * 6}))
    assert error["code"] == "too_many_inputs" and "最多 5 条" in error["message"]


def test_too_many_characters_in_all_are_refused(http: TestClient) -> None:
    error = error_of(http.post("/v1/embeddings", json={"model": "demo", "input": ["知" * 100] * 4}))
    assert error["code"] == "batch_too_large" and "400" in error["message"] and "300" in error["message"]


def test_within_the_caps_the_vectors_come_back(http: TestClient) -> None:
    reply = http.post("/v1/embeddings", json={"model": "demo", "input": ["知" * 100] * 3})
    assert reply.status_code == 200, reply.text
    assert [d["index"] for d in reply.json()["data"]] == [0, 1, 2]


class SlowModel(BaseEmbedder):
    """A model that takes a while per slice and counts them."""

    provider = "slow"
    name = "slow"
    dim = 4

    def __init__(self) -> None:
        self.slice_texts = 1
        self.calls = 0
        self.started = threading.Event()

    def _passages(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        self.started.set()
        time.sleep(0.05)
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_a_batch_stops_when_its_client_hangs_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = make_settings(tmp_path / "home", resilience={"request_timeout_s": 120})
    build_demo(settings)
    model = SlowModel()
    monkeypatch.setattr(embeddings_route, "resolve_embedder", lambda _model, _kbs: (model, None))
    body = json.dumps({"model": "demo", "input": ["段落"] * 1000}).encode()
    with Server(create_app(settings)) as base:
        host, port = base.removeprefix("http://").split(":")
        conn = socket.create_connection((host, int(port)))
        conn.sendall(
            b"POST /v1/embeddings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert model.started.wait(10)
        conn.close()  # the client leaves while the batch runs
        at_hang_up = model.calls
        time.sleep(1.5)
        settled = model.calls
        time.sleep(0.5)
        assert model.calls == settled  # stopped, not running on for nobody
        assert settled < at_hang_up + 20 < 1000
