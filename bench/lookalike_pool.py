"""A pool of look-alike pages and the conversations about them, generated with a seed.

Sibling organisations whose pages share their headings: universities → colleges → the same ten
pages each (概况, 师资队伍, 本科生培养, 研究生培养, 毕业生就业, 联系方式, 科研平台, 国际交流,
学生工作, 招生信息) with different facts, one 专业介绍 page per major (majors recur across
colleges and universities: 软件工程 is taught in several), and each university's news pages,
which name several of its colleges and the same heading words. A page's name lives in its title
(「东湖大学计算机科学与技术学院本科生培养」); its text says 学院/本院, as real pages do, and
sometimes names a sibling college (联合培养, 合署办公).

Every fact and name is invented here (no real institution's data). The dialogues are made from
the same facts, one gold page and one gold standalone question per turn, and each follow-up says
which kind it is:

* ``generic`` — a bare generic noun stands for the topic or its members (学院…, 本科生…, 毕业生…);
* ``part`` — the question names a part of the topic (a major) and not the topic;
* ``complete`` — the question names the topic in full (look-alike pages of siblings compete);
* ``anaphora`` — 该学院 / 它 (resolved before this work); ``subject`` — a short question that
  names nothing; ``switch`` — 「那西岭大学计算机科学与技术学院呢？」 or a new college named in full.

Nothing is written to the repository: :func:`write_pool` writes the pages where the benchmark
(or a test) says, and :func:`dialogues` returns the dialogues in ``bench/dialogues``' format.

Example::

    >>> pool = Pool.generate(seed=0, universities=2, colleges=6)
    >>> len(pool.pages), pool.pages[0].title
    (236, '东湖大学新闻传播学院概况')
    >>> d = dialogues(pool, 3, seed=0)[0]
    >>> d["turns"][1]["kind"], d["turns"][1]["user"], d["turns"][1]["standalone"]
    ('generic', '本科招生咨询电话是多少？', '西岭大学数学与统计学院本科招生咨询电话是多少？')
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

UNIVERSITIES = (
    "东湖大学",
    "西岭大学",
    "南江大学",
    "北辰大学",
    "临海理工大学",
    "青州师范大学",
    "云川大学",
    "白石大学",
)
#: college → its majors (some majors are taught by two colleges)
COLLEGES: dict[str, tuple[str, ...]] = {
    "计算机科学与技术学院": ("计算机科学与技术", "软件工程", "人工智能", "网络空间安全"),
    "外国语学院": ("英语", "日语", "翻译", "商务英语"),
    "经济管理学院": ("经济学", "工商管理", "会计学", "金融学"),
    "法学院": ("法学", "知识产权", "社会工作"),
    "文学院": ("汉语言文学", "汉语国际教育", "秘书学"),
    "历史文化学院": ("历史学", "考古学", "文物与博物馆学"),
    "数学与统计学院": ("数学与应用数学", "统计学", "信息与计算科学"),
    "物理与电子工程学院": ("物理学", "电子信息工程", "光电信息科学与工程"),
    "化学化工学院": ("化学", "化学工程与工艺", "应用化学"),
    "生命科学学院": ("生物科学", "生物技术", "生态学"),
    "机械工程学院": ("机械设计制造及其自动化", "车辆工程", "工业设计"),
    "土木工程学院": ("土木工程", "工程管理", "给排水科学与工程"),
    "材料科学与工程学院": ("材料科学与工程", "高分子材料与工程", "新能源材料与器件"),
    "建筑与城市规划学院": ("建筑学", "城乡规划", "风景园林"),
    "新闻传播学院": ("新闻学", "广告学", "网络与新媒体"),
    "艺术学院": ("音乐学", "美术学", "视觉传达设计"),
    "教育学院": ("教育学", "学前教育", "小学教育"),
    "体育学院": ("体育教育", "运动训练", "社会体育指导与管理"),
    "公共管理学院": ("行政管理", "公共事业管理", "劳动与社会保障"),
    "环境科学与工程学院": ("环境工程", "环境科学", "资源循环科学与工程"),
    "医学院": ("临床医学", "护理学", "预防医学"),
    "药学院": ("药学", "药物制剂", "中药学"),
    "信息与通信工程学院": ("通信工程", "电子科学与技术", "软件工程"),
    "马克思主义学院": ("思想政治教育", "马克思主义理论"),
}
HEADINGS = (
    "概况",
    "师资队伍",
    "本科生培养",
    "研究生培养",
    "毕业生就业",
    "联系方式",
    "科研平台",
    "国际交流",
    "学生工作",
    "招生信息",
)
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏"
    "吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严"
)
GIVEN = "明华建国志强海军伟平东文辉林晓红静丽敏磊洋勇杰涛超斌波宁鹏飞凯峰俊宇浩然博思远清源"
CAMPUSES = ("东", "西", "南", "北", "新", "老", "滨江", "湖畔", "紫荆", "银杏")
BUILDINGS = (
    "明德楼",
    "致远楼",
    "博学楼",
    "求是楼",
    "格物楼",
    "笃行楼",
    "弘毅楼",
    "知行楼",
    "启真楼",
    "敏行楼",
)
COUNTRIES = ("英国", "法国", "德国", "日本", "韩国", "美国", "澳大利亚", "新加坡", "俄罗斯", "西班牙")
DESTINATIONS = (
    "互联网企业",
    "金融机构",
    "中小学",
    "科研院所",
    "政府机关",
    "制造业企业",
    "医院",
    "设计院",
    "律师事务所",
    "媒体",
)
SKILLS = ("扎实理论基础和较强实践", "创新意识和工程实践", "国际视野和跨文化沟通", "独立研究和团队协作")
COURSE_WORDS = ("导论", "基础", "原理", "方法", "实务", "专题研究", "实验", "设计", "概论", "前沿")


@dataclass(frozen=True, slots=True)
class Page:
    id: str  # the path under the pool's root, without .md (the KB's document id)
    title: str
    text: str  # the body (without the title line)

    def markdown(self) -> str:
        return f"# {self.title}\n\n{self.text}\n"


@dataclass(slots=True)
class College:
    """One sibling organisation: its facts, one value per question the dialogues ask."""

    university: str
    name: str
    majors: tuple[str, ...]
    facts: dict[str, Any] = field(default_factory=dict)
    major_facts: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def full(self) -> str:
        return self.university + self.name

    def page_id(self, heading: str) -> str:
        return f"{self.university}/{self.name}/{heading}"

    def major_id(self, major: str) -> str:
        return f"{self.university}/{self.name}/专业/{major}"


def _person(rng: random.Random) -> str:
    return rng.choice(SURNAMES) + "".join(rng.sample(GIVEN, rng.choice((1, 2))))


def _facts(rng: random.Random, majors: tuple[str, ...]) -> dict[str, Any]:
    profs = rng.randint(12, 80)
    return {
        "year": rng.randint(1952, 2012),
        "departments": rng.randint(2, 7),
        "staff": rng.randint(60, 320),
        "campus": rng.choice(CAMPUSES) + "校区",
        "building": rng.choice(BUILDINGS),
        "room": rng.randint(101, 620),
        "dean": _person(rng),
        "teachers": profs * 3 + rng.randint(5, 40),
        "professors": profs,
        "associates": profs + rng.randint(5, 40),
        "supervisors": rng.randint(5, profs),
        "phd_share": rng.randint(55, 98),
        "adjuncts": rng.randint(3, 30),
        "intake": rng.randint(8, 40) * 10,
        "credits": rng.choice((150, 155, 160, 165, 170, 175)),
        "practice": rng.choice((20, 25, 30, 35, 40)),
        "mentees": rng.randint(4, 15),
        "masters": rng.randint(1, 8),
        "doctorates": rng.randint(0, 4),
        "graduate_students": rng.randint(80, 900),
        "graduate_years": rng.choice((2, 2.5, 3)),
        "cohort": rng.choice((2022, 2023, 2024)),
        "graduates": rng.randint(80, 600),
        "placement": round(rng.uniform(85.0, 99.5), 1),
        "further_study": round(rng.uniform(10.0, 55.0), 1),
        "destination": "、".join(rng.sample(DESTINATIONS, 2)),
        "salary": rng.randint(45, 140) * 100,
        "phone": f"0{rng.randint(10, 99)}-{rng.randint(6000_0000, 8999_9999)}",
        "email": f"office{rng.randint(10, 999)}@example.edu.cn",
        "zip": rng.randint(100000, 850000),
        "lab": f"{rng.choice(majors)}{rng.choice(('重点实验室', '工程研究中心', '协同创新中心'))}",
        "key_labs": rng.randint(1, 6),
        "national_projects": rng.randint(3, 90),
        "funding": rng.randint(3, 90) * 100,
        "partners": rng.randint(5, 60),
        "exchange": rng.randint(10, 150),
        "country": "、".join(rng.sample(COUNTRIES, 2)),
        "clubs": rng.randint(4, 30),
        "scholarship": f"{_person(rng)[0]}氏奖学金",
        "award_share": rng.randint(10, 40),
        "volunteer": rng.randint(6, 60),
        "admission_phone": f"0{rng.randint(10, 99)}-{rng.randint(6000_0000, 8999_9999)}",
        "provinces": rng.randint(8, 31),
        "margin": rng.randint(20, 160),
    }


def _major_facts(rng: random.Random, major: str) -> dict[str, Any]:
    return {
        "since": rng.randint(1978, 2020),
        "skill": rng.choice(SKILLS),
        "courses": "、".join(major[:2] + w for w in rng.sample(COURSE_WORDS, 3)),
        "intake": rng.randint(3, 15) * 10,
        "degree": rng.choice(
            ("工学", "理学", "文学", "管理学", "法学", "经济学", "教育学", "艺术学", "医学")
        ),
    }


# -- the pages ---------------------------------------------------------------------------------
def _sibling_line(rng: random.Random, college: College, siblings: list[College]) -> str:
    """A sentence naming a sibling college (in about half the pages): one of the same university
    by its short name, or one of another university by its full name (共建, 对口交流)."""
    same = [c for c in siblings if c.university == college.university and c.name != college.name]
    alike = [c for c in siblings if c.name == college.name and c.university != college.university]
    roll = rng.random()
    if same and roll < 0.3:
        other = rng.choice(same).name
        return rng.choice(
            (
                f"学院与{other}联合开设辅修课程。",
                f"学院办公室与{other}合署办公。",
                f"学院部分课程由{other}教师承担。",
            )
        )
    if alike and roll < 0.5:
        other = rng.choice(alike).full
        return rng.choice(
            (
                f"学院与{other}共建联合实验室。",
                f"学院每年与{other}开展对口交流。",
                f"学院与{other}互认部分课程学分。",
            )
        )
    return ""


def _bodies(c: College) -> dict[str, str]:
    f = c.facts
    majors = "、".join(c.majors)
    return {
        "概况": f"学院始建于{f['year']}年，现设{f['departments']}个系、{len(c.majors)}个本科专业，"
        f"有教职工{f['staff']}人。学院位于{f['campus']}{f['building']}。现任院长为{f['dean']}教授。",
        "师资队伍": f"学院现有专任教师{f['teachers']}人，其中教授{f['professors']}人、"
        f"副教授{f['associates']}人，博士生导师{f['supervisors']}人，具有博士学位的教师占{f['phd_share']}%。"
        f"学院另聘兼职教授{f['adjuncts']}人。",
        "本科生培养": f"学院设有{majors}等{len(c.majors)}个本科专业，每年招收本科生约{f['intake']}人。"
        f"本科生毕业须修满{f['credits']}学分，其中实践环节不少于{f['practice']}学分。"
        f"学院实行本科生导师制，每位导师指导{f['mentees']}名学生。",
        "研究生培养": f"学院拥有{f['masters']}个硕士学位授权点、{f['doctorates']}个博士学位授权点，"
        f"在读研究生{f['graduate_students']}人。硕士研究生学制为{f['graduate_years']}年。",
        "毕业生就业": f"{f['cohort']}届本科毕业生共{f['graduates']}人，毕业去向落实率为{f['placement']}%，"
        f"升学率为{f['further_study']}%。毕业生主要去向为{f['destination']}，平均月起薪约{f['salary']}元。",
        "联系方式": f"办公地址：{f['campus']}{f['building']}{f['room']}室。办公电话：{f['phone']}。"
        f"电子邮箱：{f['email']}。邮政编码：{f['zip']}。",
        "科研平台": f"学院建有{f['lab']}等科研平台，其中省部级重点实验室{f['key_labs']}个。"
        f"近五年承担国家级科研项目{f['national_projects']}项，年均科研经费{f['funding']}万元。",
        "国际交流": f"学院与{f['partners']}所境外高校建立了合作关系，每年选派约{f['exchange']}名学生赴"
        f"{f['country']}等国家交流学习。",
        "学生工作": f"学院现有学生社团{f['clubs']}个，设有{f['scholarship']}等奖学金，"
        f"获奖比例约为{f['award_share']}%。学院团委每年组织志愿服务活动{f['volunteer']}次。",
        "招生信息": f"本科招生咨询电话：{f['admission_phone']}。学院在全国{f['provinces']}个省份招生，"
        f"录取最低分平均高出省控线{f['margin']}分。",
    }


def _major_body(major: str, m: dict[str, Any]) -> str:
    return (
        f"{major}专业开设于{m['since']}年，学制四年，授予{m['degree']}学士学位。"
        f"培养目标：培养具备{m['skill']}能力的专门人才。核心课程包括{m['courses']}。"
        f"该专业每年招生约{m['intake']}人。"
    )


NEWS = (
    (
        "召开本科教学工作会议",
        "{a}、{b}和{c}负责人介绍了本科生培养方案修订情况，会议研究了毕业生就业和招生工作。",
    ),
    (
        "发布毕业生就业质量报告",
        "报告显示全校毕业生去向落实率保持稳定，{a}、{b}的毕业生升学人数增长较快，{c}毕业生赴基层就业人数居前。",
    ),
    (
        "举行研究生导师培训会",
        "{a}、{b}、{c}等学院的研究生导师参加培训，学校介绍了研究生培养和学位授权点建设要求。",
    ),
    ("新增一批省部级科研平台", "{a}、{b}和{c}的科研平台获批，学校科研经费和国家级项目数继续增长。"),
    ("开展国际交流月活动", "{a}、{b}、{c}分别与境外高校签署合作协议，交换学生项目新增名额。"),
    ("表彰优秀学生社团", "{a}、{b}和{c}的学生社团获评优秀，学校颁发奖学金并总结志愿服务活动。"),
    ("公布本科招生计划", "{a}、{b}、{c}等学院扩大招生，本科招生咨询电话同步开通。"),
    ("引进高层次人才", "{a}、{b}和{c}新聘教授和博士生导师，师资队伍结构进一步优化。"),
)


@dataclass(slots=True)
class Pool:
    colleges: list[College]
    pages: list[Page]

    @classmethod
    def generate(cls, seed: int = 0, universities: int = 8, colleges: int = 20, news: int = 40) -> Pool:
        """``universities`` × ``colleges`` siblings (each university a seeded draw of the colleges)."""
        rng = random.Random(seed)
        out: list[College] = []
        for uni in UNIVERSITIES[:universities]:
            for name in rng.sample(sorted(COLLEGES), min(colleges, len(COLLEGES))):
                majors = COLLEGES[name]
                c = College(uni, name, majors, _facts(rng, majors))
                c.major_facts = {m: _major_facts(rng, m) for m in majors}
                out.append(c)
        return cls(out, _pages(rng, out, news))

    def write(self, root: Path) -> Path:
        """The pages as markdown files under ``root`` (one folder per university and college)."""
        for page in self.pages:
            path = root / f"{page.id}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page.markdown(), "utf-8")
        return root


def _pages(rng: random.Random, colleges: list[College], news: int) -> list[Page]:
    pages = []
    for c in colleges:
        for heading, body in _bodies(c).items():
            pages.append(Page(c.page_id(heading), c.full + heading, body + _sibling_line(rng, c, colleges)))
        for major in c.majors:
            pages.append(
                Page(c.major_id(major), f"{c.full}{major}专业介绍", _major_body(major, c.major_facts[major]))
            )
    for uni in dict.fromkeys(c.university for c in colleges):
        names = [c.name for c in colleges if c.university == uni]
        for i in range(news):
            headline, template = NEWS[i % len(NEWS)]
            a, b, c3 = (uni + n if rng.random() < 0.5 else n for n in rng.sample(names, 3))
            year = 2019 + i // len(NEWS)
            text = template.format(a=a, b=b, c=c3)
            pages.append(Page(f"{uni}/新闻/{year}-{i:02d}", f"{uni}{year}年{headline}", text))
    return pages


# -- the dialogues -----------------------------------------------------------------------------
#: (heading, generic form, the same asked with the topic in front): a bare noun stands for the topic
GENERIC: tuple[tuple[str, str, str], ...] = (
    ("概况", "学院是哪一年成立的？", "{t}是哪一年成立的？"),
    ("概况", "学院现在有几个系？", "{t}现在有几个系？"),
    ("概况", "学院的院长是谁？", "{t}的院长是谁？"),
    ("师资队伍", "学院有多少名教授？", "{t}有多少名教授？"),
    ("师资队伍", "学院的博士生导师有多少人？", "{t}的博士生导师有多少人？"),
    ("本科生培养", "本科生毕业要修满多少学分？", "{t}本科生毕业要修满多少学分？"),
    ("本科生培养", "本科生每年招收多少人？", "{t}本科生每年招收多少人？"),
    ("研究生培养", "在读研究生有多少人？", "{t}在读研究生有多少人？"),
    ("研究生培养", "硕士研究生学制几年？", "{t}硕士研究生学制几年？"),
    ("毕业生就业", "毕业生的去向落实率是多少？", "{t}毕业生的去向落实率是多少？"),
    ("毕业生就业", "毕业生平均月起薪多少钱？", "{t}毕业生平均月起薪多少钱？"),
    ("联系方式", "学院办公电话是多少？", "{t}办公电话是多少？"),
    ("联系方式", "学院的电子邮箱是什么？", "{t}的电子邮箱是什么？"),
    ("科研平台", "学院有几个省部级重点实验室？", "{t}有几个省部级重点实验室？"),
    ("国际交流", "学院和多少所境外高校有合作？", "{t}和多少所境外高校有合作？"),
    ("学生工作", "学院有多少个学生社团？", "{t}有多少个学生社团？"),
    ("招生信息", "本科招生咨询电话是多少？", "{t}本科招生咨询电话是多少？"),
    # what no rule of this work reads: a member noun the titles do not name, in a long question
    ("师资队伍", "老师里有博士学位的占多少？", "{t}老师里有博士学位的占多少？"),
    ("招生信息", "录取最低分比省控线高多少分？", "{t}录取最低分比省控线高多少分？"),
    ("国际交流", "学生出国交流的机会多吗？", "{t}学生出国交流的机会多吗？"),
    ("研究生培养", "读研的话有几个博士学位授权点？", "{t}有几个博士学位授权点？"),
)
#: (heading, with a pronoun or 该学院, resolved): resolved before this work
ANAPHORA: tuple[tuple[str, str, str], ...] = (
    ("师资队伍", "该学院有多少名副教授？", "{t}有多少名副教授？"),
    ("毕业生就业", "该学院的升学率是多少？", "{t}的升学率是多少？"),
    ("科研平台", "它近五年承担了多少国家级科研项目？", "{t}近五年承担了多少国家级科研项目？"),
    ("联系方式", "它的办公地址在哪里？", "{t}的办公地址在哪里？"),
    ("招生信息", "该学院在多少个省份招生？", "{t}在多少个省份招生？"),
)
#: (heading, a short question that names nothing, resolved)
SUBJECT: tuple[tuple[str, str, str], ...] = (
    ("概况", "院长是谁？", "{t}院长是谁？"),
    ("概况", "有几个系？", "{t}有几个系？"),
    ("学生工作", "有哪些奖学金？", "{t}有哪些奖学金？"),
    ("研究生培养", "有几个博士点？", "{t}有几个博士点？"),
)
#: a part of the topic (a major) named instead of it
PART: tuple[str, ...] = (
    "{m}专业的核心课程有哪些？",
    "{m}专业是哪一年开设的？",
    "{m}专业每年招多少学生？",
    "{m}专业授予什么学位？",
)
#: the topic named in full mid-conversation (look-alike siblings compete)
COMPLETE: tuple[tuple[str, str], ...] = (
    ("联系方式", "{t}的办公电话是多少？"),
    ("毕业生就业", "{t}毕业生平均月起薪多少？"),
    ("本科生培养", "{t}本科生毕业须修满多少学分？"),
    ("师资队伍", "{t}有多少名专任教师？"),
    ("国际交流", "{t}每年选派多少名学生出国交流？"),
    ("学生工作", "{t}每年组织多少次志愿服务活动？"),
)
OPENERS: tuple[tuple[str, str], ...] = (
    ("概况", "{t}是哪一年成立的？"),
    ("概况", "{t}现任院长是谁？"),
    ("本科生培养", "{t}有哪些本科专业？"),
    ("毕业生就业", "{t}的毕业去向落实率是多少？"),
    ("师资队伍", "{t}有多少名教授？"),
)
#: how often each follow-up kind is drawn (the three kinds of misses weigh most)
KIND_WEIGHTS = {"generic": 4, "part": 3, "complete": 2, "anaphora": 1, "subject": 1, "switch": 1}


def _turn(user: str, gold: str, standalone: str, kind: str) -> dict[str, Any]:
    return {"user": user, "gold": [gold], "standalone": standalone, "kind": kind}


def _templated(table: tuple[tuple[str, str, str], ...], kind: str) -> Callable[..., dict[str, Any]]:
    def make(rng: random.Random, c: College, _pool: Pool) -> dict[str, Any]:
        heading, user, full = rng.choice(table)
        return _turn(user, c.page_id(heading), full.format(t=c.full), kind)

    return make


def _part(rng: random.Random, c: College, _pool: Pool) -> dict[str, Any]:
    major = rng.choice(c.majors)
    user = rng.choice(PART).format(m=major)
    return _turn(user, c.major_id(major), c.full + user, "part")


def _complete(rng: random.Random, c: College, _pool: Pool) -> dict[str, Any]:
    heading, template = rng.choice(COMPLETE)
    question = template.format(t=c.full)
    return _turn(question, c.page_id(heading), question, "complete")


MAKERS: dict[str, Callable[[random.Random, College, Pool], dict[str, Any]]] = {
    "generic": _templated(GENERIC, "generic"),
    "anaphora": _templated(ANAPHORA, "anaphora"),
    "subject": _templated(SUBJECT, "subject"),
    "part": _part,
    "complete": _complete,
}


def _switch(
    rng: random.Random, c: College, pool: Pool, last: dict[str, Any]
) -> tuple[College, dict[str, Any]]:
    """Another university's college of the same name (「那西岭大学…呢？」), else a new one named in full."""
    same_name = [o for o in pool.colleges if o.name == c.name and o.university != c.university]
    heading = last["gold"][0].split("/")[-1]
    if same_name and heading in HEADINGS and rng.random() < 0.6:
        other = rng.choice(same_name)
        standalone = last["standalone"].replace(c.full, other.full)
        return other, _turn(f"那{other.full}呢？", other.page_id(heading), standalone, "switch")
    other = rng.choice([o for o in pool.colleges if o is not c])
    heading, template = rng.choice(OPENERS)
    question = template.format(t=other.full)
    return other, _turn(question, other.page_id(heading), question, "switch")


def dialogues(pool: Pool, n: int, *, seed: int = 0, kb: str = "lookalike") -> list[dict[str, Any]]:
    """``n`` dialogues of 4–6 turns: an opener naming a college, then drawn follow-ups."""
    rng = random.Random(seed)
    kinds, weights = zip(*KIND_WEIGHTS.items(), strict=True)
    out = []
    for _ in range(n):
        c = rng.choice(pool.colleges)
        heading, template = rng.choice(OPENERS)
        opener = template.format(t=c.full)
        turns = [_turn(opener, c.page_id(heading), opener, "opener")]
        for _ in range(rng.randint(3, 5)):
            kind = rng.choices(kinds, weights)[0]
            if kind == "switch":
                c, turn = _switch(rng, c, pool, turns[-1])
            else:
                turn = MAKERS[kind](rng, c, pool)
            turns.append(turn)
        out.append({"app": "qa", "kb": kb, "turns": turns})
    return out
