"""The README's "Writing an app" example, run as written (docs with runnable examples)."""

from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from zhiwen.api.app import create_app
from zhiwen.appkit import AskRequest, BaseApp
from zhiwen.appkit.context import build_context
from zhiwen.appkit.registry import AppRegistry
from zhiwen.config import LLMSettings, Settings
from zhiwen.documents import Document
from zhiwen.kb import open_kb

README = Path(__file__).resolve().parents[2] / "README.md"


def _example_app() -> BaseApp:
    code = re.search(r"```python\n# mypkg/glossary.py\n(.*?)```", README.read_text("utf-8"), re.S)
    assert code, "README lost its app example"
    namespace: dict[str, object] = {}
    exec(compile(code.group(1), "README:glossary", "exec"), namespace)
    app = namespace["app"]
    assert isinstance(app, BaseApp)
    return app


def test_readme_app_answers_and_serves(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, llm=LLMSettings(base_url=None), _env_file=None)  # type: ignore[call-arg]
    kb = open_kb("glossary", settings=settings, create=True, embedder="hash", app="glossary")
    kb.index_documents(
        [Document(id="rag", title="RAG", text="# RAG\n\nRAG 即检索增强生成。")], progress=False
    )
    app = _example_app()

    answer = app.ask(AskRequest(question="什么是 RAG"), build_context(settings, llm=None))
    assert "检索增强生成" in answer.answer and answer.citations[0].kb == "glossary"
    assert answer.params["top_k"] == 3

    with TestClient(create_app(settings, apps=AppRegistry([app]))) as client:
        data = client.post("/api/v1/qa", json={"kb": "glossary", "question": "什么是 RAG"}).json()["data"]
    assert "检索增强生成" in data["answer"] and data["sources"][0]["id"].startswith("rag")
