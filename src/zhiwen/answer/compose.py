"""Scored units → the offline answer in markdown: a short cited lead, then the supporting passages.

Layout (answerable)::

    {the best units (one to five, each trimmed), at most ~200 characters} [1]

    **相关段落**

    - [1] 建立知识库与导入格式 › 支持的导入格式 › Markdown 目录
    - [2] 常见问题 › 导入相关：请确认路径正确、格式参数与文件类型一致……

Structure is kept, never flattened: a list item brings its list, a table row its table header, a
code block stays fenced, a sentence that introduces a list or code (ends with ``：``) brings it
along. A sentence longer than the budget is trimmed to the clauses around the question's terms.
Below the relevance floor the answer says so and lists the closest passages under **可能相关**.

Example::

    >>> q = analyse_question("怎么导入文档？")
    >>> composed = compose(q, score_units(q, candidates), answerable=True)
    >>> composed.lead
    '用 `zhiwen index` 命令把一个目录或文件导入知识库……：[1]\n\n```bash\nzhiwen index …\n```'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from zhiwen.answer.question_types import Question, has_type
from zhiwen.answer.scoring import QuestionTerms, ScoredUnit, unit_terms
from zhiwen.answer.units import Block, DocUnits, Unit

NOT_FOUND_LEAD = "知识库中没有找到与这个问题直接相关的内容。"
RELATED_HEADING = "**相关段落**"
MAYBE_HEADING = "**可能相关**"
_CLAUSE = re.compile(r".*?(?:[，,、：:；;。！？!?]+[”’」』）)\]】》\"']*|$)", re.S)
_INTRO_END = ("：", ":")
_NON_WORD = re.compile(r"[\W_]+")
# a sentence opening on a reference ("这种方式…", "上述规定…"), perhaps after a short opening phrase
# ("在我们的评测上，这种方式…"). Not 该/其/它: encyclopedia text uses them for the article's own
# subject ("该剧讲述……"), which the title already names.
_ANAPHOR = re.compile(r"^(?:[^，,。！？；]{1,14}[，,])?[\s“\"「（(]*(?:这|那|上述|以上|前者|后者)")
_ATTACH_MAX_CHARS = 600  # a list/table/code block brought along by its intro is kept whole up to this


@dataclass(frozen=True, slots=True)
class ComposeOptions:
    lead_max_chars: int = 200
    lead_max_units: int = 5
    lead_ratio: float = 0.5  # a further unit joins the lead when it scores at least this × the best
    unit_chars: int = 120  # each lead unit is trimmed to this (around the question) before it is fitted
    other_ratio: float | None = None  # units of other documents join at this × the best (None: halfway)
    passages: int = 3  # supporting passages listed (the lead's sources count)
    passage_chars: int = 80
    support_ratio: float = 0.6  # a source is listed when its best unit scores ≥ this × the best
    # … and speaks of the question: its share of the question's terms ≥ this × the best unit's
    # (retrieval's first choice too: a 婚假 passage is no support for a 住宿 question)
    support_evidence: float = 0.5
    # another document's sentence joins the lead only when it states the question's words as
    # much as the best one does (its own character bigrams ≥ this × the best's): a GPU FAQ's
    # 「可以。」 does not follow an answer about running without a large model
    other_source_grams: float = 0.6
    trim: bool = True  # trim long units to the clauses around the question's terms


@dataclass(slots=True)
class Composed:
    text: str  # the markdown answer body (no extractive note)
    lead: str
    cited: list[int] = field(default_factory=list)  # 1-based source numbers the lead cites


def context_label(doc: DocUnits, unit: Unit) -> str:
    """``标题 › 小节 › 子小节`` (the title once, even when it is also the first heading)."""
    parts = list(unit.path)
    if doc.title and (not parts or parts[0] != doc.title):
        parts.insert(0, doc.title)
    return " › ".join(p for p in parts if p)


def trim_units_text(text: str, q: QuestionTerms, question: Question, max_chars: int) -> str:
    """The window of consecutive clauses (≤ ``max_chars``) that holds most of the question."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    clauses = [c for c in _CLAUSE.findall(text) if c]
    best, best_score = (0, 1), -1.0
    for i in range(len(clauses)):
        size = 0
        for j in range(i, len(clauses)):
            size += len(clauses[j])
            if size > max_chars and j > i:
                break
            window = "".join(clauses[i : j + 1])
            score = q.coverage(unit_terms(window)) + 0.3 * has_type(window, question.answer_type, question)
            score -= 0.001 * i  # ties: earlier
            if score > best_score:
                best, best_score = (i, j + 1), score
    window = "".join(clauses[best[0] : best[1]]).strip()
    if len(window) > max_chars:
        window = window[: max_chars - 1]
    prefix = "……" if best[0] > 0 else ""
    suffix = "……" if best[1] < len(clauses) and not window.endswith(("。", "！", "？")) else ""
    return f"{prefix}{window}{suffix}"


