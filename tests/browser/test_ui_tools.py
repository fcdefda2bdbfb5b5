"""计算器 and 知识库 management (upload with progress, delete, admin settings) in Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ui_browser import shot
from ui_fixtures import ADMIN_TOKEN
from ui_steps import idle, inspect_kb, loan, tab, tax


def test_loan_calculator_both_methods_and_chart(page: Any) -> None:
    result = loan(page)
    assert page.get_by_test_id("calc-loan-monthly").inner_text() == "8,967.34"
    compare = result.locator("table.compare").inner_text()
    assert "等额本息" in compare and "等额本金" in compare and "11,258.33" in compare
    chart = result.get_by_test_id("loan-chart")
    assert chart.locator("path.line").count() == 2
    assert chart.locator("path.area-interest").get_attribute("data-rows") == "360"
    page.locator("label", has_text="等额本金").click()
    page.get_by_test_id("calc-loan-submit").click()
    idle(page, "#loan-result")
    assert page.get_by_test_id("calc-loan-monthly").inner_text() == "11,258.33"


def test_loan_errors_inline_with_the_server_message(page: Any, watch: Any) -> None:
    watch.allow_http_errors = True  # the 422 is the point of the test
    loan(page, rate="0.031")  # a fraction where the server expects a percent
    error = page.locator("#loan-form [data-error-for=rate]")
    shown = error.inner_text()
    assert "利率请按百分数填写，如 3.1 表示 3.1%" in shown and "2001" in shown
    assert page.get_by_test_id("calc-loan-rate").get_attribute("aria-invalid") == "true"
    assert page.get_by_test_id("calc-loan-monthly").count() == 0
    # a percent box out of its range is caught before any request, in the box's own unit
    loan(page, down="130")
    assert "首付比例应在 0 ~ 99 之间" in page.locator("#loan-form [data-error-for=down_pct]").inner_text()
    assert page.get_by_test_id("calc-loan-monthly").count() == 0
    shot(page, "desktop-light-calc-error")
    # an empty field is caught before any request
    loan(page, price="")
    assert "请填写房价" in page.locator("#loan-form [data-error-for=price]").inner_text()
    # fixed input clears the errors
    loan(page)
    assert page.locator("#loan-form [data-error-for=price]").inner_text() == ""
    assert page.get_by_test_id("calc-loan-monthly").inner_text() == "8,967.34"


def test_tax_calculator_parts_rule_and_date(page: Any) -> None:
    result = tax(page)
    assert page.get_by_test_id("calc-tax-total").inner_text() == "90,000.00"
    parts = result.locator("table.tax-parts").inner_text()
    for name in ("契税", "增值税", "个人所得税", "中介费", "合计"):
        assert name in parts
    assert "30,000.00" in parts and "税率 1%" in parts
    rule = result.locator("dl.kv").inner_text()
    assert "2024-12-01 起" in rule and "公告2024年第16号" in rule


def test_upload_with_progress_then_delete(page: Any, tmp_path: Path) -> None:
    folder = tmp_path / "资料"
    folder.mkdir()
    (folder / "报销制度.md").write_text("# 报销制度\n\n差旅费在出差结束后十五日内报销。\n", encoding="utf-8")
    (folder / "请假制度.txt").write_text("年假每年十天，病假需要医院证明。\n", encoding="utf-8")
    tab(page, "kbs")
    page.fill("#upload-kb", "ui_upload")
    page.set_input_files("#upload-files", [str(p) for p in sorted(folder.iterdir())])
    picked = page.locator("#upload-files").locator("xpath=..").locator(".file-names")  # the upload form's own
    assert "2 个文件" in picked.inner_text()
    page.get_by_role("button", name="上传并导入").click()
    page.wait_for_selector("#upload-progress [data-job-status]", timeout=30_000)
    assert page.locator("#upload-progress [data-job-status]").get_attribute("data-job-status") == "done"
    assert page.locator("#upload-progress tr[data-status=indexed]").count() == 2
    # the new KB is listed and inspected; delete one document (two clicks)
    page.wait_for_selector("#kb-detail tr[data-doc]")
    assert page.locator("[data-kb=ui_upload]").count() == 1
    rows = page.locator("#kb-detail tr[data-doc]")
    assert rows.count() == 2
    delete = rows.first.get_by_role("button", name="删除")
    delete.click()
    page.get_by_role("button", name="确认删除？").click()
    page.wait_for_function("() => document.querySelectorAll('#kb-detail tr[data-doc]').length === 1")
    page.wait_for_selector(".toast")
    # the chat tab offers the new KB right away
    tab(page, "chat")
    assert page.locator("#chat-kb option[value=ui_upload]").count() == 1
    # and the whole KB goes (two clicks too)
    detail = inspect_kb(page, "ui_upload")
    detail.get_by_test_id("kb-delete").click()
    page.get_by_role("button", name="确认删除？").click()
    page.wait_for_function("() => !document.querySelector('[data-kb=ui_upload]')")


def test_inspect_kb_and_admin_settings(page: Any, watch: Any) -> None:
    watch.allow_http_errors = True  # the wrong token's 401 is part of the test
    detail = inspect_kb(page, "manual")
    assert "hash" in detail.inner_text() and detail.locator("tr[data-doc]").count() == 10
    page.fill("#admin-token", "wrong")
    page.get_by_role("button", name="读取设置").click()
    page.wait_for_selector("#admin-status [data-testid=error]")
    assert "未授权" in page.locator("#admin-status").inner_text()
    page.fill("#admin-token", ADMIN_TOKEN)
    page.get_by_role("button", name="读取设置").click()
    page.wait_for_selector("#admin-adaptive-mmr_enabled")
    page.locator("label[for=admin-adaptive-mmr_enabled]").click()
    page.get_by_role("button", name="保存修改").click()
    page.wait_for_selector(".field.overridden #admin-adaptive-mmr_enabled")
    assert page.locator("#admin-adaptive-mmr_enabled").is_checked()
    # a wrong value gets the server's message; then back to the defaults
    page.fill("#admin-adaptive-mmr_lambda", "5")
    page.get_by_role("button", name="保存修改").click()
    page.wait_for_selector("#admin-status [data-testid=error]")
    assert "adaptive.mmr_lambda 必须小于等于 1" in page.locator("#admin-status").inner_text()
    page.get_by_role("button", name="恢复默认").click()
    page.wait_for_function("() => !document.querySelector('#admin-adaptive-mmr_enabled').checked")
    assert page.locator(".field.overridden").count() == 0
