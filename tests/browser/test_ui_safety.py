"""同步与备份 (#39) in the web UI: a KB exported from its owner's area and imported under another
name from the 知识库 list; refused imports (a tampered bundle, a KB that exists) show the
server's message; 立即同步 of a KB indexed from a folder shows the folder and the sync's result."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from typing import Any

import pytest
from ui_browser import Watch
from ui_fixtures import Server
from ui_owner import client, curated_kb, fixture_folder, need_routes, open_owner
from ui_steps import tab

KB = "safety_source"
COPY = "safety_copy"
EXPORT = "/api/v1/kbs/{kb}/export"
IMPORT = "/api/v1/kbs/import"
SYNC = "/api/v1/kbs/{kb}/sync"


@pytest.fixture(scope="module")
def kb(ui_server: Server) -> Iterator[str]:
    yield curated_kb(ui_server, KB, remember=True)


def bundle_file(name: str, data: bytes) -> dict[str, Any]:
    return {"name": name, "mimeType": "application/x-tar", "buffer": data}


def tampered(bundle: bytes) -> bytes:
    """``bundle`` with one byte of a member's content flipped (not the tar's padding)."""
    with tarfile.open(fileobj=io.BytesIO(bundle)) as tar:
        member = next(m for m in tar.getmembers() if m.isfile() and m.size and m.name != "manifest.json")
    at = member.offset_data + member.size // 2
    return bundle[:at] + bytes([bundle[at] ^ 0xFF]) + bundle[at + 1 :]


def import_in_page(page: Any, file: Any, name: str = "") -> Any:
    """Fill 导入知识库 on the 知识库 list and send it; returns the form."""
    tab(page, "kbs")
    form = page.get_by_test_id("kb-import")
    form.get_by_test_id("kb-import-file").set_input_files(file)
    form.get_by_test_id("kb-import-name").fill(name)
    form.get_by_test_id("kb-import-submit").click()
    return form


def test_a_kb_exported_is_imported_under_another_name(page: Any, ui_server: Server, kb: str) -> None:
    need_routes(ui_server, EXPORT, IMPORT)
    panel = open_owner(page, kb, "safety")
    with page.expect_download() as got:
        panel.get_by_test_id("kb-export").click()
    download = got.value
    assert download.suggested_filename == f"{kb}.zwkb"
    form = import_in_page(page, download.path(), COPY)
    form.locator(f"[data-testid=kb-import-ok][data-kb={COPY}]").wait_for()
    page.locator(f"#kb-list [data-kb={COPY}]").wait_for()
    with client(ui_server) as http:
        info = http.get(f"/api/v1/kbs/{COPY}").json()["data"]["info"]
        assert info["documents"] == 2


def test_a_refused_import_shows_the_reason(page: Any, ui_server: Server, watch: Watch, kb: str) -> None:
    need_routes(ui_server, EXPORT, IMPORT)
    watch.allow_http_errors = True  # the refusals' 4xx
    with client(ui_server) as http:
        resp = http.get(f"/api/v1/kbs/{kb}/export")
        resp.raise_for_status()
        data = resp.content
    form = import_in_page(page, bundle_file(f"{kb}.zwkb", data))  # its own name: it exists
    error = form.get_by_test_id("error")
    error.wait_for()
    assert f"知识库「{kb}」已存在" in error.inner_text()
    assert "勾选「覆盖」" in error.inner_text()

    form = import_in_page(page, bundle_file("tampered.zwkb", tampered(data)), "safety_tampered")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=kb-import] [data-testid=error]')"
        "?.textContent.includes('导出文件的校验和不符')"
    )
    assert not page.locator("#kb-list [data-kb=safety_tampered]").count()


def test_sync_now_shows_the_folder_and_the_result(page: Any, ui_server: Server, kb: str) -> None:
    need_routes(ui_server, SYNC)
    folder = fixture_folder(ui_server, kb)
    panel = open_owner(page, kb, "safety")
    source = panel.locator("[data-testid=sync-source][data-kind=folder]")
    source.wait_for()
    assert str(folder.resolve()) in source.inner_text()
    assert "文件夹" in source.inner_text()
    (folder / "东湖图书馆自习室.md").write_text("# 自习室\n\n三楼自习室需要预约。\n", encoding="utf-8")
    panel.get_by_test_id("sync-now").click()
    last = panel.locator("[data-testid=sync-last][data-started-at]")
    last.wait_for()
    panel.locator("[data-testid=sync-state][data-running=false]").wait_for(state="attached")
    assert last.get_by_test_id("sync-新增").locator("dd").inner_text() == "1"
    assert last.get_by_test_id("sync-未变").locator("dd").inner_text() == "2"
    assert last.get_by_test_id("sync-no-errors").is_visible()
