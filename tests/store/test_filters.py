"""Unit and property tests of the filter language (zhiwen.store.filters)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zhiwen.errors import InvalidParameter
from zhiwen.store.filters import (
    OPS,
    Condition,
    Filter,
    check_filter_fields,
    coerce_scalar,
    parse_cli_filter,
    parse_filters,
)

MD = {"category": "soup", "difficulty": 2, "price": 18.5, "spicy": False, "城市": "上海"}


# -- parse_filters ------------------------------------------------------------------------------
def test_none_and_empty_mean_no_filter() -> None:
    assert parse_filters(None) == Filter()
    assert not parse_filters({})
    assert parse_filters({}).matches(MD)


def test_dict_forms() -> None:
    f = parse_filters({"category": "soup", "difficulty": {"lte": 2, "gt": 0}, "tag": ["a", "b"]})
    assert f.conditions == (
        Condition("category", "eq", "soup"),
        Condition("difficulty", "lte", 2),
        Condition("difficulty", "gt", 0),
        Condition("tag", "in", ("a", "b")),
    )
    assert f.fields() == {"category", "difficulty", "tag"}


def test_passthrough_of_filter_and_conditions() -> None:
    f = parse_filters({"a": 1})
    assert parse_filters(f) is f
    assert parse_filters([Condition("a", "eq", 1)]) == f


def test_to_dict_round_trip() -> None:
    spec = {"difficulty": {"gte": 1, "lt": 4}, "category": {"in": ("soup", "meat")}, "x": {"ne": None}}
    f = parse_filters(spec)
    assert parse_filters(f.to_dict()) == f


def test_and_combines() -> None:
    a, b = parse_filters({"a": 1}), parse_filters({"b": 2})
    assert a.and_(b).conditions == a.conditions + b.conditions
    assert a.and_(None) is a
    assert a.and_(Filter()) is a


@pytest.mark.parametrize(
    "spec",
    [
        {"bad field!": 1},
        {"": 1},
        {"1abc": 1},
        {"a" * 65: 1},
        {"x": {}},
        {"x": {"like": "a"}},
        {"x": {"in": []}},
        {"x": {"in": "abc"}},
        {"x": {"nin": 3}},
        {"x": {"gt": "3"}},
        {"x": {"lte": True}},
        {"x": {"eq": [1, 2]}},
        {"x": {"eq": {"a": 1}}},
        {"x": object()},
    ],
)
def test_invalid_specs_raise_invalid_parameter(spec: dict[str, Any]) -> None:
    with pytest.raises(InvalidParameter) as info:
        parse_filters(spec)
    assert info.value.code == 3003
    assert info.value.message  # a Chinese user message


def test_chinese_and_dotted_field_names() -> None:
    assert parse_filters({"城市": "上海"}).matches(MD)
    assert parse_filters({"a.b-c_d": 1}).conditions[0].field == "a.b-c_d"


# -- matches ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"category": "soup"}, True),
        ({"category": "meat"}, False),
        ({"category": {"ne": "meat"}}, True),
        ({"category": {"in": ["meat", "soup"]}}, True),
        ({"category": {"nin": ["meat", "soup"]}}, False),
        ({"difficulty": {"gt": 2}}, False),
        ({"difficulty": {"gte": 2}}, True),
        ({"difficulty": {"lt": 2}}, False),
        ({"difficulty": {"lte": 2}}, True),
        ({"price": {"gt": 18}}, True),
        ({"difficulty": 2.0}, True),  # Python equality across int and float
        ({"spicy": False}, True),
        ({"spicy": 0}, True),  # and bool == int, as in Python
        ({"spicy": {"lte": 1}}, False),  # ranges never match bools
        ({"category": {"gt": 1}}, False),  # nor strings
        ({"missing": {"lt": 100}}, False),  # nor missing fields
        ({"missing": None}, True),  # a missing field equals None
        ({"missing": {"ne": "x"}}, True),
        ({"missing": {"nin": ["x"]}}, True),
        ({"missing": {"in": ["x"]}}, False),
        ({"category": "soup", "difficulty": {"gt": 5}}, False),  # AND
    ],
)
def test_matches(spec: dict[str, Any], expected: bool) -> None:
    assert parse_filters(spec).matches(MD) is expected


# -- CLI form -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expr", "cond"),
    [
        ("category=soup", Condition("category", "eq", "soup")),
        ("category = soup", Condition("category", "eq", "soup")),
        ("difficulty<=2", Condition("difficulty", "lte", 2)),
        ("difficulty>=2", Condition("difficulty", "gte", 2)),
        ("difficulty<2", Condition("difficulty", "lt", 2)),
        ("price>1.5", Condition("price", "gt", 1.5)),
        ("category!=soup", Condition("category", "ne", "soup")),
        ("elevator=true", Condition("elevator", "eq", True)),
        ("category=soup|staple", Condition("category", "in", ("soup", "staple"))),
        ("category!=soup|staple", Condition("category", "nin", ("soup", "staple"))),
        ("district=浦东新区", Condition("district", "eq", "浦东新区")),
        ("rooms=3|4", Condition("rooms", "in", (3, 4))),
    ],
)
def test_parse_cli_filter(expr: str, cond: Condition) -> None:
    assert parse_cli_filter(expr) == cond


@pytest.mark.parametrize(
    "expr", ["", "category", "=soup", "category=", "difficulty<=abc", "bad field=1", "a>b|c"]
)
def test_parse_cli_filter_errors(expr: str) -> None:
    with pytest.raises(InvalidParameter):
        parse_cli_filter(expr)


def test_coerce_scalar() -> None:
    assert coerce_scalar("3") == 3 and type(coerce_scalar("3")) is int
    assert coerce_scalar("2.5") == 2.5
    assert coerce_scalar("TRUE") is True
    assert coerce_scalar("false") is False
    assert coerce_scalar("汤") == "汤"
    assert coerce_scalar("3a") == "3a"


# -- properties ---------------------------------------------------------------------------------
fields = st.sampled_from(["a", "b", "c"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.sampled_from(["x", "y", "汤"]),
)
numbers = st.one_of(st.integers(-5, 5), st.floats(-5, 5, allow_nan=False))
metadata = st.dictionaries(fields, scalars, max_size=3)


@st.composite
def conditions(draw: st.DrawFn) -> Condition:
    field = draw(fields)
    op = draw(st.sampled_from(OPS))
    if op in ("in", "nin"):
        value: Any = tuple(draw(st.lists(scalars, min_size=1, max_size=3)))
    elif op in ("gt", "gte", "lt", "lte"):
        value = draw(numbers)
    else:
        value = draw(scalars)
    return Condition(field, op, value)


def reference(cond: Condition, md: dict[str, Any]) -> bool:
    """An independent statement of the semantics."""
    v = md.get(cond.field)
    if cond.op == "eq":
        return v == cond.value
    if cond.op == "ne":
        return v != cond.value
    if cond.op == "in":
        return any(v == x for x in cond.value)
    if cond.op == "nin":
        return not any(v == x for x in cond.value)
    if v is None or isinstance(v, bool | str):
        return False
    return {"gt": v > cond.value, "gte": v >= cond.value, "lt": v < cond.value, "lte": v <= cond.value}[
        cond.op
    ]


@given(st.lists(conditions(), max_size=4), metadata)
def test_filter_is_the_conjunction_of_its_conditions(conds: list[Condition], md: dict[str, Any]) -> None:
    f = Filter(tuple(conds))
    assert f.matches(md) == all(reference(c, md) for c in conds)


@given(conditions(), metadata)
def test_negated_ops_are_complements(cond: Condition, md: dict[str, Any]) -> None:
    neg = {"eq": "ne", "ne": "eq", "in": "nin", "nin": "in"}
    if cond.op in neg:
        flipped = Condition(cond.field, neg[cond.op], cond.value)  # type: ignore[arg-type]
        assert cond.matches(md) != flipped.matches(md)


@given(st.lists(conditions(), max_size=4))
def test_dict_round_trip_preserves_semantics(conds: list[Condition]) -> None:
    f = Filter(tuple(conds))
    # to_dict merges conditions per field/op (the last one wins), so compare on unique pairs
    unique = {(c.field, c.op): c for c in conds}
    g = parse_filters(f.to_dict())
    assert set(g.conditions) == set(unique.values())


@given(st.sampled_from(["a", "城市", "x_1"]), st.sampled_from(["=", "!=", ">=", "<=", ">", "<"]), numbers)
def test_cli_numeric_round_trip(field: str, sym: str, value: float) -> None:
    cond = parse_cli_filter(f"{field}{sym}{value}")
    assert cond.field == field
    assert cond.value == value


# -- check_filter_fields (unknown fields are a 4xx, not an empty result) -------------------------
def test_known_fields_pass_and_return_the_parsed_filter() -> None:
    f = check_filter_fields({"category": "soup", "difficulty": {"lte": 2}}, {"category", "difficulty", "x"})
    assert f == parse_filters({"category": "soup", "difficulty": {"lte": 2}})
    assert check_filter_fields(None, set()) == Filter()
    assert check_filter_fields({}, []) == Filter()
    assert check_filter_fields([parse_cli_filter("城市=上海")], ["城市"]).fields() == {"城市"}


def test_unknown_field_lists_the_known_ones_in_chinese() -> None:
    with pytest.raises(InvalidParameter) as err:
        check_filter_fields({"foo": 1, "category": "soup"}, {"difficulty", "category"})
    exc = err.value
    assert exc.message == "未知的过滤字段：foo（可用字段：category、difficulty）"
    assert exc.http_status == 422 and exc.code == 3003
    assert exc.data == {"unknown_fields": ["foo"], "known_fields": ["category", "difficulty"]}


def test_several_unknown_fields_and_a_kb_without_metadata() -> None:
    with pytest.raises(InvalidParameter, match="未知的过滤字段：a、b（知识库中没有可过滤的元数据字段）"):
        check_filter_fields({"b": 1, "a": 2}, set())


def test_a_long_field_list_is_shortened() -> None:
    known = {f"f{i:02d}" for i in range(40)}
    with pytest.raises(InvalidParameter) as err:
        check_filter_fields({"nope": 1}, known)
    assert err.value.message.endswith("f29 等 40 个）")
    assert len(err.value.data["known_fields"]) == 40
