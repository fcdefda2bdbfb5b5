"""A tiny BEIR-layout dataset written to tmp: 8 passages, 5 queries (one without qrels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PASSAGES = {
    "p1": ("宫保鸡丁", "宫保鸡丁是一道川菜，主料是鸡丁、花生米和干辣椒，口味麻辣鲜香。"),
    "p2": ("红烧肉", "红烧肉用五花肉加冰糖和酱油慢炖，色泽红亮，肥而不腻。"),
    "p3": ("番茄炒蛋", "番茄炒蛋做法简单：鸡蛋炒散盛出，再炒番茄，最后合炒调味。"),
    "p4": ("出境入境管理法", "外国人入境应当向驻外签证机关申请办理签证，但免办签证的除外。"),
    "p5": ("过境免签", "部分国家的外国人过境中国可享受二百四十小时免签停留，无需办理签证。"),
    "p6": ("契税法", "契税税率为百分之三至百分之五，由省级人民政府在规定幅度内提出。"),
    "p7": ("住房公积金", "职工购买、建造、翻建、大修自住住房时可以提取住房公积金。"),
    "p8": ("麻婆豆腐", "麻婆豆腐是四川名菜，用豆腐、牛肉末、豆瓣酱和花椒烹制。"),
}
QUERIES = {
    "q1": "宫保鸡丁用什么主料",
    "q2": "外国人入境要办签证吗",
    "q3": "契税税率是多少",
    "q4": "住房公积金什么时候可以提取",
    "q5": "没有标注的查询",
}
QRELS = [("q1", "p1", 1), ("q2", "p4", 1), ("q2", "p5", 1), ("q3", "p6", 2), ("q4", "p7", 1), ("q4", "p3", 0)]


def write_beir(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for pid, (title, text) in PASSAGES.items():
            f.write(json.dumps({"_id": pid, "title": title, "text": text}, ensure_ascii=False) + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as f:
        for qid, text in QUERIES.items():
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (root / "qrels").mkdir(exist_ok=True)
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{p}\t{s}" for q, p, s in QRELS)]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def tiny_beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny_beir")
