"""Dialogues end to end through ``zhiwen.conversation.service.ask`` over a tiny KB (hash embedder).

The KB is a pool of near-identical recipe pages (24 dishes, one template) plus two statutes,
so a follow-up that names nothing (「要炖多久？」) matches every page alike: it finds its dish only
when the conversation stage carried the topic over. The same turns with the stage off are the
before of ``bench/bench_conversation.py``. With an LLM configured, the condense call goes to the
scripted fake server (``tests/support/fake_openai.py``); a garbage reply falls back to the
offline rules.
"""

from __future__ import annotations

from typing import Any

import pytest

from support.fake_openai import FakeOpenAI, Reply
from zhiwen.appkit.app import AppContext, AskRequest
from zhiwen.appkit.context import build_context
from zhiwen.appkit.registry import load_apps
from zhiwen.config import ConversationSettings, LLMSettings, Settings
from zhiwen.conversation import service as conversation
from zhiwen.conversation.condense import SYSTEM as CONDENSE_SYSTEM
from zhiwen.conversation.offline import OfflineCondenser
from zhiwen.conversation.vocabulary import kb_vocabulary
from zhiwen.kb import open_kb

KB = "conv-tiny"
#: (dish, main ingredient, minutes): one template, so only the dish name tells the pages apart
DISHES = [
    ("红烧肉", "五花肉", 60),
    ("糖醋排骨", "排骨", 40),
    ("土豆炖牛肉", "牛腩", 90),
    ("可乐鸡翅", "鸡翅", 20),
    ("啤酒鸭", "鸭肉", 30),
    ("萝卜炖羊排", "羊排", 70),
    ("黄焖鸡", "鸡腿", 25),
    ("梅菜扣肉", "五花肉", 120),
    ("酱牛肉", "牛腱子", 180),
    ("粉蒸肉", "五花肉", 50),
    ("红烧猪蹄", "猪蹄", 100),
    ("香菇炖鸡", "鸡块", 45),
    ("清炖羊肉", "羊肉", 80),
    ("排骨炖豆角", "排骨", 35),
    ("小鸡炖蘑菇", "鸡块", 40),
    ("西红柿牛腩", "牛腩", 95),
    ("腐乳肉", "五花肉", 75),
    ("红烧鸡翅", "鸡翅", 25),
    ("白菜猪肉炖粉条", "猪肉", 30),
    ("土豆炖排骨", "排骨", 55),
    ("咖喱牛肉", "牛肉", 65),
    ("酸菜炖排骨", "排骨", 60),
    ("红烧牛尾", "牛尾", 150),
    ("栗子焖鸡", "鸡块", 35),
]
STATUTES = {
    "契税法": "契税税率为百分之三至百分之五。转移土地、房屋权属，承受的单位和个人为契税的纳税人。",
    "增值税法": "增值税税率为百分之十三、百分之九、百分之六。在境内销售货物的单位和个人为增值税的纳税人。",
}
DIALOGUES: list[list[tuple[str, str]]] = [  # (user, gold document id)
    [("红烧肉怎么做？", "红烧肉"), ("要炖多久？", "红烧肉"), ("那糖醋排骨呢？", "糖醋排骨")],
    [("啤酒鸭需要哪些原料？", "啤酒鸭"), ("这道菜要炖多久？", "啤酒鸭")],
    [("契税法规定的税率是多少？", "契税法"), ("那增值税法呢？", "增值税法")],
]


def _dish_page(dish: str, main: str, minutes: int) -> str:
    return (
        f"# {dish}的做法\n\n预估烹饪难度：★★★\n\n## 必备原料和工具\n\n- {main}\n- 生姜\n- 生抽\n- 冰糖\n\n"
        f"## 操作\n\n- {main}切块焯水，捞出沥干\n- 下锅翻炒上色，加开水没过食材\n"
        f"- 大火烧开后转小火炖 {minutes} 分钟，收汁出锅\n"
    )


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("conv")
    docs = root / "docs"
    docs.mkdir()
    for dish, main, minutes in DISHES:
        (docs / f"{dish}.md").write_text(_dish_page(dish, main, minutes), "utf-8")
    for name, text in STATUTES.items():
        (docs / f"{name}.md").write_text(f"# {name}\n\n## 税率与纳税人\n\n{text}\n", "utf-8")
    s = Settings(home=root / "home", embedding={"provider": "hash"}, llm=LLMSettings())
    open_kb(KB, settings=s, create=True, embedder="hash").index_path(docs, fmt="markdown", progress=False)
    return s


