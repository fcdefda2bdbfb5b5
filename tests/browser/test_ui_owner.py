"""The owner's area of a KB (#36, #37), one test per panel, over a KB of this module's own:
片段 (edit, disable, search, add, delete), FAQ (add, edit, import with row errors, threshold,
export), 词典 / 同义词, 修改记录 with 撤销, 提问记录, 统计."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from ui_browser import Watch
from ui_fixtures import Server
from ui_owner import ask_chat, client, curated_kb, need_routes, open_owner

KB = "curated_owner"
DOC = "东湖图书馆借阅规则"  # a Markdown file's document id is its name without .md
CHUNK_ROUTES = (
    "/api/v1/kbs/{kb}/documents/{doc_id}/chunks",
    "/api/v1/kbs/{kb}/chunks",
    "/api/v1/kbs/{kb}/chunks/{chunk_id}",
)


@pytest.fixture(scope="module")
def kb(ui_server: Server) -> Iterator[str]:
    yield curated_kb(ui_server, KB)


def csv_file(name: str, text: str) -> dict[str, Any]:
    return {"name": name, "mimeType": "text/csv", "buffer": text.encode("utf-8")}


def test_the_owner_area_opens_from_the_kb_list(page: Any, watch: Watch, kb: str) -> None:
    watch.allow_http_errors = True  # a panel whose route is missing says so, in Chinese
    panel = open_owner(page, kb, "stats")
    assert page.locator("#owner-title").inner_text() == f"管理知识库：{kb}"
    assert page.get_by_test_id("app-tab-kbs").get_attribute("aria-selected") == "true"
    assert not page.get_by_test_id("chat-input").is_visible()
    assert panel.is_visible()
    page.get_by_test_id("owner-tab-faq").click()
    page.wait_for_selector("#owner-body[data-panel=faq]")
    assert f"#owner/{kb}/faq" in page.url
    page.get_by_test_id("owner-back").click()
    page.wait_for_selector("#view-kbs:not([hidden])")


def test_chunks_are_edited_disabled_searched_added_and_deleted(page: Any, ui_server: Server, kb: str) -> None:
    need_routes(ui_server, *CHUNK_ROUTES)
    panel = open_owner(page, kb, "chunks")
    panel.get_by_test_id("doc-select").select_option(DOC)
    chunk_id = panel.locator("[data-testid=chunk]", has_text="借期为30天").first.get_attribute(
        "data-chunk-id"
    )
    card = panel.locator(f"[data-testid=chunk][data-chunk-id='{chunk_id}']")
    card.get_by_test_id("chunk-edit").click()
    card.get_by_test_id("chunk-text-input").fill("东湖图书馆的图书借期为60天，每位读者最多同时借阅10册。")
    card.get_by_test_id("chunk-questions-input").fill("借书能借几天")
    card.get_by_test_id("chunk-keywords-input").fill("借期")
    card.get_by_test_id("chunk-save").click()
    panel.locator("[data-testid=chunk]", has_text="借期为60天").wait_for()
    assert card.get_by_test_id("chunk-state").inner_text() == "已编辑"
    assert "借书能借几天" in card.locator(".questions").inner_text()
    assert "借期为30天" in (card.locator(".source-text").text_content() or "")  # the imported text, folded

    card.get_by_test_id("chunk-toggle").click()
    panel.locator(f"[data-testid=chunk][data-chunk-id='{chunk_id}'][data-enabled=false]").wait_for()

    panel.get_by_test_id("chunk-search").fill("滞纳金")
    panel.get_by_test_id("chunk-search").press("Enter")
    panel.locator("[data-testid=chunk]", has_text="0.1元滞纳金").wait_for()

    panel.get_by_test_id("chunk-add").click()
    panel.get_by_test_id("chunk-add-text").fill("东湖图书馆三楼设有自习室，需要预约。")
    panel.get_by_test_id("chunk-add-submit").click()
    # added to the document shown (the form's default), which the panel shows again with it
    panel.locator("[data-testid=chunk]", has_text="自习室").wait_for()
    assert panel.get_by_test_id("doc-select").input_value() == DOC
    added = panel.locator("[data-testid=chunk]", has_text="自习室").first
    assert added.get_by_test_id("chunk-state").inner_text() == "手动添加"
    added.get_by_test_id("chunk-delete").click()
    added.get_by_test_id("chunk-delete").click()
    panel.locator("[data-testid=chunk]", has_text="自习室").wait_for(state="detached")


def test_faq_entries_are_added_edited_imported_and_exported(
    page: Any, ui_server: Server, watch: Watch, kb: str
) -> None:
    need_routes(
        ui_server, "/api/v1/kbs/{kb}/faq", "/api/v1/kbs/{kb}/faq/import", "/api/v1/kbs/{kb}/faq/settings"
    )
    watch.allow_http_errors = True  # the bad file's 400
    panel = open_owner(page, kb, "faq")
    panel.get_by_test_id("faq-add").click()
    panel.get_by_test_id("faq-question-input").fill("图书馆几点开门？")
    panel.get_by_test_id("faq-answer-input").fill("每天8:00开门。")
    panel.get_by_test_id("faq-similar-input").fill("图书馆开放时间")
    panel.get_by_test_id("faq-save").click()
    entry = panel.locator("[data-testid=faq-entry]", has_text="图书馆几点开门").first
    entry.get_by_test_id("faq-edit").click()
    panel.get_by_test_id("faq-answer-input").fill("每天8:00开门，22:00闭馆。")
    panel.get_by_test_id("faq-save").click()
    panel.locator("[data-testid=faq-entry]", has_text="22:00闭馆").wait_for()

    bad = "问题,答案\n能借几本书？,\n"
    panel.get_by_test_id("faq-import-file").set_input_files(csv_file("bad.csv", bad))
    panel.get_by_test_id("faq-import").click()
    errors = panel.get_by_test_id("import-errors")
    assert "2" in errors.locator("tbody tr").first.inner_text()
    good = "问题,答案,相似问题\n能借几本书？,最多同时借阅10册。,最多借几本\n"
    panel.get_by_test_id("faq-import-file").set_input_files(csv_file("good.csv", good))
    panel.get_by_test_id("faq-import").click()
    panel.get_by_test_id("import-ok").wait_for()
    panel.locator("[data-testid=faq-entry]", has_text="能借几本书").wait_for()

    panel.get_by_test_id("faq-threshold").fill("0.9")
    panel.get_by_test_id("faq-threshold-save").click()
    page.locator(".toast", has_text="阈值已设为").wait_for()
    with page.expect_download() as got:
        panel.get_by_test_id("faq-export-csv").click()
    assert got.value.suggested_filename == f"{kb}-faq.csv"


def test_dictionary_and_synonyms_are_kept(page: Any, ui_server: Server, kb: str) -> None:
    need_routes(ui_server, "/api/v1/kbs/{kb}/dictionary", "/api/v1/kbs/{kb}/synonyms")
    panel = open_owner(page, kb, "words")
    panel.get_by_test_id("dictionary-text").fill("东湖图书馆\n滞纳金")
    panel.get_by_test_id("dictionary-save").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=dictionary-status]').textContent.includes('2 个词')"
    )
    panel.get_by_test_id("synonyms-text").fill("借书 借阅\n续借，延期")
    panel.get_by_test_id("synonyms-save").click()
    page.wait_for_function(
        "() => document.querySelector('[data-testid=synonyms-status]').textContent.includes('2 组')"
    )
    panel.get_by_test_id("synonyms-import-file").set_input_files(
        csv_file("syn.csv", "标准词,同义词1\n开放时间,开馆时间\n")
    )
    page.wait_for_function(
        "() => document.querySelector('[data-testid=synonyms-text]').value.includes('开馆时间')"
    )
    with page.expect_download() as got:
        panel.get_by_test_id("dictionary-export").click()
    assert got.value.suggested_filename == f"{kb}-dictionary.csv"
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=dictionary-text]')?.value.includes('滞纳金')"
    )


def test_a_change_is_undone(page: Any, ui_server: Server, kb: str) -> None:
    need_routes(ui_server, "/api/v1/kbs/{kb}/changes", "/api/v1/kbs/{kb}/changes/undo", *CHUNK_ROUTES)
    with client(ui_server) as http:
        [chunk] = http.get(f"/api/v1/kbs/{kb}/chunks", params={"q": "开放时间", "limit": 1}).json()["data"][
            "items"
        ]
        cid = quote(chunk["id"], safe="")
        http.patch(f"/api/v1/kbs/{kb}/chunks/{cid}", json={"keywords": ["开馆"]}).raise_for_status()
    panel = open_owner(page, kb, "changes")
    row = panel.locator("[data-testid=change][data-undone=false]").first
    assert chunk["id"] in row.inner_text()
    change_id = row.get_attribute("data-change-id")
    row.get_by_test_id("change-undo").click()
    panel.locator(f"[data-testid=change][data-change-id='{change_id}'][data-undone=true]").wait_for()


def test_questions_and_stats_show_what_was_asked(page: Any, ui_server: Server, kb: str) -> None:
    need_routes(
        ui_server, "/api/v1/kbs/{kb}/questions", "/api/v1/kbs/{kb}/questions/top", "/api/v1/kbs/{kb}/stats"
    )
    answer = ask_chat(page, "东湖图书馆几点关门？", kb)
    # a 👍 is taken once the log holds the answer (it is written off the request path)
    answer.get_by_test_id("thumb-up").click()
    page.wait_for_selector("#chat-thread [data-testid=feedback][data-rated=up]")
    panel = open_owner(page, kb, "questions")
    panel.get_by_test_id("questions-status").select_option("all")
    panel.locator("[data-testid=question]", has_text="几点关门").wait_for()
    panel.locator("[data-testid=top-question]", has_text="几点关门").wait_for()
    panel = open_owner(page, kb, "stats")
    tiles = panel.get_by_test_id("stat-tiles")
    assert int(tiles.locator(".tile").first.locator("dd").inner_text().replace(",", "")) >= 1
    ups = tiles.locator(".tile", has_text="👍").locator("dd").inner_text().split("/")[0]
    assert int(ups.replace(",", "")) >= 1
    assert panel.locator("svg.chart.daily").count() == 6
