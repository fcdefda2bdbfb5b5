"""FAQ file import: formats, header variants, all-or-nothing errors naming the row, stable ids."""

from __future__ import annotations

import json
import time
from pathlib import Path

import openpyxl
import pytest

from zhiwen.config import FAQSettings
from zhiwen.errors import IngestError
from zhiwen.faq import (
    FAQEntry,
    FAQFileTooLarge,
    FAQImportError,
    check_conflicts,
    entry_id_for,
    read_faq,
)


def _csv(text: str, encoding: str = "utf-8") -> bytes:
    return text.encode(encoding)


def test_csv_with_maxkb_like_headers_and_similar_questions_one_per_line() -> None:
    data = _csv(
        "问题（选填，单元格内一行一个）,答案（必填）,相似问题,分类\n"
        '外国人入境免签几天？,一般 30 天,"免签能待多久\n免签停留时间",签证\n'
        "怎么建库,用 zhiwen index,,\n"
    )
    got = read_faq(data, file="faq.csv")
    first, second = got.entries
    assert first.question == "外国人入境免签几天？" and first.answer == "一般 30 天"
    assert first.similar == ("免签能待多久", "免签停留时间") and first.category == "签证"
    assert second.similar == () and second.category == ""
    assert got.rows == (2, 3)


def test_question_cell_with_several_lines_gives_similar_questions() -> None:
    got = read_faq(_csv('问题,内容\n"契税怎么算\n契税如何计算\n契税怎么算？",按面积和套数\n'), file="a.csv")
    (entry,) = got.entries
    assert entry.question == "契税怎么算" and entry.similar == ("契税如何计算",)  # the repeat folded


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "gb18030", "utf-16"])
def test_csv_encoding_is_detected(encoding: str) -> None:
    text = (
        "问题,答案\n住房公积金可以提取吗？,购买自住住房时可以提取账户余额。\n"
        "二手房交易要交哪些税费？,契税、增值税和个税。\n"
    )
    got = read_faq(_csv(text, encoding), file="faq.csv")
    assert [e.question for e in got.entries] == ["住房公积金可以提取吗？", "二手房交易要交哪些税费？"]


def test_xlsx(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["编号", "问题", "答案", "相似问题", "启用"])
    sheet.append([None, None, None, None, None])  # a blank row is skipped
    sheet.append([7, "满五唯一是什么？", "满 5 年且唯一住房", "满五唯一啥意思", "否"])
    path = tmp_path / "faq.xlsx"
    book.save(path)
    (entry,) = read_faq(path).entries
    assert entry.id == "7" and entry.similar == ("满五唯一啥意思",) and entry.enabled is False


def test_jsonl_with_english_keys_and_lists() -> None:
    lines = [
        {"question": "怎么安装？", "answer": "pip install -e .", "similar": ["如何安装", "安装步骤"]},
        {"问题": "支持哪些格式？", "答案": "PDF、Word……", "分类": "导入"},
    ]
    data = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode()
    got = read_faq(data, file="faq.jsonl")
    assert got.entries[0].similar == ("如何安装", "安装步骤") and got.entries[1].category == "导入"


def _error(data: bytes, name: str = "faq.csv", **settings: int) -> FAQImportError:
    with pytest.raises(FAQImportError) as info:
        read_faq(data, file=name, settings=FAQSettings(**settings))
    return info.value


def test_empty_answer_names_the_row_and_nothing_is_imported() -> None:
    err = _error(_csv("问题,答案\n好问题,好答案\n第二个问题,\n"))
    assert err.http_status == 422 and err.code == 3007
    assert "第 3 行（答案）：答案为空" in err.message and "未导入任何条目" in err.message
    assert err.data["errors"] == [{"row": 3, "column": "答案", "reason": "答案为空"}]


def test_duplicate_questions_name_both_rows() -> None:
    err = _error(_csv("问题,答案,相似问题\n契税怎么算？,a,\n别的问题,b,契税怎么算\n"))
    assert "第 3 行（问题）：问题「契税怎么算」与第 2 行重复" in err.message


def test_duplicate_ids_are_refused() -> None:
    err = _error(_csv("编号,问题,答案\nx1,问题一,a\nx1,问题二,b\n"))
    assert "编号「x1」与第 2 行重复" in err.message


def test_a_5000_character_question_is_refused() -> None:
    err = _error(_csv("问题,答案\n" + "长" * 5000 + ",x\n"))
    assert "问题过长：5000 字，上限 500 字" in err.message


def test_wrong_columns_name_the_columns_found_and_expected() -> None:
    err = _error(_csv("标题,正文\na,b\n"))
    assert "缺少列 问题、答案" in err.message and "「标题」、「正文」" in err.message
    assert "相似问题" in err.message


def test_every_bad_row_is_listed() -> None:
    rows = "".join(f"问题{i},\n" for i in range(60))
    err = _error(_csv("问题,答案\n" + rows))
    assert err.data["count"] == 60 and len(err.data["errors"]) == 50
    assert "另有 55 处" in err.message


def test_100000_rows_are_refused_while_reading() -> None:
    data = _csv("问题,答案\n" + "".join(f"问题{i},答案{i}\n" for i in range(100_000)))
    start = time.perf_counter()
    with pytest.raises(FAQFileTooLarge) as info:
        read_faq(data, file="big.csv")
    assert info.value.http_status == 413 and info.value.data["max_rows"] == 10_000
    assert "超过 10000 条" in info.value.message
    assert time.perf_counter() - start < 10


def test_bad_jsonl_lines_are_listed() -> None:
    err = _error(b'{"q": "a", "a": "b"}\n{oops\n[1]\n', name="faq.jsonl")
    assert [e["row"] for e in err.data["errors"]] == [2, 3]


def test_empty_file_and_unknown_format() -> None:
    assert "文件为空" in _error(b"\n\n").message
    assert "不支持的文件类型" in _error(b"x", name="faq.pdf").message
    with pytest.raises(IngestError) as info:  # the ingest checks' own error: 422 too
        read_faq(b"not a zip", file="faq.xlsx")
    assert info.value.http_status == 422 and "已损坏" in info.value.message


def test_reimport_keeps_ids_and_an_answer_change_updates_the_same_entry() -> None:
    one = read_faq(_csv("问题,答案\n契税怎么算？,旧答案\n"), file="a.csv").entries[0]
    two = read_faq(_csv("问题,答案\n 契税怎么算 ,新答案\n"), file="a.csv").entries[0]
    assert one.id == two.id == entry_id_for("契税怎么算") and two.answer == "新答案"


def test_check_conflicts_against_the_kb() -> None:
    existing = [FAQEntry.create("契税怎么算？", "a", similar=["契税如何计算"], id="kb-1")]
    same = read_faq(_csv("编号,问题,答案\nkb-1,契税如何计算,b\n"), file="a.csv")
    check_conflicts(same, existing)  # the same entry: an update
    other = read_faq(_csv("问题,答案\n契税如何计算？,b\n"), file="b.csv")
    with pytest.raises(FAQImportError) as info:
        check_conflicts(other, existing)
    assert "第 2 行" in info.value.message and "kb-1" in info.value.message
