"""What the README's commands read, made at test time: a newcomer's files and a data subset.

* :func:`make_files` writes the files the README names in its working directory (``notes.csv``,
  ``./政策文件``, ``./扫描件``, ``通知.pdf``, ``制度.docx``, ``扫描件.pdf``, ``queries.jsonl``,
  ``qrels.tsv``). Nothing binary is committed: the PDF is written by hand (Chinese text through
  Adobe's predefined STSong-Light font, so no font is embedded and no browser is needed), the
  DOCX with python-docx, the scan is that PDF rendered to an image-only PDF.
* :func:`make_subset` builds a small ``shared/data`` from the real one for the blocks marked
  ``data="subset"``: the first queries of each BEIR set with their positives plus some other
  passages, the first rows of each listings CSV; the small folders are linked as they are.

Example::

    subset = make_subset(SHARED_DATA, tmp / "subset" / "data")
    make_files(workdir, subset)
"""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

from doc_fixtures import md_to_docx, scan_pdf

QUERIES = 40  # per BEIR set: enough for eval and tune's halves (tune needs ≥ 8)
OTHER_PASSAGES = 300  # passages besides the positives: something to rank them against
LISTINGS_ROWS = 300  # per city

NOTES_CSV = """id,title,body
n1,周会纪要,本周完成知识库导入功能，下周评测检索效果。
n2,报销流程,出差回来五个工作日内在系统提交报销单，附上发票原件。
n3,年假规定,入职满一年的员工每年有五天带薪年假，可分两次休完。
"""

POLICY_MD = """# 差旅管理办法

## 第一章 总则

第一条 为规范公司差旅管理，制定本办法。

## 第二章 住宿标准

第二条 一线城市住宿每晚不超过六百元，其他城市不超过四百元。
"""

HOLIDAY_TXT = "关于端午节放假的通知\n端午节放假三天，6月10日正常上班。\n请各部门做好值班安排。\n"

NOTICE_LINES = ["关于办公室搬迁的通知", "公司将于7月1日迁至新办公楼五层。", "搬迁期间请各部门妥善保管文件。"]

RULES_MD = """# 考勤制度

## 上下班时间

工作日上午九点上班，下午六点下班。

## 请假

请假一天以内由部门经理审批，超过一天由人事部审批。
"""


def cjk_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose text layer holds ``lines`` (UCS-2 codes, STSong-Light, not embedded)."""
    body = ["BT", "/F1 14 Tf", "72 760 Td", "20 TL"]
    body += [f"<{line.encode('utf-16-be').hex().upper()}> Tj T*" for line in lines]
    stream = "\n".join([*body, "ET"]).encode("ascii")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H "
        b"/DescendantFonts [6 0 R] >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light "
        b"/CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> /FontDescriptor 7 0 R >>",
        b"<< /Type /FontDescriptor /FontName /STSong-Light /Flags 6 /FontBBox [-25 -254 1000 880] "
        b"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 /StemV 93 >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def make_files(workdir: Path, beir: Path | None) -> None:
    """The files the README's blocks name, in ``workdir`` (``beir``: the set behind
    ``queries.jsonl`` and ``qrels.tsv``; None without the shared data)."""
    (workdir / "notes.csv").write_text(NOTES_CSV, "utf-8")
    policies = workdir / "政策文件"
    policies.mkdir(parents=True, exist_ok=True)
    (policies / "差旅管理办法.md").write_text(POLICY_MD, "utf-8")
    (policies / "放假通知.txt").write_bytes(HOLIDAY_TXT.encode("gbk"))  # 「TXT (GBK too)」
    (policies / "搬迁通知.pdf").write_bytes(cjk_pdf(NOTICE_LINES))
    md_to_docx(RULES_MD, policies / "考勤制度.docx", title="考勤制度")
    (workdir / "通知.pdf").write_bytes(cjk_pdf(NOTICE_LINES))
    shutil.copy(policies / "考勤制度.docx", workdir / "制度.docx")
    scans = workdir / "扫描件"
    scans.mkdir(exist_ok=True)
    scan_pdf(workdir / "通知.pdf", scans / "搬迁通知.pdf", crop=0.2)
    shutil.copy(scans / "搬迁通知.pdf", workdir / "扫描件.pdf")
    if beir is not None:
        shutil.copy(beir / "queries.jsonl", workdir / "queries.jsonl")
        shutil.copy(beir / "qrels" / "test.tsv", workdir / "qrels.tsv")


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _beir_subset(src: Path, dst: Path) -> None:
    """The first :data:`QUERIES` queries that have qrels, their positives and some other passages."""
    qrels = list(csv.reader((src / "qrels" / "test.tsv").open(encoding="utf-8"), delimiter="\t"))
    header, rows = qrels[0], qrels[1:]
    judged = {r[0] for r in rows}
    queries = [q for q in _jsonl(src / "queries.jsonl") if q["_id"] in judged][:QUERIES]
    keep_q = {str(q["_id"]) for q in queries}
    positives = {r[1] for r in rows if r[0] in keep_q}
    corpus = _jsonl(src / "corpus.jsonl")
    others = [d for d in corpus if d["_id"] not in positives][:OTHER_PASSAGES]
    (dst / "qrels").mkdir(parents=True, exist_ok=True)
    _write_jsonl(dst / "queries.jsonl", queries)
    _write_jsonl(dst / "corpus.jsonl", [d for d in corpus if d["_id"] in positives] + others)
    with (dst / "qrels" / "test.tsv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, delimiter="\t", lineterminator="\n").writerows(
            [header, *[r for r in rows if r[0] in keep_q]]
        )
    if (src / "answers.jsonl").is_file():
        answers = [a for a in _jsonl(src / "answers.jsonl") if a.get("query_id") in keep_q]
        _write_jsonl(dst / "answers.jsonl", answers)


def _csv_head(src: Path, dst: Path, rows: int) -> None:
    with src.open(encoding="utf-8", newline="") as fin, dst.open("w", encoding="utf-8", newline="") as fout:
        writer = csv.writer(fout)
        for i, row in enumerate(csv.reader(fin)):
            if i > rows:
                break
            writer.writerow(row)


def make_subset(shared: Path, dst: Path) -> Path:
    """A small copy of ``shared`` (the real ``shared/data``) at ``dst``; returns ``dst``."""
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("rgb_zh_retrieval", "cmrc2018_retrieval"):
        _beir_subset(shared / name, dst / name)
    listings = dst / "lianjia_ershoufang"
    listings.mkdir(exist_ok=True)
    for csv_file in sorted((shared / "lianjia_ershoufang").glob("*.csv")):
        _csv_head(csv_file, listings / csv_file.name, LISTINGS_ROWS)
    for entry in shared.iterdir():  # the rest as it is (small, or not read by any block)
        if not (dst / entry.name).exists():
            (dst / entry.name).symlink_to(entry)
    return dst
