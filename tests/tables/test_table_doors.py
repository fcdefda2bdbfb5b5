"""Every door shows a table answer's table: REST ``data.table``, the SSE ``done`` event, the OpenAI
front door's ``zhiwen.table``, and the CLI's rich table; the answer's type is "table"."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from zhiwen.answer.model import Answer
from zhiwen.api.app import create_app
from zhiwen.clikit.tables import answer_table_view
from zhiwen.config import Settings
from zhiwen.kb import open_kb
from zhiwen.tables.schema import TableData, answer_table, table_data

TOKEN = "table-doors-token"
QUESTION = "2021年四川省物理类金融学类最低分是多少？"


@pytest.fixture
def http(zhiwen_home: Path, site: Path) -> Iterator[TestClient]:
    kb = open_kb("scores", create=True, embedder="hash")
    kb.index_path(site, fmt="documents", progress=False, dense="skip")
    settings = Settings(home=zhiwen_home, api={"admin_token": TOKEN})
    app = create_app(settings, app_routers=False)
    with TestClient(app, raise_server_exceptions=False, headers={"Authorization": f"Bearer {TOKEN}"}) as c:
        yield c


def test_rest_sse_and_openai_carry_the_table(http: TestClient) -> None:
    resp = http.post("/api/v1/qa", json={"kb": "scores", "question": QUESTION})
    assert resp.status_code == 200, resp.text
    data = resp.json()["data"]
    assert data["route"] == "table" and data["table"]["kind"] == "cell"
    assert data["table"]["rows"] == [["金融学类", "630", "618", "620", "612"]]
    assert data["table"]["highlight"] == [[0, 4]] and data["table"]["row"] == 2

    with http.stream("POST", "/api/v1/qa", json={"kb": "scores", "question": QUESTION, "stream": True}) as r:
        body = "".join(r.iter_text())
    done = [
        json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and "table" in line
    ]
    assert done and done[-1]["table"]["kind"] == "cell" and done[-1]["answer_type"] == "table"

    resp = http.post(
        "/v1/chat/completions", json={"model": "scores", "messages": [{"role": "user", "content": QUESTION}]}
    )
    assert resp.status_code == 200, resp.text
    zhiwen = resp.json()["zhiwen"]
    assert zhiwen["route"] == "table" and zhiwen["table"]["columns"][0] == "专业名称"

    body = {"model": "scores", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    with http.stream("POST", "/v1/chat/completions", json=body) as r:
        frames = [x[5:].strip() for x in "".join(r.iter_text()).splitlines() if x.startswith("data:")]
    last = [json.loads(f) for f in frames if f != "[DONE]" and '"zhiwen"' in f][-1]
    assert last["zhiwen"]["table"]["highlight"] == [[0, 4]]


def test_other_answers_have_no_table(http: TestClient) -> None:
    data = http.post("/api/v1/qa", json={"kb": "scores", "question": "学校食堂几点开门"}).json()["data"]
    assert data["table"] is None


def test_the_schema_reads_the_payload_and_refuses_garbage() -> None:
    assert table_data({"columns": ["专业", "最低分"], "rows": [["法学", 612]], "kind": "sql"}) == TableData(
        kind="sql", columns=["专业", "最低分"], rows=[["法学", 612]]
    )
    assert table_data({"rows": "not rows"}) is None and table_data(None) is None
    assert answer_table({"table": "x"}) is None


def test_the_cli_draws_the_table_with_the_cell_marked() -> None:
    payload = {
        "kind": "cell", "title": "2021年四川省录取分数线", "columns": ["专业名称", "理工/物理类 最低"],
        "rows": [["金融学类", "612"]], "highlight": [[0, 1]], "total_rows": 1,
    }  # fmt: skip
    answer = Answer(answer="…是 **612**", route="table", data={"table": payload})
    assert answer.kind == "table"
    out = io.StringIO()
    console = Console(file=out, width=80, color_system=None)
    view = answer_table_view(answer, console)
    assert view is not None
    console.print(view)
    text = out.getvalue()
    assert "金融学类" in text and "612" in text and "2021年四川省录取分数线" in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert answer_table_view(Answer(answer="普通回答"), console) is None
