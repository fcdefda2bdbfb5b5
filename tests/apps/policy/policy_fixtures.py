# ruff: noqa: E501  (statute and table lines are data)
"""Helpers of the policy app tests: a tiny data directory in the real layout, settings, KB building.

``mini_data`` writes a few table rows, two policy pages and short statutes (a handful of real
articles each) under the same paths as ``../shared/data``, so the shipped ``kbs.toml`` builds
three small KBs from it in well under a second with the hash embedder. ``shared_ctx`` builds the
KBs from the real shared data (skipped when it is absent).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from zhiwen.config import LLMSettings, Settings

SHARED_DATA = Path(
    os.environ.get("ZHIWEN_SHARED_DATA", Path(__file__).resolve().parents[3].parent / "shared" / "data")
)
VISA_DIR = "chinatripinfo_visa_en/docs/source/_static/1_1_visa_policy"

TSV = """Country\tContinent\tVisa-Free Days\tPolicies\tPolicy End Date\tLast Check
Serbia\tEurope\t30 days (720 hrs)\tMutual-30-Valid, Regional-30, Transit-10\tEndless\t2025-5-24
Thailand\tAsia\t30 days (720 hrs)\tMutual-30-Limit-180, Regional-30\tEndless\t2025-5-24
France\tEurope\t30 days (720 hrs)\tUnilateral-30-2025-12, Regional-30, Transit-10\t2025-12-31\t2025-5-24
Brazil\tSouth America\t30 days (720 hrs)\tUnilateral-30-2026-05, Regional-30, Transit-10\t2026-05-31\t2025-5-24
United States\tNorth America\t30 days (720 hrs)\tRegional-30, Transit-10\tN/A\t2025-5-24
Korea (the Republic of Korea)\tAsia\t30 days (720 hrs)\tUnilateral-30-2025-12, Regional-30, Transit-10\t2025-12-31\t2025-5-24
"""

PAGES = {
    "mutual_30_limit_180.md": "## ✅ 30-Day Visa-Free\n\n### Duration of Stay\n\n- Stay up to **30 days**.\n",
    "unilateral_30_2025_12::regional_30::transit_10.md": (
        "## ✅ 30-Day Visa-Free (⚠️ with Conditions)\n\n### Duration of Stay\n\n"
        "- Enter China without a visa and stay up to 30 days through **December 31, 2025**.\n"
    ),
    "regional_30::transit_10.md": "## ⚠️ Transit\n\n- Stay up to **10 days** in the designated area.\n",
}

STATUTES = {
    "出境入境管理法(2012-06-30).md": """# 中华人民共和国出境入境管理法

<!-- INFO END -->

## 第三章 外国人入境出境

### 第一节 签证

第二十二条 外国人有下列情形之一的，可以免办签证:

（一）根据中国政府与其他国家政府签订的互免签证协议，属于免办签证人员的；

（三）持联程客票搭乘国际航行的航空器、船舶、列车从中国过境前往第三国或者地区，在中国境内停留不超过二十四小时且不离开口岸的；

第二十三条 有下列情形之一的外国人需要临时入境的，应当向出入境边防检查机关申请办理临时入境手续:

（一）外国船员及其随行家属登陆港口所在城市的；

临时入境的期限不得超过十五日。

## 第六章 调查和遣返

第六十七条 签证、外国人停留居留证件等出境入境证件发生损毁、遗失、被盗抢或者签发后发现持证人不符合签发条件等情形的，由签发机关宣布该出境入境证件作废。
""",
    "外国人入境出境管理条例(2013-07-21).md": """# 中华人民共和国外国人入境出境管理条例

## 第二章 签证的类别和签发

第六条 普通签证分为以下类别：(一)C字签证，发给执行乘务、航空、航运任务的国际列车乘务员、国际航空器机组人员、国际航行船舶的船员及船员随行家属。
""",
    "出境入境边防检查条例(1995-07-20).md": """# 中华人民共和国出境入境边防检查条例

## 第二章 人员的检查和管理

第七条 出境、入境的人员必须按照规定填写出境、入境登记卡，向边防检查站交验本人的有效护照或者其他出境、入境证件，经查验核准后，方可出境、入境。

第八条 出境、入境的人员有下列情形之一的，边防检查站有权阻止其出境、入境：(二)持用无效出境、入境证件的；

## 第五章 处罚

第三十二条 出境、入境的人员有下列情形之一的，处以500元以上2000元以下的罚款：(二)持用无效出境、入境证件的。
""",
    "民用航空法(2021-04-29).md": """# 中华人民共和国民用航空法

## 第五章 航 空 人 员

### 第二节 机 组

第四十三条 民用航空器机组由机长和其他空勤人员组成。
""",
    "上海口岸服务条例(2020-05-14).md": """# 上海口岸服务条例

## 第一章  总则

第二条 本条例所称的口岸，是指供人员、货物、物品和交通工具直接出入国（关、边）境的港口、机场、车站等。
""",
    "契税法(2020-08-11).md": """# 中华人民共和国契税法

第一条 在中华人民共和国境内转移土地、房屋权属，承受的单位和个人为契税的纳税人，应当依照本法规定缴纳契税。

第三条 契税税率为百分之三至百分之五。
""",
    "住房公积金管理条例(2019-03-24).md": """# 住房公积金管理条例

第二十四条 职工有下列情形之一的，可以提取职工住房公积金账户内的存储余额：（一）购买、建造、翻建、大修自住住房的；
""",
}


def make_settings(home: Path, **overrides: Any) -> Settings:
    base: dict[str, Any] = {
        "home": home,
        "embedding": {"provider": "hash"},
        "llm": LLMSettings(base_url=None),
    }
    base.update(overrides)
    return Settings(_env_file=None, **base)


def write_mini_data(root: Path) -> Path:
    visa = root / VISA_DIR
    (visa / "policies").mkdir(parents=True)
    (visa / "country_visa_tags.tsv").write_text(TSV, encoding="utf-8")
    for name, text in PAGES.items():
        (visa / "policies" / name).write_text(text, encoding="utf-8")
    laws = root / "cn_law_subset"
    laws.mkdir()
    for name, text in STATUTES.items():
        (laws / name).write_text(text, encoding="utf-8")
    return root
