"""``AdvisorApp``: the house-buying advisor as a zhiwen app.

Four roles (政策专家, 市场分析师, 财务顾问, 购房顾问) answer through eight tools; standard mode runs
the planned roles in order, discussion mode (深度分析) lets them negotiate a plan. ``setup``
builds the statute and FAQ knowledge bases and the market tables from a data directory.

Example::

    >>> ctx = build_context()
    >>> app.setup(Path("../shared/data"), ctx)                      # KBs + market tables
    >>> answer = app.ask(AskRequest(question="总价300万，首付三成，贷款30年，利率3.1%，月供多少？"), ctx)
    >>> answer.data["roles"][0]["tool_calls"][0]["result"]["monthly_payment"]
    8967.34
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zhiwen.answer.events import AppEvent, collect_stream
from zhiwen.appkit.app import (
    Answer,
    AppContext,
    AskRequest,
    BaseApp,
    EventText,
    KBSpec,
    SetupReport,
    Standalone,
)
from zhiwen.apps.advisor.event_text import AdvisorEventText
from zhiwen.apps.advisor.followup import resolve_advisor
from zhiwen.apps.advisor.kb import faq_documents, find_law_dir, rule_documents, statute_documents
from zhiwen.apps.advisor.market import build_market, market_path
from zhiwen.apps.advisor.service import chat
from zhiwen.apps.advisor.settings import advisor_settings
from zhiwen.apps.advisor.tools import FAQ_KB, POLICY_KB

if TYPE_CHECKING:
    import typer
    from fastapi import APIRouter


class AdvisorOptions(BaseModel):
    """What an advisor question may add (``AskRequest.options``; the OpenAI front door's options)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["standard", "discussion"] | None = Field(None, description="购房顾问：discussion 深度分析")


class AdvisorApp(BaseApp):
    name = "advisor"
    title = "购房顾问"
    description = (
        "购房决策助手：贷款与税费计算、还款压力评估、政策法规检索、二手房行情对比，多角色协作与深度讨论"
    )
    kbs = (
        KBSpec(POLICY_KB, "购房相关法规（契税法、增值税法、个人所得税法、住房公积金管理条例等）与计算规则"),
        KBSpec(FAQ_KB, "购房常见问题"),
    )
    options_model = AdvisorOptions

    def event_text(self) -> EventText:
        return AdvisorEventText()

    def setup(
        self, data_dir: Path, ctx: AppContext, *, progress: bool = True, wait: bool = True
    ) -> SetupReport:
        """The market tables, then the policy KB (statutes + rules) and the FAQ KB: their text
        indexes, then the vectors (``wait``) or a note on them."""
        from zhiwen.appkit.setup import KBBuild, run_setup
        from zhiwen.ingest.base import Corpus

        start = time.perf_counter()
        data_dir = Path(data_dir)
        law_dir = find_law_dir(data_dir)  # missing statutes fail before anything is written
        say = _printer(progress)
        say("市场数据表（链家二手房挂牌快照）…")
        market = build_market(data_dir)
        market.save(market_path(ctx.settings.home))
        market_s = time.perf_counter() - start

        def policy() -> Corpus:
            docs, chunks = statute_documents(law_dir)
            rule_docs, rule_chunks = rule_documents()
            return Corpus(docs + rule_docs, chunks + rule_chunks)

        def faq() -> Corpus:
            return Corpus(*faq_documents())

        policy_spec, faq_spec = self.kbs
        vectors = advisor_settings(ctx.settings).vectors  # the user's override, if any
        builds = [KBBuild(policy_spec, policy, vectors), KBBuild(faq_spec, faq, vectors)]
        report = run_setup(self.name, builds, ctx, progress=progress, wait=wait, say=say)
        cities = "、".join(market.cities)
        report.notes.insert(0, f"市场数据：{len(market.listings)} 套挂牌房源，城市：{cities}")
        report.text_ready_seconds += market_s  # the market tables come first: they count too
        report.seconds += market_s
        return report

    def resolve(self, request: AskRequest, state: Mapping[str, Any], ctx: AppContext) -> Standalone:
        """The conversation's facts with this question's merged in (:mod:`.followup`)."""
        return resolve_advisor(request, state)

    def answer(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Answer:
        """A standard (or ``options["mode"]``) turn, collected into one answer."""
        return collect_stream(self.answer_stream(request, question, ctx))

    def answer_stream(self, request: AskRequest, question: Standalone, ctx: AppContext) -> Iterator[AppEvent]:
        """The events of ``POST /api/v1/chat``: facts, role_start, role_result, discussion, done."""
        _, events = chat(ctx, request, question)
        return events

    def router(self) -> APIRouter:
        from zhiwen.apps.advisor.api import build_router

        return build_router(self)

    def cli(self) -> typer.Typer:
        from zhiwen.apps.advisor.cli import build_cli

        return build_cli(self)


def _printer(enabled: bool) -> Callable[[str], None]:
    from zhiwen.clikit.console import console

    def say(text: str) -> None:
        if enabled:
            console.print(text, highlight=False)

    return say


app = AdvisorApp()
