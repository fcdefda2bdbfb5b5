"""The table model: grids → header paths and typed columns; row chunks; the terminal view."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zhiwen.tables.chunks import row_chunks
from zhiwen.tables.model import Table, column_type, header_paths, table_from_grid, typed_value
from zhiwen.tables.render import display_width, payload, render_text

TWO_LEVEL = [
    ["专业名称", "文史/历史类", "", "理工/物理类", ""],
    ["", "最高", "最低", "最高", "最低"],
    ["法学", "640", "631", "650", "644"],
    ["金融学类", "630", "618", "-", "-"],
]


def test_two_level_header_flattens_to_paths() -> None:
    t = table_from_grid(TWO_LEVEL, caption="2021年四川省录取分数线")
    assert t is not None
    assert t.columns == [
        "专业名称",
        "文史/历史类 最高",
        "文史/历史类 最低",
        "理工/物理类 最高",
        "理工/物理类 最低",
    ]
    assert t.types == ["text", "int", "int", "int", "int"] and t.header_rows == 2
    assert t.key == 0 and t.rows[1][3] == "-"


def test_repeated_span_cells_as_html_gives_them() -> None:
    grid = [["专业", "文史", "文史"], ["专业", "最高", "最低"], ["法学", "1", "2"]]
    t = table_from_grid(grid, header_rows=2)
    assert t is not None and t.columns == ["专业", "文史 最高", "文史 最低"]


def test_title_row_becomes_the_caption_and_empty_headers_are_named() -> None:
    grid = [["2024年手机价格表", None, None], ["型号", None, "单价"], ["X1", "a", 3999], ["X2", "b", 4999.5]]
    t = table_from_grid(grid)
    assert t is not None and t.caption == "2024年手机价格表"
    assert t.columns == ["型号", "第2列", "单价"] and t.types[2] == "float"


def test_types_and_values() -> None:
    assert column_type(["1", "2", "-", "3"]) == "int"
    assert column_type(["1.5", "2", ""]) == "float"
    assert column_type(["2024-01-02", "2024年3月4日"]) == "date"
    assert column_type(["北京", "1"]) == "text"
    assert typed_value("1,234", "int") == 1234 and typed_value("-", "int") is None
    assert typed_value("2024年3月4日", "date") == "2024-03-04"


@given(
    st.lists(
        st.lists(st.sampled_from(["", "甲", "乙", "最高", "最低"]), min_size=3, max_size=3),
        min_size=1,
        max_size=3,
    )
)
def test_header_paths_are_unique_and_one_per_column(head: list[list[str]]) -> None:
    names = header_paths(head)
    assert len(names) == 3 and len(set(names)) == 3 and all(names)


def test_small_tables_give_a_chunk_per_row_with_context() -> None:
    t = table_from_grid(TWO_LEVEL, caption="2021年四川省录取分数线")
    assert t is not None
    chunks = row_chunks(t, max_chars=800)
    assert [c.first for c in chunks] == [1, 2]
    assert chunks[0].text == (
        "2021年四川省录取分数线\n\n专业名称：法学；文史/历史类 最高：640；文史/历史类 最低：631；"
        "理工/物理类 最高：650；理工/物理类 最低：644"
    )


def test_big_tables_pack_rows_and_wide_rows_split_by_columns() -> None:
    rows = [[f"型号{i}", str(i), str(i * 2)] for i in range(1000)]
    t = Table(columns=["型号", "数量", "单价"], rows=rows, caption="清单")
    chunks = row_chunks(t, max_chars=300, one_row_up_to=100)
    assert 1000 / 12 <= len(chunks) < 200 and all(len(c.text) <= 300 for c in chunks)
    assert sum(len(c.cells) for c in chunks) == 1000
    wide = Table(
        columns=["名称", *[f"指标{i}" for i in range(300)]], rows=[["甲", *["1234"] * 300]], caption="宽表"
    )
    parts = row_chunks(wide, max_chars=400)
    assert len(parts) > 5 and all(p.text.startswith("宽表\n\n名称：甲；") for p in parts)
    assert all(len(p.text) <= 400 for p in parts)


def test_terminal_view_fits_80_columns_counting_wide_characters() -> None:
    columns = [
        "专业名称",
        "文史/历史类 最高",
        "文史/历史类 最低",
        "理工/物理类 最高",
        "理工/物理类 最低",
        "备注说明",
    ]
    rows = [["中国语言文学类", "640", "631", "650", "644", "这是一段很长的备注，用来检查折行"]]
    text = render_text(columns, rows, width=80, title="2021年四川省录取分数线")
    assert all(display_width(line) <= 80 for line in text.splitlines())
    assert "中国语言文学类" in text.replace("\n", "") or "中国语言文" in text
    data = payload(columns, rows, title="t", highlight=[(0, 2)])
    assert data["rows"][0][2] == "631" and data["highlight"] == [[0, 2]]
