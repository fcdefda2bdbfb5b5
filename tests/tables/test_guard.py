"""The SQL guard: one read-only SELECT over known tables and columns, a LIMIT, no file functions."""

from __future__ import annotations

import pytest

from zhiwen.tables.guard import SQLRejected, check_sql

KNOWN = {"t_ab": ["专业名称", "理工/物理类 最低"]}


def test_a_select_passes_with_its_limit_capped() -> None:
    checked = check_sql(
        'SELECT "专业名称" FROM t_ab ORDER BY "理工/物理类 最低" DESC LIMIT 99999', KNOWN, limit=200
    )
    assert checked.sql.endswith("LIMIT 200") and checked.tables == ("t_ab",)
    assert check_sql("SELECT COUNT(*) FROM t_ab", KNOWN, limit=5).sql.endswith("LIMIT 5")


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("DROP TABLE t_ab", "只允许一条 SELECT 查询"),
        ("SELECT 1; DELETE FROM t_ab", "只允许一条 SELECT 查询"),
        ("ATTACH DATABASE 'x.db' AS x", "只允许一条 SELECT 查询"),
        ("PRAGMA table_info(t_ab)", "只允许一条 SELECT 查询"),
        ("SELECT * FROM sqlite_master", "未知的表：sqlite_master"),
        ("SELECT * FROM other.t_ab", "不允许访问其他数据库"),
        ("SELECT password FROM t_ab", "未知的列：password"),
        ("SELECT load_extension('x') FROM t_ab", "不允许的函数：load_extension"),
        ("SELECT readfile('/etc/passwd') FROM t_ab", "不允许的函数：readfile"),
        ("SELEC * FROM", "SQL 无法解析"),
        ("", "没有 SQL"),
    ],
)
def test_bad_sql_is_refused_with_a_chinese_reason(sql: str, reason: str) -> None:
    with pytest.raises(SQLRejected) as caught:
        check_sql(sql, KNOWN, limit=10)
    assert reason in caught.value.reason
