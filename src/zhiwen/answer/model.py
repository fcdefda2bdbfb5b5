"""The one answer and the one citation: what every app returns and every interface shows.

An :class:`Answer` leaves the answer stage (:mod:`zhiwen.answer.qa`) or an app and reaches REST,
SSE, the OpenAI front door, the CLI and the web UI as the same object; each interface builds
its wire schema directly from it. A :class:`Citation` is one source the answer stands on: a
search hit (:meth:`Citation.from_hit`) or a document aggregated from its passages
(:meth:`Citation.from_parent`), with provenance (file, page, section) read from its metadata.

App-specific payload (a listing's requirements, the advisor's plan) rides in ``Answer.data``.

Every answer also says which answer it is and how it was made, for the question log and the
feedback on it (#37) and the FAQ (#36): ``answer_id`` (set once per answer by the conversation
service, :func:`zhiwen.questionlog.new_answer_id`), ``answer_type`` (:data:`AnswerType`;
:func:`answer_type_of` decides it when the answerer did not), ``faq`` (the entry answered word for
word, :class:`FAQHit`) and ``suggestions`` (「您是不是想问：」 the near-miss FAQ questions).

Example::

    >>> c = Citation(id="law#3", title="出境入境管理法", metadata={"page": 12})
    >>> c.label
    '《出境入境管理法》第12页'
    >>> a = Answer(answer="可以免签入境 [1]", citations=[c], route="general", answerable=True)
    >>> a.done_fields()["route"], a.llm_used
    ('general', False)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from zhiwen.documents import ParentHit, SearchHit

#: how much of a passage a citation carries (the reader clicks through for the rest)
SNIPPET_MAX_CHARS = 300
#: the metadata a document's citation takes from its best passage (where the answer is)
_PASSAGE_KEYS = ("page", "page_end", "section")

#: how an answer was made: an FAQ entry word for word, written by the LLM, extracted from the
#: sources without it, refused (the sources did not answer), or an answerer's own kind (a
#: table's cell or SQL, a tool's result)
AnswerType = Literal["faq", "generated", "extractive", "refused", "table", "tool"]


class Citation(BaseModel):
    """One source an answer stands on, in the shape every app and route shares.

    ``source``/``page``/``page_end``/``section`` come from the chunk's metadata (every document
    loader sets them); ``label`` is the human form, e.g. ``《出境入境管理法》第12页``.
    """

    kb: str | None = Field(None, description="知识库")
    id: str = Field(description="文档或片段 ID")
    title: str = Field("", description="标题")
    text: str = Field("", description="相关片段（截断）")
    score: float | None = Field(None, description="检索得分")
    rerank_score: float | None = Field(None, description="重排得分")
    metadata: dict[str, Any] = Field(default_factory=dict, description="元数据")
    source: str | None = Field(None, description="来源文件名")
    page: int | None = Field(None, description="起始页码（PDF 页、PPT 幻灯片序号）")
    page_end: int | None = Field(None, description="结束页码")
    section: str | None = Field(None, description="章节路径，如「第三章 > 第一节」")
    label: str = Field("", description="引用标注，如《出境入境管理法》第12页")

    @model_validator(mode="after")
    def _provenance(self) -> Citation:
        """Fill the provenance fields from ``metadata`` when the caller did not set them."""
        meta = self.metadata
        if self.source is None and meta.get("source"):
            self.source = str(meta["source"])
        if self.page is None:
            self.page = _as_int(meta.get("page"))
        if self.page_end is None:
            self.page_end = _as_int(meta.get("page_end"))
        if self.section is None and meta.get("section"):
            self.section = str(meta["section"])
        if not self.label:
            self.label = citation_label(
                self.title or self.id, self.page, self.page_end, str(meta.get("format") or "")
            )
        return self

    @classmethod
    def from_hit(
        cls, hit: SearchHit, *, kb: str | None = None, max_chars: int = SNIPPET_MAX_CHARS
    ) -> Citation:
        """A passage: the chunk's own text, scores and metadata."""
        c = hit.chunk
        return cls(
            kb=kb,
            id=c.id,
            title=c.title or c.doc_id,
            text=c.text[:max_chars],
            score=round(float(hit.score), 6),
            rerank_score=None if hit.rerank_score is None else round(float(hit.rerank_score), 6),
            metadata=dict(c.metadata),
        )

    @classmethod
    def from_parent(
        cls, hit: ParentHit, *, kb: str | None = None, max_chars: int = SNIPPET_MAX_CHARS
    ) -> Citation:
        """A whole document, pointing at the page/section and text of its best passage."""
        doc = hit.document
        metadata = dict(doc.metadata)
        text = ""
        if hit.matched_chunks:
            best = max(hit.matched_chunks, key=lambda h: h.score).chunk
            text = best.text[:max_chars]
            for key in _PASSAGE_KEYS:
                if best.metadata.get(key) is not None:
                    metadata[key] = best.metadata[key]
        return cls(
            kb=kb, id=doc.id, title=doc.title or doc.id, text=text, score=round(float(hit.score), 6),
            metadata=metadata,
        )


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def citation_label(title: str, page: int | None, page_end: int | None, fmt: str = "") -> str:
    """``《出境入境管理法》第12页``, ``第12–13页`` across pages, ``第3张幻灯片`` for slides."""
    name = title.strip().strip("《》") or "未命名文档"
    label = f"《{name}》"
    if page is None:
        return label
    if fmt == "pptx":
        return label + f"第{page}张幻灯片"
    if fmt == "xlsx":
        return label + f"第{page}个工作表"
    if page_end is not None and page_end != page:
        return label + f"第{page}–{page_end}页"
    return label + f"第{page}页"


