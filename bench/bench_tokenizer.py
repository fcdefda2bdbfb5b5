"""jieba vs rjieba: segmentation speed and token agreement on real Chinese corpora.

For each corpus (RGB-zh and CMRC2018 passages from ``../shared/data``, BEIR layout) and each mode
(``cut`` and ``cut_for_search``, HMM on, as zhiwen's Tokenizer uses them) it reports:

- throughput of jieba and rjieba in tokens/s and chars/s (dictionary loading excluded, timed
  separately), and the speed-up;
- agreement: the share of passages whose token sequences are identical, the same share counting
  only tokens with Chinese characters (the two differ only on Latin/number runs such as
  ``2023-08-08``, which rjieba keeps whole), and the token-level F1 between the two
  segmentations (multiset overlap) over the whole corpus;
- zhiwen's ``Tokenizer.tokenize`` throughput (segmentation + normalisation + stop words).

Usage::

    python bench/bench_tokenizer.py                     # both corpora, markdown table
    python bench/bench_tokenizer.py --limit 1000 --json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("ZHIWEN_SHARED_DATA", REPO.parent / "shared" / "data"))
CORPORA = {"RGB-zh": "rgb_zh_retrieval", "CMRC2018": "cmrc2018_retrieval"}


def load_texts(name: str, limit: int | None) -> list[str]:
    from zhiwen.ingest import load_corpus

    docs = load_corpus(DATA / name, "beir").documents
    texts = [f"{d.title}\n{d.text}" if d.title else d.text for d in docs]
    return texts[:limit] if limit else texts


def timed(fn: Any, texts: list[str]) -> tuple[list[list[str]], float]:
    start = time.perf_counter()
    out = [list(fn(t)) for t in texts]
    return out, time.perf_counter() - start


_CJK = re.compile(r"[\u4e00-\u9fff]")


def agreement(a: list[list[str]], b: list[list[str]]) -> tuple[float, float, float]:
    same = sum(x == y for x, y in zip(a, b, strict=True)) / len(a)
    same_cjk = sum(
        [t for t in x if _CJK.search(t)] == [t for t in y if _CJK.search(t)]
        for x, y in zip(a, b, strict=True)
    ) / len(a)
    overlap = total_a = total_b = 0
    for x, y in zip(a, b, strict=True):
        ca, cb = Counter(x), Counter(y)
        overlap += sum((ca & cb).values())
        total_a += len(x)
        total_b += len(y)
    f1 = 2 * overlap / (total_a + total_b) if total_a + total_b else 1.0
    return same, same_cjk, f1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="passages per corpus (default: all)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not DATA.is_dir():
        sys.exit(f"shared data not found at {DATA} (set ZHIWEN_SHARED_DATA)")

    import jieba
    import rjieba

    from zhiwen.text.tokenizer import Tokenizer

    jieba.setLogLevel(60)
    t0 = time.perf_counter()
    jieba.initialize()
    jieba_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    rjieba.cut("预热")
    rjieba_load = time.perf_counter() - t0

    rows: list[dict[str, Any]] = []
    for label, folder in CORPORA.items():
        texts = load_texts(folder, args.limit)
        chars = sum(len(t) for t in texts)
        for mode in ("cut", "cut_for_search"):
            j_fn = (lambda t: jieba.cut(t, HMM=True)) if mode == "cut" else jieba.cut_for_search
            r_fn = (
                (lambda t: rjieba.cut(t, True))
                if mode == "cut"
                else (lambda t: rjieba.cut_for_search(t, True))
            )
            j_tok, j_s = timed(j_fn, texts)
            r_tok, r_s = timed(r_fn, texts)
            n_tok = sum(len(x) for x in j_tok)
            same, same_cjk, f1 = agreement(j_tok, r_tok)
            rows.append(
                {
                    "corpus": label,
                    "passages": len(texts),
                    "chars": chars,
                    "mode": mode,
                    "tokens": n_tok,
                    "jieba_s": round(j_s, 3),
                    "rjieba_s": round(r_s, 3),
                    "jieba_tok_per_s": round(n_tok / j_s),
                    "rjieba_tok_per_s": round(sum(len(x) for x in r_tok) / r_s),
                    "jieba_chars_per_s": round(chars / j_s),
                    "rjieba_chars_per_s": round(chars / r_s),
                    "speedup": round(j_s / r_s, 1),
                    "identical_passages": round(same, 4),
                    "identical_chinese_tokens": round(same_cjk, 4),
                    "token_f1": round(f1, 5),
                }
            )
        tok = Tokenizer()
        z_tok, z_s = timed(tok.tokenize, texts)
        rows[-1]["zhiwen_tokenize_s"] = round(z_s, 3)
        rows[-1]["zhiwen_tok_per_s"] = round(sum(len(x) for x in z_tok) / z_s)

    result = {
        "jieba_dict_load_s": round(jieba_load, 3),
        "rjieba_first_call_s": round(rjieba_load, 3),
        "runs": rows,
    }
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    print(f"dictionary load: jieba {jieba_load:.2f} s, rjieba first call {rjieba_load:.3f} s\n")
    print(
        "| corpus | mode | passages | tokens | jieba tok/s | rjieba tok/s | speed-up "
        "| identical passages | identical (Chinese tokens) | token F1 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['corpus']} | {r['mode']} | {r['passages']:,} | {r['tokens']:,} "
            f"| {r['jieba_tok_per_s']:,} | {r['rjieba_tok_per_s']:,} | {r['speedup']}× "
            f"| {r['identical_passages']:.2%} | {r['identical_chinese_tokens']:.2%} | {r['token_f1']:.4f} |"
        )
    print()
    for r in rows:
        if "zhiwen_tokenize_s" in r:
            print(
                f"zhiwen Tokenizer.tokenize on {r['corpus']}: {r['zhiwen_tokenize_s']} s, "
                f"{r['zhiwen_tok_per_s']:,} tokens/s (after stop words and punctuation)"
            )


if __name__ == "__main__":
    main()
