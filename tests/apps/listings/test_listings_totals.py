"""Listings say how many match in all, and how many are shown (#30: 「为您找到 3 套房源」 when dozens
match): the same sentence over ``POST /ask``, the OpenAI front door and ``zhiwen listings ask``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from zhiwen.api.app import create_app
from zhiwen.apps.listings.service import reset_services
from zhiwen.cli.main import app as cli
from zhiwen.config import Settings, reset_settings_cache

QUESTION = "浦东两房"
TOTAL = re.compile(r"符合条件的房源共 (\d+) 套，按匹配度为您展示前 (\d+) 套")


def said_total(answer: str) -> tuple[int, int]:
    m = TOTAL.search(answer)
    assert m, answer
    return int(m.group(1)), int(m.group(2))


@pytest.fixture(scope="module")
def client(sh_kb: Any, sh_settings: Settings) -> Iterator[TestClient]:
    reset_services()
    with TestClient(create_app(sh_settings)) as c:
        yield c


def test_the_rest_answer_and_field_agree(client: TestClient) -> None:
    data = client.post("/ask", json={"question": QUESTION, "max_results": 3}).json()["data"]
    assert data["total_matches"] > 3 and len(data["retrieved_properties"]) == 3
    assert said_total(data["answer"]) == (data["total_matches"], 3)


def test_the_openai_front_door_says_it_too(client: TestClient) -> None:
    expected = client.post("/ask", json={"question": QUESTION, "max_results": 3}).json()["data"][
        "total_matches"
    ]
    resp = client.post(
        "/v1/chat/completions",
        json={"model": "listings", "messages": [{"role": "user", "content": QUESTION}]},
    )
    assert resp.status_code == 200, resp.text
    total, shown = said_total(resp.json()["choices"][0]["message"]["content"])
    assert total == expected and 1 <= shown < total


def test_the_cli_says_it_too(sh_kb: Any, sh_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZHIWEN_HOME", str(sh_settings.home))
    monkeypatch.delenv("ZHIWEN_LLM__BASE_URL", raising=False)
    reset_settings_cache()
    reset_services()
    r = CliRunner().invoke(cli, ["listings", "ask", "--json", "-n", "3", QUESTION])
    assert r.exit_code == 0, r.output
    printed = json.loads(r.stdout)
    assert said_total(printed["answer"]) == (printed["total_matches"], 3)
    reset_services()
