"""`zhiwen sync`: a folder, page URLs and a sitemap (loopback HTTP servers) re-read only what
changed; deletions propagate; owners' edits stay; a source that is down keeps its documents."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from zhiwen.cli.main import app
from zhiwen.documents import Document
from zhiwen.errors import KnowledgeBaseBusy
from zhiwen.kb import KnowledgeBase
from zhiwen.kb.registry import close_all, open_kb
from zhiwen.sync.run import sync_kb, sync_lock
from zhiwen.sync.sources import configure, source_kind
from zhiwen.sync.state import SyncState

ACTOR = "fp-owner"
TOPICS = {
    "退货": "收到商品七天内可以无理由退货，商品需保持完好。",
    "发票": "下单时选择开具电子发票，发票在发货后三天内发到邮箱。",
    "保修": "整机保修一年，主要部件保修三年。",
    "运费": "订单满九十九元包邮，不满收取运费八元。",
    "安装": "师傅会在送货后两天内上门安装。",
}


def _write(folder: Path, name: str, body: str) -> None:
    (folder / f"{name}.md").write_text(f"# {name}\n\n{body}\n", "utf-8")


@pytest.fixture
def kb(zhiwen_home: Path) -> Iterator[KnowledgeBase]:
    yield open_kb("同步", create=True, embedder="hash")
    close_all()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for name, body in TOPICS.items():
        _write(root, name, body)
    return root


class Site:
    """Pages served from a dict on a loopback port; ``down`` answers 503."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, str]] = {}
        self.down = False
        self.requests: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requests.append(self.path)
                found = None if site.down else site.pages.get(self.path)
                if found is None:
                    self.send_response(503 if site.down else 404)
                    self.end_headers()
                    return
                body, ctype = found
                data = body.encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def page(self, path: str, title: str, body: str) -> None:
        html = f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        html += f"<p>{body}</p><p>{body}</p></article></body></html>"
        self.pages[path] = (html, "text/html; charset=utf-8")

    def sitemap(self, path: str, pages: list[str]) -> None:
        locs = "".join(f"<url><loc>{self.url}{p}</loc></url>" for p in pages)
        xml = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
        self.pages[path] = (xml, "application/xml")


@pytest.fixture
def site() -> Iterator[Site]:
    running = Site()
    yield running
    running.server.shutdown()


def _text(kb: KnowledgeBase, doc_id: str) -> str:
    return " ".join(v.text for v in kb.curation.list_chunks(doc_id))


def test_source_kinds() -> None:
    assert source_kind("https://a.example/sitemap.xml") == "sitemap"
    assert source_kind("https://a.example/sitemap_index") == "sitemap"
    assert source_kind("http://a.example/page.html") == "url"
    assert source_kind("/srv/docs") == "folder"


def test_a_folder_syncs_only_what_changed_and_keeps_edits(kb: KnowledgeBase, folder: Path) -> None:
    configure(kb, add=[folder])
    first = sync_kb(kb)
    assert (first.added, first.parsed, first.errors) == (5, 5, [])
    kept = kb.curation.list_chunks("保修")[0].id
    kb.curation.update(kept, text="# 保修\n\n整机保修两年（店主修改）。", actor=ACTOR)
    edited = kb.curation.list_chunks("发票")[0].id
    kb.curation.update(edited, keywords=["开票"], actor=ACTOR)

    _write(folder, "运费", "订单满五十元包邮。")  # changed
    (folder / "安装.md").unlink()  # removed
    _write(folder, "换货", "十五天内可以换货。")  # added
    (folder / "发票.md").write_text(
        (folder / "发票.md").read_text("utf-8") + "\n发票抬头可以修改。\n", "utf-8"
    )
    second = sync_kb(kb)
    assert (second.added, second.changed, second.removed, second.unchanged) == (1, 2, 1, 2)
    assert second.parsed == 3 and second.errors == []
    assert "安装" not in kb.store.doc_ids() and "换货" in kb.store.doc_ids()
    assert "五十元" in _text(kb, "运费")
    assert "店主修改" in _text(kb, "保修")  # an unchanged document's edit
    assert any("开票" in v.keywords for v in kb.curation.list_chunks("发票"))  # a changed one's
    third = sync_kb(kb)
    assert (third.parsed, third.unchanged, third.embedded) == (0, 5, 0)
    assert SyncState.load(kb.path).last == third


def test_dry_run_counts_and_writes_nothing(kb: KnowledgeBase, folder: Path) -> None:
    configure(kb, add=[folder])
    sync_kb(kb)
    revision = kb.revision
    (folder / "退货.md").unlink()
    _write(folder, "换货", "十五天内可以换货。")
    dry = sync_kb(kb, dry_run=True)
    assert (dry.added, dry.removed, dry.parsed, dry.dry_run) == (1, 1, 0, True)
    assert kb.revision == revision and "退货" in kb.store.doc_ids()


def test_index_remembers_the_folder_and_the_first_sync_reads_nothing(zhiwen_home: Path, folder: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["index", str(folder), "--kb", "手册", "--embedder", "hash", "--json"])
    assert done.exit_code == 0, done.output
    meta = {"source": "上传.md", "file_sha256": "0" * 64}
    uploaded = Document("上传", "# 上传\n\n网页上传的说明。", "上传", meta)
    open_kb("手册").index_documents([uploaded], progress=False)  # came another way: must stay
    synced = runner.invoke(app, ["sync", "手册", "--json"])
    assert synced.exit_code == 0, synced.output
    result = json.loads(synced.output)
    assert result["sources"] == [str(folder.resolve())]
    assert (result["unchanged"], result["parsed"], result["added"], result["removed"]) == (5, 0, 0, 0)
    assert "上传" in open_kb("手册").store.doc_ids()
    close_all()


def test_pages_and_a_sitemap(kb: KnowledgeBase, site: Site) -> None:
    for i, (name, body) in enumerate(TOPICS.items()):
        site.page(f"/p{i}.html", name, body)
    site.sitemap("/sitemap.xml", ["/p0.html", "/p1.html", "/p2.html"])
    configure(kb, add=[f"{site.url}/sitemap.xml", f"{site.url}/p4.html"])
    first = sync_kb(kb)
    assert (first.added, first.errors) == (4, [])
    assert f"{site.url}/p4.html" in kb.store.doc_ids()

    site.page("/p1.html", "发票", "电子发票改为当天发送。")
    site.sitemap("/sitemap.xml", ["/p1.html", "/p2.html", "/p3.html"])  # p0 gone, p3 new
    second = sync_kb(kb)
    assert (second.added, second.changed, second.removed, second.unchanged) == (1, 1, 1, 2)
    assert f"{site.url}/p0.html" not in kb.store.doc_ids()
    assert "当天发送" in _text(kb, f"{site.url}/p1.html")

    site.down = True  # a source that is down keeps its documents
    third = sync_kb(kb)
    assert third.errors and third.removed == 0
    assert len(kb.store.doc_ids()) == 4


def test_one_sync_per_kb_at_a_time(kb: KnowledgeBase, folder: Path) -> None:
    configure(kb, add=[folder])
    with sync_lock(kb), pytest.raises(KnowledgeBaseBusy):
        sync_kb(kb)


def test_sources_and_interval_are_kept_in_kb_json(kb: KnowledgeBase, folder: Path) -> None:
    configure(kb, add=[folder, "https://example.com/a.html"], interval=3600)
    configure(kb, remove=["https://example.com/a.html"])
    saved = json.loads((kb.path / "kb.json").read_text("utf-8"))
    assert saved["sources"] == [str(folder.resolve())] and saved["sync_interval"] == 3600
