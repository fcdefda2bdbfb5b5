"""``zhiwen kb chunks|chunk|changes|undo|faq|synonyms|dictionary`` and ``zhiwen index --format faq``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from zhiwen.kb import KnowledgeBase, list_kbs
from zhiwen.kb.faq import faq_entries

Invoke = Callable[..., Result]
FAQ_CSV = (
    "问题,答案,相似问题\n怎么退货？,签收后七天内在订单页申请退货。,能退货吗\n"
    "发票怎么开？,订单完成后自动发电子发票。,\n"
)


@pytest.fixture
def zw(shop: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    from zhiwen.cli.main import app

    monkeypatch.setenv("COLUMNS", "200")
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        return runner.invoke(app, list(args))

    return invoke


def _json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_chunks_chunk_changes_undo(zw: Invoke, shop: KnowledgeBase) -> None:
    listed = _json(zw("kb", "chunks", "shop", "--doc", "policy", "--json"))
    cid = listed["items"][0]["id"]
    assert listed["total"] >= 2
    table = zw("kb", "chunks", "shop", "--q", "退货")
    assert table.exit_code == 0 and "退货" in table.stdout
    edited = _json(zw("kb", "chunk", "shop", cid, "--text", "七天内可退货。", "--json"))
    assert edited["state"] == "edited" and edited["updated_by"] == "cli"
    off = _json(
        zw("kb", "chunk", "shop", cid, "--disable", "--question", "能退吗", "--keyword", "退货", "--json")
    )
    assert off["enabled"] is False and off["questions"] == ["能退吗"]
    shown = zw("kb", "chunk", "shop", cid)
    assert shown.exit_code == 0 and "能退吗" in shown.stdout
    changes = zw("kb", "changes", "shop")
    assert changes.exit_code == 0 and "修改文字" in changes.stdout
    undone = zw("kb", "undo", "shop")
    assert undone.exit_code == 0 and "已撤销" in undone.stdout
    assert _json(zw("kb", "chunk", "shop", cid, "--json"))["enabled"] is True
    deleted = zw("kb", "chunk", "shop", cid, "--delete")
    assert deleted.exit_code == 0 and "已删除" in deleted.stdout
    missing = zw("kb", "chunk", "shop", cid)
    assert missing.exit_code != 0 and "段落不存在" in missing.output
    assert zw("kb", "chunks", "shop").exit_code != 0  # neither --doc nor --q


def test_synonyms_and_dictionary_import_export(zw: Invoke, tmp_path: Path) -> None:
    src = tmp_path / "syn.csv"
    src.write_text("土豆 马铃薯 洋芋\n西红柿、番茄\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    got = _json(zw("kb", "synonyms", "shop", "--import", str(src), "--export", str(out), "--json"))
    assert got["groups"] == [["土豆", "马铃薯", "洋芋"], ["西红柿", "番茄"]]
    assert "土豆,马铃薯,洋芋" in out.read_text(encoding="utf-8-sig")
    bad = tmp_path / "bad.csv"
    bad.write_text("土豆 马铃薯\n洋芋\n", encoding="utf-8")
    refused = zw("kb", "synonyms", "shop", "--import", str(bad))
    assert refused.exit_code != 0 and "第 2 行" in refused.output
    words = tmp_path / "words.csv"
    words.write_text("词条\n七天无理由\n", encoding="utf-8")
    assert _json(zw("kb", "dictionary", "shop", "--import", str(words), "--json"))["words"] == ["七天无理由"]
    listed = zw("kb", "dictionary", "shop")
    assert listed.exit_code == 0 and "七天无理由" in listed.stdout


def test_faq_commands(zw: Invoke, shop: KnowledgeBase, tmp_path: Path) -> None:
    src = tmp_path / "faq.csv"
    src.write_text(FAQ_CSV, encoding="utf-8")
    assert _json(zw("kb", "faq", "shop", "import", str(src), "--json"))["added"] == 2
    added = _json(
        zw("kb", "faq", "shop", "add", "--question", "客服电话？", "--answer", "400-800-1234", "--json")
    )
    assert added["question"] == "客服电话？"
    listed = zw("kb", "faq", "shop", "list")
    assert listed.exit_code == 0 and "怎么退货" in listed.stdout and "客服电话" in listed.stdout
    assert _json(zw("kb", "faq", "shop", "list", "--q", "发票", "--json"))["total"] == 1
    out = tmp_path / "out.jsonl"
    assert _json(zw("kb", "faq", "shop", "export", str(out), "--json"))["count"] == 3
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3
    assert _json(zw("kb", "faq", "shop", "threshold", "0.9", "--json"))["threshold"] == 0.9
    assert zw("kb", "faq", "shop", "threshold", "2").exit_code != 0
    assert zw("kb", "faq", "shop", "explode").exit_code != 0
    assert len(faq_entries(shop)) == 3


def test_index_format_faq(zw: Invoke, tmp_path: Path) -> None:
    src = tmp_path / "faq.csv"
    src.write_text(FAQ_CSV, encoding="utf-8")
    done = _json(zw("index", "--format", "faq", str(src), "--kb", "helpdesk", "--json"))
    assert done["added"] == 2 and "helpdesk" in list_kbs()
    bad = tmp_path / "bad.csv"
    bad.write_text("问题,答案\n怎么退货？,\n", encoding="utf-8")
    refused = zw("index", "--format", "faq", str(bad), "--kb", "newkb")
    assert refused.exit_code != 0 and "第 2 行" in refused.output
    assert "newkb" not in list_kbs()  # a KB made for a refused file is removed again
