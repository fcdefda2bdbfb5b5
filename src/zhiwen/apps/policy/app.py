"""The policy QA app object: visa-free, airline/crew and general statutes.

``setup(DATA_DIR)`` builds the KBs the mapping (``data/kbs.toml`` or ``ZHIWEN_POLICY__KB_CONFIG``)
describes; a turn reads a follow-up with the countries' names (:mod:`.followup`), then ``answer``
runs intent → rewrite → dual/single retrieval → answer (see :mod:`.service`).

Example::

    >>> from zhiwen.apps.policy import app
    >>> ctx = build_context()
    >>> app.setup(Path("../shared/data"), ctx).kbs
    {'policy_visa': 225, 'policy_airline': 111, 'policy_general': 1007}
    >>> answer = app.ask(AskRequest(question="中国公民去泰国需要签证吗？"), ctx)
    >>> answer.data["intent"], answer.data["strategy"]
    ('visa_free', 'dual')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from zhiwen.appkit import Answer, AppContext, AppEvent, AskRequest, BaseApp, KBSpec, SetupReport, Standalone
from zhiwen.errors import IngestError

from .corpus import build_corpus
from .kbconfig import KBEntry
from .settings import policy_settings

if TYPE_CHECKING:
    from zhiwen.appkit.setup import KBBuild


class PolicyOptions(BaseModel):
    """What a policy question may add (``AskRequest.options``; the OpenAI front door's options)."""

    model_config = ConfigDict(extra="forbid")

    as_of: str | None = Field(None, max_length=32, description="政策问答：按此日期（ISO）判断政策是否有效")
    top_n: StrictInt | None = Field(None, ge=1, le=50, description="政策问答：来源数量")


class PolicyApp(BaseApp):
    name = "policy"
    title = "政策问答"
    description = "出入境免签、机组人员与相关法规问答：意图分类、问题改写、双问题检索与独立重排序"
    kbs = (
        KBSpec("policy_visa", "免签库：各国免签政策表与政策说明"),
        KBSpec("policy_airline", "航司库：机组、过境、口岸相关条款"),
        KBSpec("policy_general", "通用库：全部法规"),
    )
    options_model = PolicyOptions

    def setup(
        self, data_dir: Path, ctx: AppContext, *, progress: bool = True, wait: bool = True
    ) -> SetupReport:
        """Build every KB of the mapping that has sources (a KB without sources is left alone):
        each KB's text index, named as it goes, then the vectors (``wait``) or a note on them."""
        from zhiwen.appkit.setup import run_setup

        from .service import kb_config

        data_dir = Path(data_dir)
        if not data_dir.is_dir():
            raise IngestError(f"not a directory: {data_dir}", message=f"数据目录不存在：{data_dir}")
        cfg = kb_config(policy_settings(ctx.settings))
        vectors = policy_settings(ctx.settings).vectors
        builds = [self._build(role, e, data_dir, vectors) for role, e in cfg.kbs.items() if e.sources]
        report = run_setup(self.name, builds, ctx, progress=progress, wait=wait)
        skipped = [entry.name for entry in cfg.kbs.values() if not entry.sources]
        report.notes[:0] = [f"{name}：未配置数据源，跳过（请自行导入）" for name in skipped]
        return report

    def _build(self, role: str, entry: KBEntry, data_dir: Path, vectors: bool | None) -> KBBuild:
        """One KB of the mapping: described as the app declares it (or as the mapping does)."""
        from zhiwen.appkit.setup import KBBuild
        from zhiwen.ingest.base import Corpus

        declared = {spec.name: spec for spec in self.kbs}
        spec = declared.get(entry.name) or KBSpec(entry.name, entry.description or role)

        def load() -> Corpus:
            corpus = build_corpus(entry, data_dir, role=role)
            corpus.warnings = [f"{entry.name}：{note}" for note in corpus.warnings]
            return corpus

        return KBBuild(spec, load, vectors=vectors)

    def resolve(self, request: AskRequest, state: Mapping[str, Any], ctx: AppContext) -> Standalone:
        """The condenser with every country's names; the last question rides along for the
        intent a follow-up keeps (:mod:`.followup`)."""
        from .followup import follow_up

        return follow_up(request.question, request.history, ctx)

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        """Options: ``top_n`` (default ``rerank_top_n``), ``as_of`` (ISO date, default today)."""
        from .service import ask_policy

        top_n = request.options.get("top_n", request.top_k)
        as_of = request.options.get("as_of")
        return ask_policy(request.question, ctx, top_n=top_n, as_of=as_of, standalone=question).to_answer()

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Iterator[AppEvent]:
        from .service import stream_policy

        top_n = request.options.get("top_n", request.top_k)
        as_of = request.options.get("as_of")
        return stream_policy(request.question, ctx, top_n=top_n, as_of=as_of, standalone=question)

    def render(self, answer: Answer) -> bool:
        from .cli import render

        render(answer.data)
        return True

    def router(self) -> Any:
        from .api import router

        return router

    def cli(self) -> typer.Typer | None:
        from .cli import commands

        return commands(self)


app = PolicyApp()
