"""Loaders: markdown (with enrichment hooks), BEIR, CSV/JSON records, and their errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zhiwen.errors import IngestError
from zhiwen.ingest import (
    chunk_documents,
    corpus_chunks,
    load_beir_qrels,
    load_beir_queries,
    load_corpus,
    sample_kb_path,
)


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# -- markdown ---------------------------------------------------------------------------------
@pytest.fixture
def md_dir(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    _write(root / "b" / "二号.md", "# 第二篇\n\n正文二。\n")
    _write(root / "a.md", "没有标题的文档。\n")
    _write(root / "b" / "c" / "深层.markdown", "# 深层文档\n## 小节\n内容\n")
    _write(root / ".git" / "x.md", "# 不该读到\n")
    _write(root / "notes.txt", "不是 markdown")
    _write(root / "empty.md", "  \n")
    return root


def test_markdown_ids_titles_order(md_dir: Path) -> None:
    corpus = load_corpus(md_dir, "markdown")
    assert [d.id for d in corpus.documents] == ["a", "b/c/深层", "b/二号"]
    assert [d.title for d in corpus.documents] == ["a", "深层文档", "第二篇"]
    assert corpus.documents[1].metadata == {"source": "b/c/深层.markdown"}
    assert corpus.chunks is None  # markdown is chunked by headers
    again = load_corpus(md_dir, "markdown")
    assert again.documents == corpus.documents


def test_markdown_single_file_and_hooks(md_dir: Path) -> None:
    def hook(path: Path, root: Path, text: str, meta: dict[str, Any]) -> None:
        meta["chars"] = len(text)
        meta["top"] = path.relative_to(root).parts[0]

    corpus = load_corpus(md_dir / "b" / "二号.md", "markdown", enrich=[hook], metadata={"lang": "zh"})
    (doc,) = corpus.documents
    assert doc.id == "二号"
    assert doc.metadata == {
        "lang": "zh",
        "source": "二号.md",
        "chars": len("# 第二篇\n\n正文二。\n"),
        "top": "二号.md",
    }


def test_markdown_errors(tmp_path: Path) -> None:
    with pytest.raises(IngestError) as exc:
        load_corpus(tmp_path / "nope", "markdown")
    assert "路径不存在" in exc.value.message and "nope" in exc.value.detail

    (tmp_path / "empty").mkdir()
    _write(tmp_path / "empty" / "x.txt", "文本")
    with pytest.raises(IngestError) as exc:
        load_corpus(tmp_path / "empty", "markdown")
    assert "未找到任何文档" in exc.value.message

    bad = tmp_path / "gbk"
    _write(bad / "ok.md", "# 好的\n")
    _write(bad / "坏.md", "# 标题\n第二行\n中文内容".encode("gbk"))
    with pytest.raises(IngestError) as exc:
        load_corpus(bad, "markdown")
    assert "UTF-8" in exc.value.message and "坏.md" in exc.value.message
    assert "坏.md:1" in exc.value.detail

    with pytest.raises(IngestError) as exc:
        load_corpus(bad, "markdown", enrich="nonsense")
    assert "nonsense" in exc.value.detail

    with pytest.raises(IngestError) as exc:
        load_corpus(tmp_path, "rtf")
    assert "未知的格式" in exc.value.message
    for fmt in ("markdown", "beir", "csv", "json"):
        assert fmt in exc.value.detail

    with pytest.raises(IngestError) as exc:
        load_corpus(bad, "markdown", id_field="x")
    assert "不支持该选项" in exc.value.message


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    _write(tmp_path / "bom.md", "\ufeff# 带 BOM 的标题\n正文\n")
    (doc,) = load_corpus(tmp_path, "markdown").documents
    assert doc.title == "带 BOM 的标题"


# -- BEIR -------------------------------------------------------------------------------------
@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    root = tmp_path / "ds"
    lines = [{"_id": "d1", "title": "标题一", "text": "正文一"}, {"_id": "d2", "title": "", "text": "正文二"}]
    _write(root / "corpus.jsonl", "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n\n")
    _write(root / "queries.jsonl", json.dumps({"_id": "q1", "text": "问题"}, ensure_ascii=False) + "\n")
    _write(root / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n")
    return root


def test_beir(beir_dir: Path) -> None:
    corpus = load_corpus(beir_dir, "beir")
    assert [d.id for d in corpus.documents] == ["d1", "d2"]
    assert corpus.chunks is not None
    assert [(c.id, c.doc_id, c.parent_id, c.title) for c in corpus.chunks] == [
        ("d1", "d1", "d1", "标题一"),
        ("d2", "d2", "d2", ""),
    ]
    assert corpus_chunks(corpus) is corpus.chunks
    assert load_beir_queries(beir_dir) == {"q1": "问题"}
    assert load_beir_qrels(beir_dir) == {"q1": {"d1": 1, "d2": 2}}


def test_beir_malformed_line(beir_dir: Path) -> None:
    with (beir_dir / "corpus.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"_id": "d3", "text": "坏行"\n')
    with pytest.raises(IngestError) as exc:
        load_corpus(beir_dir, "beir")
    assert "corpus.jsonl:4" in exc.value.detail and "第 4 行" in exc.value.message


def test_beir_errors(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(IngestError, match=r"corpus\.jsonl"):
        load_corpus(tmp_path / "x", "beir")
    _write(tmp_path / "y" / "corpus.jsonl", "\n")
    with pytest.raises(IngestError) as exc:
        load_corpus(tmp_path / "y", "beir")
    assert "未找到任何文档" in exc.value.message
    _write(tmp_path / "z" / "corpus.jsonl", '{"title": "no id"}\n')
    with pytest.raises(IngestError, match=r"corpus\.jsonl:1"):
        load_corpus(tmp_path / "z", "beir")


def test_real_beir(shared_data: Path) -> None:
    ds = shared_data / "cmrc2018_retrieval"
    corpus = load_corpus(ds, "beir")
    qrels = load_beir_qrels(ds)
    assert len(corpus.documents) == 1104
    ids = {d.id for d in corpus.documents}
    assert all(set(rel) <= ids for rel in qrels.values())
    assert set(qrels) <= set(load_beir_queries(ds))


# -- CSV / JSON -------------------------------------------------------------------------------
CSV = (
    "house_id,title,xiaoqu,area,total_price,code,elevator\n"
    "h1,近地铁 满五唯一,共富一村 ,70.96,280,007,有电梯\n"
    "h2,南北通透,安阁苑,76.5,260,010,\n"
)


def test_csv_mapping_and_coercion(tmp_path: Path) -> None:
    f = _write(tmp_path / "sh.csv", CSV)
    corpus = load_corpus(f, "csv", id_field="house_id", text_fields=["title", "xiaoqu"], title_field="xiaoqu")
    assert corpus.chunks is not None and len(corpus.chunks) == 2
    c = corpus.chunks[0]
    assert (c.id, c.doc_id, c.parent_id, c.title) == ("h1", "h1", "h1", "共富一村")
    assert c.text == "近地铁 满五唯一\n共富一村"
    assert c.metadata == {
        "house_id": "h1",
        "area": 70.96,
        "total_price": 280,
        "code": "007",
        "elevator": "有电梯",
        "source": "sh.csv",
    }
    assert corpus.chunks[1].metadata["elevator"] is None
    only = load_corpus(f, "csv", id_field="house_id", text_fields="title", metadata_fields=["area"])
    assert only.documents[0].metadata == {"area": 70.96, "source": "sh.csv"}


def test_csv_directory_and_duplicates(tmp_path: Path) -> None:
    _write(tmp_path / "a.csv", CSV)
    _write(tmp_path / "b.csv", CSV.replace("h2", "h3"))
    corpus = load_corpus(tmp_path, "csv", id_field="house_id", text_fields=["title"])
    assert [d.id for d in corpus.documents] == ["h1", "h2", "h3"]
    assert len(corpus.warnings) == 1 and "duplicate" in corpus.warnings[0]
    no_id = load_corpus(tmp_path / "a.csv", "csv", text_fields=["title"])
    assert [d.id for d in no_id.documents] == ["a:2", "a:3"]


def test_csv_missing_column(tmp_path: Path) -> None:
    f = _write(tmp_path / "sh.csv", CSV)
    with pytest.raises(IngestError) as exc:
        load_corpus(f, "csv", id_field="house_id", text_fields=["title", "描述"])
    assert "描述" in exc.value.message and "sh.csv" in exc.value.detail and "xiaoqu" in exc.value.detail


def test_json_and_jsonl(tmp_path: Path) -> None:
    recs = [{"id": 1, "body": "第一条", "tags": ["a"], "price": "12.5"}, {"id": 2, "body": "第二条"}]
    j = _write(tmp_path / "r.json", json.dumps({"data": recs}, ensure_ascii=False))
    corpus = load_corpus(j, "json", id_field="id", text_fields=["body"])
    assert [d.id for d in corpus.documents] == ["1", "2"]
    assert corpus.documents[0].metadata == {"id": "1", "tags": ["a"], "price": 12.5, "source": "r.json"}
    jl = _write(tmp_path / "r.jsonl", "\n".join(json.dumps(r, ensure_ascii=False) for r in recs))
    from_lines = load_corpus(jl, "jsonl", id_field="id", text_fields="body").documents
    assert [(d.id, d.text) for d in from_lines] == [(d.id, d.text) for d in corpus.documents]
    assert from_lines[0].metadata["source"] == "r.jsonl"


def test_json_errors(tmp_path: Path) -> None:
    jl = _write(tmp_path / "bad.jsonl", '{"id": 1, "text": "好"}\n{"id": 2, "text": \n')
    with pytest.raises(IngestError) as exc:
        load_corpus(jl, "json", id_field="id")
    assert "bad.jsonl:2" in exc.value.detail
    j = _write(tmp_path / "x.json", json.dumps([{"id": 1, "body": "x"}]))
    with pytest.raises(IngestError, match="text fields"):
        load_corpus(j, "json", id_field="id", text_fields=["text"])
    with pytest.raises(IngestError, match="id field"):
        load_corpus(j, "json", id_field="uid", text_fields=["body"])


def test_real_listings_csv(shared_data: Path) -> None:
    f = shared_data / "lianjia_ershoufang" / "ErshoufangSpider_sh.csv"
    corpus = load_corpus(f, "csv", id_field="house_id", text_fields=["title"], title_field="xiaoqu")
    assert len(corpus.documents) > 2000
    m = corpus.documents[0].metadata
    assert isinstance(m["total_price"], int | float) and isinstance(m["area"], float)
    assert m["xiaoqu"] == m["xiaoqu"].strip()


# -- sample KB --------------------------------------------------------------------------------
def test_sample_kb_is_packaged_and_chunks_by_headers() -> None:
    root = sample_kb_path()
    assert root.is_dir()
    corpus = load_corpus(root, "markdown")
    assert 8 <= len(corpus.documents) <= 12
    for doc in corpus.documents:
        assert 1000 <= len(doc.text.encode("utf-8")) <= 3200, doc.id
        assert doc.title and doc.title != doc.id
    chunks = chunk_documents(corpus.documents)
    assert any(c.metadata["section"].count(" > ") == 2 for c in chunks)  # ### levels exist