def _block_markdown(doc: DocUnits, block: Block, only: Sequence[int] | None = None) -> str:
    units = doc.units[block.first : block.last]
    chosen = [u for k, u in enumerate(units, block.first) if only is None or k in only]
    if block.kind == "table":
        return "\n".join([block.header, *(u.text for u in chosen)])
    if block.kind == "list":
        return "\n".join(u.text for u in chosen)
    if block.kind == "code":
        return chosen[0].text if chosen else ""
    return "".join(u.text for u in chosen)


def _attached_block(doc: DocUnits, s: ScoredUnit) -> Block | None:
    """The list/table/code block a sentence introduces (it ends with ``：``, the block follows)."""
    unit = s.unit
    block = doc.blocks[unit.block]
    if unit.kind != "sentence" or s.index != block.last - 1 or not unit.plain.endswith(_INTRO_END):
        return None
    nxt = unit.block + 1
    if nxt < len(doc.blocks) and doc.blocks[nxt].kind != "paragraph" and doc.blocks[nxt].path == unit.path:
        return doc.blocks[nxt]
    return None


def _intro(doc: DocUnits, block: Block) -> Unit | None:
    """The sentence right before a list/table/code block in the same section, when it introduces it."""
    if block.first == 0:
        return None
    before = doc.units[block.first - 1]
    if before.kind == "sentence" and before.path == block.path and before.plain.endswith(_INTRO_END):
        return before
    return None


def _structured_lead(doc: DocUnits, s: ScoredUnit, budget: int) -> tuple[str, str] | None:
    """``(intro, block)`` for a list item, a table row or code — the structure around it, kept whole."""
    block = doc.blocks[s.unit.block]
    if s.unit.kind == "sentence":
        attached = _attached_block(doc, s)
        if attached is None:
            return None
        body = _block_markdown(doc, attached)
        return (s.unit.text, body) if len(body) <= _ATTACH_MAX_CHARS else None
    intro = _intro(doc, block)
    # without an intro sentence, the block's heading introduces it (context, not a ``##`` line)
    head = (
        intro.text
        if intro
        else (f"**{block.path[-1]}**" if block.path and block.path[-1] != doc.title else "")
    )
    if s.unit.kind == "code":
        return (head, s.unit.text)
    body = _block_markdown(doc, block)
    if len(body) > max(budget * 2, _ATTACH_MAX_CHARS):
        body = _block_markdown(doc, block, only=[s.index])
    return (head, body)


def _may_join(s: ScoredUnit, chosen: Sequence[ScoredUnit], same: bool) -> bool:
    """A sentence that reads on its own after the lead so far (``same``: of the best's section)."""
    if s.unit.kind != "sentence" or any(_same_text(s.unit.plain, c.unit.plain) for c in chosen):
        return False  # news sources repeat each other's sentences: say it once
    if s.unit.plain.endswith(_INTRO_END):
        return False  # "…如下：" without the list or code it introduces reads as cut off
    # "这种方式…" under another heading speaks of that heading's subject
    return same or not _dangling(s)


def _joins_from_elsewhere(q: QuestionTerms, s: ScoredUnit, best: ScoredUnit, options: ComposeOptions) -> bool:
    """Whether a unit of another document says as much of the question as the best unit does
    (the question's character bigrams in the sentence itself, headings left out)."""
    if s.candidate is best.candidate:
        return True
    return q.gram_share(s.unit.plain) >= options.other_source_grams * q.gram_share(best.unit.plain)


