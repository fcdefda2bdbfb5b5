"""Follow-ups among look-alike pages: the sibling names of a KB's titles, the generic noun and
part rules of the offline condenser, the focus it hands retrieval (hypothesis for what must
never happen), and a tiny look-alike pool end to end (hash embedder, generic QA).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.appkit.app import AskRequest
from zhiwen.appkit.context import build_context
from zhiwen.appkit.registry import load_apps
from zhiwen.config import ConversationSettings, LLMSettings, Settings
from zhiwen.conversation import service as conversation
from zhiwen.conversation.condense import condense
from zhiwen.conversation.offline import OfflineCondenser
from zhiwen.conversation.vocabulary import SIBLING, TITLE, Vocabulary, sibling_names, titles_vocabulary
from zhiwen.kb import open_kb

UNIVERSITIES = ("东湖大学", "西岭大学", "南江大学", "北辰大学")
COLLEGES = ("计算机学院", "外国语学院", "法学院", "经济管理学院")
HEADINGS = ("概况", "师资队伍", "本科生培养", "毕业生就业", "联系方式", "招生信息")
MAJORS = {"计算机学院": ("软件工程", "人工智能"), "外国语学院": ("英语", "日语"), "法学院": ("法学",),
          "经济管理学院": ("会计学", "金融学")}  # fmt: skip
TITLES = [f"{u}{c}{h}" for u in UNIVERSITIES for c in COLLEGES for h in HEADINGS] + [
    f"{u}{c}{m}专业介绍" for u in UNIVERSITIES for c in COLLEGES for m in MAJORS[c]
]
VOCABULARY = titles_vocabulary(TITLES)
CONDENSER = OfflineCondenser(VOCABULARY)
TOPIC = "东湖大学计算机学院"


def turns(*pairs: tuple[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for question, answer in pairs:
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


OPENED = turns((f"{TOPIC}是哪一年成立的？", "学院始建于1978年。[1]"))


# -- the vocabulary ------------------------------------------------------------------------------
def test_sibling_names_are_the_organisations_in_front_of_the_shared_headings() -> None:
    names = sibling_names(TITLES)
    assert {u + c for u in UNIVERSITIES for c in COLLEGES} <= names
    assert set(UNIVERSITIES) <= names  # a university is in front of its colleges
    assert not names & set(HEADINGS) and "东湖" not in names
    assert VOCABULARY.kind_of(TOPIC) == SIBLING and VOCABULARY.kind_of(TOPIC + "概况") == TITLE


def test_titles_of_one_family_give_no_sibling_names() -> None:
    laws = [
        "中华人民共和国契税法",
        "中华人民共和国个人所得税法",
        "中华人民共和国民法典",
        "中华人民共和国刑法",
    ]
    assert sibling_names(laws) == set()
    assert sibling_names(["红烧肉的做法", "糖醋排骨的做法", "可乐鸡翅的做法"]) == set()


def test_parts_are_what_the_titles_add_to_a_name() -> None:
    parts = VOCABULARY.parts_of(TOPIC)
    assert {"本科生", "毕业生", "软件工程", "联系方式"} <= parts
    assert "计算机" not in parts and "学院" not in parts  # the name's own words
    assert "会计学" not in parts  # another college's major


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.sampled_from(UNIVERSITIES), min_size=3, max_size=4, unique=True),
    st.lists(st.sampled_from(COLLEGES), min_size=3, max_size=4, unique=True),
    st.lists(st.sampled_from(HEADINGS), min_size=3, max_size=6, unique=True),
)
def test_every_sibling_of_a_grid_is_found(unis: list[str], colleges: list[str], headings: list[str]) -> None:
    names = sibling_names([u + c + h for u in unis for c in colleges for h in headings])
    assert {u + c for u in unis for c in colleges} <= names
    assert not names & set(headings)


# -- the rules -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "expected", "method"),
    [
        ("学院有几个系？", f"{TOPIC}有几个系？", "generic"),
        ("学院的院长是谁？", f"{TOPIC}的院长是谁？", "generic"),
        ("本科生毕业要修满多少学分？", f"{TOPIC}本科生毕业要修满多少学分？", "part"),
        ("毕业生的去向落实率是多少？", f"{TOPIC}毕业生的去向落实率是多少？", "part"),
        ("软件工程专业的核心课程有哪些？", f"{TOPIC}软件工程专业的核心课程有哪些？", "part"),
        ("该学院有多少名教授？", f"{TOPIC}有多少名教授？", "anaphora"),
        ("那西岭大学计算机学院呢？", "西岭大学计算机学院是哪一年成立的？", "substitution"),
    ],
)
def test_follow_ups_among_look_alikes(question: str, expected: str, method: str) -> None:
    found = CONDENSER.condense(OPENED, question)
    assert (found.question, found.method) == (expected, method)
    assert found.focus == (found.topic,) and found.topic in expected


def test_the_focus_is_dropped_when_the_question_names_another_entity() -> None:
    found = CONDENSER.condense(OPENED, "西岭大学外国语学院的办公电话是多少？")
    assert found.question == "西岭大学外国语学院的办公电话是多少？" and found.focus == ()
    # … and the next follow-up is about the one it named
    later = CONDENSER.condense([*OPENED, *turns((found.question, "020-1234"))], "毕业生平均月薪多少？")
    assert later.question == "西岭大学外国语学院毕业生平均月薪多少？" and later.focus == (
        "西岭大学外国语学院",
    )


def test_a_question_the_rules_do_not_rewrite_keeps_the_sibling_topic_as_its_focus() -> None:
    found = CONDENSER.condense(OPENED, "录取最低分比省控线高多少分？")
    assert not found.changed and found.focus == (TOPIC,)
    later = CONDENSER.condense([*OPENED, *turns((found.question, "高出 60 分"))], "学院有几个系？")
    assert later.question == f"{TOPIC}有几个系？"  # the topic did not drift to 省控线


def test_another_sibling_is_asked_the_question_the_rules_left() -> None:
    history = [*OPENED, *turns(("录取最低分比省控线高多少分？", "高出 60 分"))]
    found = CONDENSER.condense(history, "那西岭大学计算机学院呢？")
    assert found.question == "西岭大学计算机学院录取最低分比省控线高多少分？"
    assert found.focus == ("西岭大学计算机学院",)


def test_a_generic_noun_is_not_the_topic_when_the_question_names_its_own_subject() -> None:
    """A statute's title ends with 规定; 「…条例对…检查有什么规定？」 is not about it."""
    statutes = OfflineCondenser(
        Vocabulary({"上海市住房公积金管理若干规定": TITLE, "中华人民共和国契税法": TITLE})
    )
    history = turns(("上海市住房公积金管理若干规定对缴存比例有什么要求？", "……"))
    question = "出境入境边防检查条例对交通运输工具的检查有什么规定？"
    assert statutes.condense(history, question).question == question
    assert (
        statutes.condense(history, "规定是哪年发布的？").question
        == "上海市住房公积金管理若干规定是哪年发布的？"
    )