class FAQHit(BaseModel):
    """The FAQ entry an answer gives word for word: the entry question that matched, the score."""

    question: str = Field(description="匹配到的 FAQ 问题")
    score: float = Field(description="匹配得分（0–1）")
    entry_id: str = Field(description="FAQ 条目 ID")


class AnswerFields(BaseModel):
    """Which answer it is and how it was made: what every interface's answer schema carries next
    to the text and the sources (REST data, an app route's data, the OpenAI ``zhiwen``
    extension); filled from :meth:`Answer.identity_fields`."""

    answer_id: str = Field("", description="回答编号：评价（POST /api/v1/feedback）与问答记录用它")
    answer_type: AnswerType = Field(
        "extractive", description="回答方式：faq、generated、extractive、refused、table、tool"
    )
    faq: FAQHit | None = Field(None, description="逐字给出的 FAQ 条目：匹配到的问题、得分、条目 ID")
    suggestions: list[str] = Field(default_factory=list, description="您是不是想问：相近的 FAQ 问题")


class Answer(BaseModel):
    """An answer: text, citations, how it was made, and the app's own payload.

    ``route`` names the path that answered (recipes: list/detail/general; generic QA: general).
    ``answerable`` says whether the sources passed the KB's relevance floor (None: not judged).
    ``session_id`` is set by apps that keep a conversation. ``standalone_question`` is what was
    searched when the question followed a conversation (「理解为：…」; None: the question as asked).
    ``has_offline_note``: the text already says no LLM wrote it (set where that note is added: the
    answer stage's offline fallback, an app's own note), so an interface adds none of its own.
    ``data`` holds the app's own fields. ``answer_id``, ``answer_type``, ``faq`` and
    ``suggestions``: see the module's docstring ("" / None until the conversation service stamps
    the answer).
    """

    answer: str
    citations: list[Citation] = Field(default_factory=list)
    llm_used: bool = False
    extractive_reason: str | None = None  # why no LLM wrote it: no_llm, timeout, no_results …
    has_offline_note: bool = False  # the text carries the note that no LLM wrote it
    params: dict[str, Any] = Field(default_factory=dict)  # effective retrieval parameters
    route: str | None = None
    answerable: bool | None = None
    session_id: str | None = None
    standalone_question: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)  # app-specific fields (intent, plan …)
    answer_id: str = ""
    answer_type: AnswerType | None = None  # None: answer_type_of decides
    faq: FAQHit | None = None
    suggestions: list[str] = Field(default_factory=list)

    @property
    def kind(self) -> AnswerType:
        """``answer_type``, or what :func:`answer_type_of` makes of the answer when unset."""
        return answer_type_of(self)

    def identity_fields(self) -> dict[str, Any]:
        """What every interface carries next to the text and sources: the answer's id, type,
        FAQ entry and near-miss suggestions."""
        return {
            "answer_id": self.answer_id,
            "answer_type": self.kind,
            "faq": None if self.faq is None else self.faq.model_dump(),
            "suggestions": list(self.suggestions),
        }

    def done_fields(self) -> dict[str, Any]:
        """The stream's closing ``done`` event: everything except the text and the sources."""
        fields: dict[str, Any] = {
            **self.identity_fields(),
            "llm_used": self.llm_used,
            "extractive_reason": self.extractive_reason,
            "params": self.params,
        }
        if self.route is not None:
            fields["route"] = self.route
        if self.answerable is not None:
            fields["answerable"] = self.answerable
        if self.session_id is not None:
            fields["session_id"] = self.session_id
        if self.standalone_question is not None:
            fields["standalone_question"] = self.standalone_question
        return {**fields, **self.data}


def answer_type_of(answer: Answer) -> AnswerType:
    """How ``answer`` was made: its own ``answer_type`` when the answerer set one; else refused
    when its sources were judged not to answer, generated when the LLM wrote it, extractive when
    it did not (the one decision every interface and the question log read)."""
    if answer.answer_type is not None:
        return answer.answer_type
    if answer.faq is not None:
        return "faq"
    if answer.route == "table":
        return "table"
    if answer.answerable is False:
        return "refused"
    return "generated" if answer.llm_used else "extractive"