def _lead_units(
    scored: Sequence[ScoredUnit],
    options: ComposeOptions,
    size: Callable[[ScoredUnit], int],
    q: QuestionTerms | None = None,
) -> list[ScoredUnit]:
    """The best unit, then up to ``lead_max_units - 1`` more that score close to it and fit the budget.

    Units of the best unit's own section join at ``lead_ratio`` × the best score; units of other
    sections and documents must come closer (halfway between that and the best), so one source leads.
    """
    best = scored[0]
    chosen = [best]
    used = size(best)
    other_ratio = (1 + options.lead_ratio) / 2 if options.other_ratio is None else options.other_ratio
    for s in scored[1:8]:
        if len(chosen) >= options.lead_max_units or s.score < options.lead_ratio * best.score:
            break
        # another section of the same document speaks of something else ("这种方式" is not the best's)
        same = s.candidate is best.candidate and s.unit.path == best.unit.path
        if not same and s.score < other_ratio * best.score:
            continue
        if not _may_join(s, chosen, same) or used + size(s) > options.lead_max_chars:
            continue
        if q is not None and not _joins_from_elsewhere(q, s, best, options):
            continue
        chosen.append(s)
        used += size(s)
    # the best first; the sentence right after an earlier choice (same block) follows it
    runs: list[list[ScoredUnit]] = []
    for s in chosen:
        run = next((r for r in runs if _adjacent(r, s)), None)
        if run is None:
            runs.append([s])
        else:
            run.append(s)
            run.sort(key=lambda u: u.index)
    return [s for run in runs for s in run]


def _dangling(s: ScoredUnit) -> bool:
    """The unit opens on a reference to what comes before it in its block (这种方式…, 上述…)."""
    block = s.candidate.doc.blocks[s.unit.block]
    return s.unit.kind == "sentence" and s.index > block.first and bool(_ANAPHOR.match(s.unit.plain))


def _heading_share(q: QuestionTerms, s: ScoredUnit) -> float:
    return q.coverage(unit_terms(" ".join(s.unit.path))) if s.unit.path else 0.0


def _referent_first(
    scored: Sequence[ScoredUnit], q: QuestionTerms, options: ComposeOptions
) -> Sequence[ScoredUnit]:
    """A best unit that speaks of "这种方式" gives way to a close one whose heading names the
    question's subject better (its own heading names what "这种方式" is, and that is not it)."""
    best = scored[0]
    if not _dangling(best):
        return scored
    for k, s in enumerate(scored[1:8], 1):
        if s.score < options.lead_ratio * best.score:
            break
        if not _dangling(s) and _heading_share(q, s) > _heading_share(q, best):
            return [s, *scored[:k], *scored[k + 1 :]]
    return scored


def _same_text(a: str, b: str) -> bool:
    """The same sentence up to spacing and punctuation, or one a (truncated) copy of the other."""
    a, b = _NON_WORD.sub("", a), _NON_WORD.sub("", b)
    if not a or not b:
        return a == b
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return short in long or (len(short) >= 20 and long.startswith(short[:20]))


def _adjacent(run: Sequence[ScoredUnit], s: ScoredUnit) -> bool:
    return any(
        u.candidate is s.candidate and u.unit.block == s.unit.block and s.index - u.index == 1 for u in run
    )


def _join(pieces: Sequence[str]) -> str:
    """Concatenate lead pieces: a space only between two Latin ends (``… [1] Then …``)."""
    out = ""
    for piece in pieces:
        if out and out[-1].isascii() and piece[:1].isascii() and not out[-1].isspace():
            out += " "
        out += piece
    return out


def _cite(text: str, cite: int) -> str:
    """``text[n]`` right after the text (a space first after Latin text)."""
    text = text.rstrip()
    latin = text[-1:].isascii() and not text.endswith(("**", "`"))
    return f"{text} [{cite}]" if latin else f"{text}[{cite}]"