def _ask(ctx: AppContext, history: list[dict[str, Any]], question: str) -> Any:
    return conversation.ask(
        load_apps().answerer(None), AskRequest(question=question, history=history, kb=KB), ctx
    )


def _run(ctx: AppContext, dialogue: list[tuple[str, str]]) -> list[list[str]]:
    """Each follow-up's first 5 distinct cited documents."""
    history: list[dict[str, Any]] = []
    cited = []
    for question, _gold in dialogue:
        answer = _ask(ctx, history, question)
        cited.append(list(dict.fromkeys(c.id for c in answer.citations))[:5])
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer.answer}]
    return cited[1:]


def _golds(dialogue: list[tuple[str, str]]) -> list[str]:
    return [gold for _question, gold in dialogue[1:]]


def test_follow_ups_find_their_documents_with_the_stage(settings: Settings) -> None:
    ctx = build_context(settings, llm=None)
    for dialogue in DIALOGUES:
        for gold, cited in zip(_golds(dialogue), _run(ctx, dialogue), strict=True):
            assert gold in cited, (dialogue, gold, cited)  # hit@5
            assert cited[0] == gold, (dialogue, gold, cited)  # and first


def test_the_stage_is_what_finds_them(settings: Settings) -> None:
    """Stage off (the benchmark's before): a follow-up that names nothing does not find its dish first."""
    off = settings.model_copy(update={"conversation": ConversationSettings(enabled=False)})
    ctx = build_context(off, llm=None)
    firsts = [
        cited[0] == gold
        for dialogue in DIALOGUES
        for gold, cited in zip(_golds(dialogue), _run(ctx, dialogue), strict=True)
    ]
    assert not all(firsts), "every follow-up found its document first with the stage off: the KB is too easy"


HISTORY = [
    {"role": "user", "content": "红烧肉怎么做？"},
    {"role": "assistant", "content": "五花肉切块焯水，下锅翻炒上色，小火炖 60 分钟。"},
]


@pytest.fixture
def llm_ctx(settings: Settings) -> Any:
    with FakeOpenAI() as fake:
        llm = LLMSettings(base_url=fake.base_url, api_key="x", model="fake", max_retries=0, timeout_s=5.0)
        s = settings.model_copy(
            update={"llm": llm, "conversation": ConversationSettings(condense_timeout_s=2.0)}
        )
        yield fake, build_context(s)


def _offline(settings: Settings, question: str) -> str:
    kb = open_kb(KB, settings=settings)
    return OfflineCondenser(kb_vocabulary(kb)).condense(HISTORY, question).question


def test_the_llm_condense_call_is_used(settings: Settings, llm_ctx: Any) -> None:
    fake, ctx = llm_ctx
    fake.script(Reply("红烧肉需要小火炖多长时间？"))  # the condense call; the answer gets the default
    answer = _ask(ctx, HISTORY, "要炖多久？")
    assert fake.requests[0]["messages"][0]["content"] == CONDENSE_SYSTEM
    assert answer.standalone_question == "红烧肉需要小火炖多长时间？"
    assert "红烧肉" in list(dict.fromkeys(c.id for c in answer.citations))[:5]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(""),
        Reply("<think>用户问的是什么呢，先想一想"),
        Reply("好的！根据上下文，我认为用户想问的是之前话题相关的内容，可以这样理解：" * 4),
        Reply.fault("500"),
    ],
    ids=["empty", "unclosed-think", "prose", "http-500"],
)
def test_a_garbage_reply_falls_back_to_the_offline_rewrite(
    settings: Settings, llm_ctx: Any, reply: Reply
) -> None:
    fake, ctx = llm_ctx
    fake.script(reply)
    answer = _ask(ctx, HISTORY, "要炖多久？")
    assert fake.requests[0]["messages"][0]["content"] == CONDENSE_SYSTEM
    assert answer.standalone_question == _offline(settings, "要炖多久？") == "红烧肉要炖多久？"


def test_an_answer_instead_of_a_question_falls_back(settings: Settings, llm_ctx: Any) -> None:
    fake, ctx = llm_ctx
    fake.script(Reply("大约需要一个小时。"))
    answer = _ask(ctx, HISTORY, "要炖多久？")
    assert answer.standalone_question == _offline(settings, "要炖多久？")