def test_a_complete_question_about_the_topic_keeps_the_focus() -> None:
    found = CONDENSER.condense(OPENED, f"{TOPIC}的办公电话是多少？")
    assert not found.changed and found.focus == (TOPIC,)


def test_the_llm_rewrite_carries_the_focus_only_while_it_names_no_other_entity() -> None:
    class Scripted:
        def __init__(self, reply: str) -> None:
            self.reply = reply

        def chat(self, *_: Any, **__: Any) -> Any:
            return type("Result", (), {"content": self.reply})()

    ok = condense(
        OPENED, "本科生要修多少学分？", vocabulary=VOCABULARY, llm=Scripted(f"{TOPIC}本科生要修多少学分？")
    )  # type: ignore[arg-type]
    assert ok.method == "llm" and ok.focus == (TOPIC,)
    other = condense(
        OPENED,
        "本科生要修多少学分？",
        vocabulary=VOCABULARY,
        llm=Scripted("西岭大学计算机学院本科生要修多少学分？"),
    )  # type: ignore[arg-type]
    assert other.method == "llm" and other.focus == ()


questions = st.text(
    alphabet=st.sampled_from("学院本科生毕业要修多少分它该那呢？软件工程西岭大学计算机"), max_size=24
)


@settings(max_examples=200, deadline=None)
@given(questions)
def test_no_history_no_focus(question: str) -> None:
    """Without a conversation nothing changes: no rewrite, no focus."""
    found = CONDENSER.condense([], question)
    assert found.focus == () and not found.changed


