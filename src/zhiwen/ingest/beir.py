"""BEIR-layout datasets: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

One passage = one document = one chunk (its id is the passage ``_id``), so evaluation judges
exactly the units that are searched.

Example::

    >>> corpus = load_beir(Path("../shared/data/cmrc2018_retrieval"))
    >>> queries = load_beir_queries(Path("../shared/data/cmrc2018_retrieval"))
    >>> qrels = load_beir_qrels(Path("../shared/data/cmrc2018_retrieval"), split="test")
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.ingest._io import empty_corpus, iter_jsonl, read_utf8, require_path
from zhiwen.ingest.base import Corpus


def _corpus_file(path: Path) -> Path:
    path = require_path(Path(path))
    if path.is_file():
        return path
    f = path / "corpus.jsonl"
    if not f.is_file():
        raise IngestError(
            f"{path}: no corpus.jsonl (BEIR layout: corpus.jsonl, queries.jsonl, qrels/test.tsv)",
            message=f"导入失败：目录中没有 corpus.jsonl（BEIR 格式）：{path}",
        )
    return f


def _dataset_dir(path: Path) -> Path:
    path = require_path(Path(path))
    return path.parent if path.is_file() else path


def load_beir(path: Path, *, metadata: dict[str, Any] | None = None) -> Corpus:
    """Load ``corpus.jsonl`` (``path`` is the dataset directory or the file itself)."""
    f = _corpus_file(path)
    docs: list[Document] = []
    chunks: list[Chunk] = []
    seen: set[str] = set()
    for lineno, obj in iter_jsonl(f):
        doc_id = obj.get("_id", obj.get("id"))
        text = obj.get("text")
        if doc_id is None or not isinstance(text, str):
            raise IngestError(
                f"{f}:{lineno}: a BEIR corpus line needs '_id' and 'text'",
                message=f"导入失败：缺少 _id 或 text 字段：{f} 第 {lineno} 行",
            )
        doc_id = str(doc_id)
        if doc_id in seen:
            raise IngestError(
                f"{f}:{lineno}: duplicate _id {doc_id!r}",
                message=f"导入失败：重复的文档 ID「{doc_id}」：{f} 第 {lineno} 行",
            )
        seen.add(doc_id)
        title = str(obj.get("title") or "")
        meta = dict(metadata or {})
        extra = obj.get("metadata")
        if isinstance(extra, dict):
            meta.update(extra)
        docs.append(Document(id=doc_id, text=text, title=title, metadata=meta))
        chunks.append(
            Chunk(id=doc_id, doc_id=doc_id, text=text, title=title, parent_id=doc_id, metadata=meta)
        )
    if not docs:
        raise empty_corpus(f, "corpus.jsonl has no lines")
    return Corpus(documents=docs, chunks=chunks)


def load_beir_queries(path: Path) -> dict[str, str]:
    """``queries.jsonl`` as ``{query id: text}``, in file order."""
    f = _dataset_dir(path) / "queries.jsonl"
    require_path(f)
    out: dict[str, str] = {}
    for lineno, obj in iter_jsonl(f):
        if "_id" not in obj or not isinstance(obj.get("text"), str):
            raise IngestError(
                f"{f}:{lineno}: a BEIR query line needs '_id' and 'text'",
                message=f"导入失败：缺少 _id 或 text 字段：{f} 第 {lineno} 行",
            )
        out[str(obj["_id"])] = obj["text"]
    return out


def load_beir_qrels(path: Path, split: str = "test") -> dict[str, dict[str, int]]:
    """``qrels/<split>.tsv`` (header ``query-id corpus-id score``) as ``{qid: {doc id: grade}}``."""
    f = _dataset_dir(path) / "qrels" / f"{split}.tsv"
    require_path(f)
    out: dict[str, dict[str, int]] = {}
    for lineno, line in enumerate(read_utf8(f).splitlines(), start=1):
        parts = line.strip().split("\t")
        if not line.strip() or (lineno == 1 and parts[0] in ("query-id", "query_id", "qid")):
            continue
        if len(parts) < 3:
            parts = line.split()
        try:
            qid, did, grade = parts[0], parts[1], int(float(parts[2]))
        except (IndexError, ValueError) as exc:
            raise IngestError(
                f"{f}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score'",
                message=f"导入失败：qrels 行格式错误：{f} 第 {lineno} 行",
            ) from exc
        out.setdefault(qid, {})[did] = grade
    return out