def compose_lead(
    question: Question, q: QuestionTerms, scored: Sequence[ScoredUnit], options: ComposeOptions
) -> tuple[str, list[int]]:
    """The lead text (cited) and the source numbers it cites."""
    scored = _referent_first(scored, q, options)
    best = scored[0]
    structured = _structured_lead(best.candidate.doc, best, options.lead_max_chars)
    if structured is not None:
        cite = best.candidate.rank + 1
        intro, block = structured
        # the marker right after the lead's words; a block without an intro gets it on its own line
        lead = f"{_cite(intro, cite)}\n\n{block}" if intro else f"{block}\n\n[{cite}]"
        return lead, [cite]
    cap = options.unit_chars if options.trim else 10**6
    trimmed: dict[int, str] = {}

    def text_of(s: ScoredUnit) -> str:
        key = id(s)
        if key not in trimmed:
            trimmed[key] = trim_units_text(s.unit.text, q, question, cap) if options.trim else s.unit.text
        return trimmed[key]

    units = _lead_units(scored, options, lambda s: len(text_of(s)) + 3, q)  # + its marker
    kept: list[tuple[ScoredUnit, str]] = []
    used = 0
    for s in units:
        text = text_of(s)
        room = options.lead_max_chars - used - 3
        if len(text) > room and options.trim:
            if kept and room < 30:
                continue  # no room left for a readable piece
            text = trim_units_text(text, q, question, max(room, 30))
        kept.append((s, text))
        used += len(text) + 3
    return _cited_runs(kept)


def _cited_runs(kept: Sequence[tuple[ScoredUnit, str]]) -> tuple[str, list[int]]:
    """The lead: each source's run of sentences cited where it ends; runs of different sources on
    lines of their own, so two documents never read as one statement."""
    runs: list[list[str]] = []
    cites: list[int] = []
    for k, (s, text) in enumerate(kept):
        cite = s.candidate.rank + 1
        if k == 0 or kept[k - 1][0].candidate.rank != s.candidate.rank:
            runs.append([])
        last_of_source = k + 1 == len(kept) or kept[k + 1][0].candidate.rank != s.candidate.rank
        runs[-1].append(_cite(text, cite) if last_of_source else text)
        if cite not in cites:
            cites.append(cite)
    return "\n".join(_join(run) for run in runs), cites


def _passage_line(s: ScoredUnit, q: QuestionTerms, question: Question, options: ComposeOptions) -> str:
    doc = s.candidate.doc
    label = context_label(doc, s.unit)
    snippet = (
        trim_units_text(s.unit.plain, q, question, options.passage_chars) if s.unit.kind != "code" else ""
    )
    cite = f"[{s.candidate.rank + 1}]"
    head = f"- {cite} {label}" if label else f"- {cite}"
    return f"{head}：{snippet}" if snippet else head


def _supports(s: ScoredUnit, best: ScoredUnit, cite: int, options: ComposeOptions) -> bool:
    """A close runner-up, or retrieval's own first choice when the lead came from elsewhere —
    either only when it speaks of the question (its term share near the best unit's)."""
    if s.evidence < options.support_evidence * best.evidence:
        return False
    return s.score >= options.support_ratio * best.score or cite == 1


def compose(
    question: Question,
    scored: Sequence[ScoredUnit],
    *,
    answerable: bool,
    options: ComposeOptions = ComposeOptions(),
) -> Composed:
    """The answer body (see the module docstring). ``scored`` is best first and not empty."""
    q = QuestionTerms.of(question)
    best_per_source: dict[int, ScoredUnit] = {}
    for s in scored:
        best_per_source.setdefault(s.candidate.rank, s)
    ranked_sources = sorted(best_per_source.values(), key=lambda s: -s.score)
    if not answerable:
        lines = [_passage_line(s, q, question, options) for s in ranked_sources[: options.passages]]
        return Composed(f"{NOT_FOUND_LEAD}\n\n{MAYBE_HEADING}\n\n" + "\n".join(lines), NOT_FOUND_LEAD)
    lead, cites = compose_lead(question, q, scored, options)
    lines = []
    for s in ranked_sources[: options.passages]:
        cite = s.candidate.rank + 1
        if cite in cites:
            label = context_label(s.candidate.doc, s.unit)
            if label:  # the lead already quotes it: only where it comes from
                lines.append(f"- [{cite}] {label}")
        elif _supports(s, scored[0], cite, options):
            lines.append(_passage_line(s, q, question, options))
    body = lead if not lines else f"{lead}\n\n{RELATED_HEADING}\n\n" + "\n".join(lines)
    return Composed(body, lead, cites)
