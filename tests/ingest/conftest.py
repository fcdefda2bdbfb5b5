"""Document fixtures for the ingest tests, built once per session from ../shared/data statutes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from doc_fixtures import (
    build_statute_formats,
    chromium_bin,
    md_to_html,
    scan_pdf,
    statute,
)

SHARED = Path(os.environ.get("ZHIWEN_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))


@pytest.fixture(scope="session")
def law_dir() -> Path:
    if not (SHARED / "cn_law_subset").is_dir():
        pytest.skip(f"shared data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def law_formats(law_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """契税法 as markdown, html, docx and (with Chromium) a printed pdf."""
    return build_statute_formats(statute(law_dir, "契税法"), tmp_path_factory.mktemp("qishui"))


@pytest.fixture(scope="session")
def law_pdf(law_formats: dict[str, Path]) -> Path:
    if "pdf" not in law_formats:
        pytest.skip(
            "chromium not installed (bash scripts/test.sh --system, or apt-get install chromium "
            "fonts-noto-cjk)"
        )
    return law_formats["pdf"]


@pytest.fixture(scope="session")
def scanned_pdf(law_pdf: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The top part of page 1 as an image-only PDF (a few lines: OCR stays fast in tests)."""
    out = tmp_path_factory.mktemp("scan") / "扫描件.pdf"
    scan_pdf(law_pdf, out, scale=2.0, pages=[0], crop=0.32)
    return out


@pytest.fixture(scope="session")
def table_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short page with a ruled table and no bookmarks (headings from font sizes)."""
    if chromium_bin() is None:
        pytest.skip("chromium not installed (bash scripts/test.sh --system)")
    from doc_fixtures import html_to_pdf

    folder = tmp_path_factory.mktemp("table")
    markdown = (
        "# 契税税率表\n\n## 一、适用范围\n\n本表列出各地契税适用税率，供纳税人查询。\n\n"
        "| 地区 | 税率 | 备注 |\n|---|---|---|\n"
        "| 北京市 | 百分之三 | 普通住宅 |\n| 上海市 | 百分之三 | 普通住宅 |\n\n"
        "## 二、说明\n\n税率由省、自治区、直辖市人民政府在法定幅度内提出。\n"
    )
    html = folder / "税率表.html"
    html.write_text(md_to_html(markdown, "税率表"), "utf-8")
    pdf = folder / "税率表.pdf"
    exe = chromium_bin()
    assert exe
    import subprocess

    subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--print-to-pdf={pdf}",
            html.resolve().as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if not pdf.is_file():
        pytest.skip("chromium could not print")
    _ = html_to_pdf  # the outline-less print above is the point of this fixture
    return pdf