@settings(max_examples=200, deadline=None)
@given(questions)
def test_the_focus_never_outlives_another_sibling_named(question: str) -> None:
    found = CONDENSER.condense(OPENED, "西岭大学法学院" + question)
    assert TOPIC not in found.focus


def test_vocabularies_without_siblings_keep_their_rules() -> None:
    """A KB of plain titles (no look-alikes): the new rules have nothing to add."""
    plain = OfflineCondenser(Vocabulary({"红烧肉": TITLE, "糖醋排骨": TITLE}))
    found = plain.condense(turns(("红烧肉怎么做？", "……")), "五花肉要焯水吗？")
    assert found.question == "五花肉要焯水吗？"


# -- end to end ----------------------------------------------------------------------------------
FACTS = {"概况": "学院始建于{y}年，现设{d}个系。", "本科生培养": "本科生毕业须修满{c}学分。",
         "毕业生就业": "毕业去向落实率为{p}%。", "联系方式": "办公电话：010-{t}。",
         "招生信息": "录取最低分平均高出省控线{m}分。", "师资队伍": "现有教授{k}人。"}  # fmt: skip
KB = "lookalike-tiny"


@pytest.fixture(scope="module")
def pool_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    root = tmp_path_factory.mktemp("lookalike")
    n = 0
    for u in UNIVERSITIES:
        for c in COLLEGES:
            for h, text in FACTS.items():
                n += 1
                page = root / u / c / f"{h}.md"
                page.parent.mkdir(parents=True, exist_ok=True)
                body = text.format(
                    y=1950 + n, d=n % 7 + 2, c=140 + n, p=80 + n % 19, t=60000000 + n, m=n, k=n
                )
                page.write_text(f"# {u}{c}{h}\n\n{body}\n", "utf-8")
    s = Settings(home=root / "home", embedding={"provider": "hash"}, llm=LLMSettings())
    open_kb(KB, settings=s, create=True, embedder="hash").index_path(root, fmt="markdown", progress=False)
    return s


DIALOGUE = [  # (user, gold page)
    ("东湖大学计算机学院是哪一年成立的？", "东湖大学/计算机学院/概况"),
    ("本科生毕业要修满多少学分？", "东湖大学/计算机学院/本科生培养"),
    ("录取最低分比省控线高多少分？", "东湖大学/计算机学院/招生信息"),
    ("学院的办公电话是多少？", "东湖大学/计算机学院/联系方式"),
    ("那西岭大学计算机学院呢？", "西岭大学/计算机学院/联系方式"),
    ("毕业生的去向落实率是多少？", "西岭大学/计算机学院/毕业生就业"),
]


def _cited(pool: Settings, prior: float) -> list[list[str]]:
    s = pool.model_copy(update={"conversation": ConversationSettings(topic_prior=prior)})
    ctx = build_context(s, llm=None)
    history: list[dict[str, Any]] = []
    out = []
    for question, _gold in DIALOGUE:
        answer = conversation.ask(
            load_apps().answerer(None), AskRequest(question=question, history=history, kb=KB), ctx
        )
        out.append(list(dict.fromkeys(c.id for c in answer.citations))[:5])
        history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer.answer}]
    return out


def test_follow_ups_find_their_sibling_page(pool_settings: Settings) -> None:
    for (question, gold), cited in zip(DIALOGUE, _cited(pool_settings, 0.5), strict=True):
        assert gold in cited, (question, cited)


def test_without_the_prior_a_question_the_rules_leave_loses_its_college(pool_settings: Settings) -> None:
    cited = _cited(pool_settings, 0.0)
    assert DIALOGUE[2][1] not in cited[2]  # 24 look-alike 招生信息 pages: only the topic decides


def test_library_use_without_a_conversation_is_untouched(pool_settings: Settings) -> None:
    from zhiwen.answer.qa import answer_question

    kb = open_kb(KB, settings=pool_settings)
    plain = answer_question(kb, "本科生毕业要修满多少学分？", llm=None)
    assert "focus" not in plain.params
