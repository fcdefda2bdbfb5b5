"""The advisor's test questions and settings (shared by the test modules and the conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zhiwen.config import LLMSettings, Settings

TEST_STATUTES = ("契税法", "个人所得税法", "增值税法", "上海市住房公积金管理若干规定")
LOAN_QUESTION = "总价300万，首付三成，贷款30年，利率3.1%，等额本息月供多少？我月收入2万，压力大吗？"
TAX_QUESTION = "上海总价300万、89平的首套房，房东满五唯一，要交多少税？"
DISTRICT_QUESTION = "浦东和闵行哪个房价高"
DISCUSSION_QUESTION = "我在南宁，预算200万，首付40万，月收入1万，帮我深度分析一下"


def make_settings(home: Path, **overrides: Any) -> Settings:
    return Settings(  # type: ignore[call-arg]
        home=home, llm=LLMSettings(base_url=None), embedding={"provider": "hash"}, _env_file=None, **overrides
    )
