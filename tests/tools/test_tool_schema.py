"""Tools: the OpenAI schema and the validation both come from the pydantic model (seed 003, Prop. 1–3).

Hypothesis builds argument models from assorted fields (bounded ints, floats, Literal, Enum,
strings, bools, optional, nested models, lists) and checks that the schema is a plain OpenAI
function schema, that valid arguments round-trip and that one broken field gives the right code
(3001 missing, 3002 wrong type, 2001 invalid value) with a Chinese message naming the field.
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, create_model

from zhiwen.errors import MissingParameter, NotFound, ToolValidationError, WrongParameterType, ZhiwenError
from zhiwen.tools import Tool, ToolRegistry

CHOICE_POOL = ("红色", "蓝色", "green", "上海", "北京", "a-b")
KINDS = ("int", "float", "literal", "enum", "str", "bool", "optional", "nested", "list", "list_nested")
WRONG_TYPE: dict[str, Any] = {
    "int": "不是数字",
    "float": "不是数字",
    "str": 12345,
    "bool": "也许",
    "optional": "不是数字",
    "nested": 5,
    "list": "不是列表",
    "list_nested": "不是列表",
}
OPENAI_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Inner(BaseModel):
    x: int = Field(ge=0, description="内层数量")
    label: str = Field(description="内层名称")


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: str
    required: bool
    lo: int
    hi: int
    choices: tuple[str, ...]

    @property
    def description(self) -> str:
        return f"参数 {self.name}"


def field_definition(spec: FieldSpec) -> tuple[Any, Any]:
    desc = spec.description
    default: Any = ... if spec.required else None
    if spec.kind == "int":
        return int, Field(... if spec.required else spec.lo, ge=spec.lo, le=spec.hi, description=desc)
    if spec.kind == "float":
        mid = (spec.lo + spec.hi) / 2
        return float, Field(... if spec.required else mid, gt=spec.lo, lt=spec.hi, description=desc)
    if spec.kind == "literal":
        return Literal[spec.choices], Field(... if spec.required else spec.choices[0], description=desc)
    if spec.kind == "enum":
        choice = enum.Enum(f"Choice_{spec.name}", {f"c{i}": v for i, v in enumerate(spec.choices)})  # type: ignore[misc]
        return choice, Field(... if spec.required else next(iter(choice)), description=desc)
    if spec.kind == "str":
        return str, Field(... if spec.required else "", min_length=1, max_length=spec.hi, description=desc)
    if spec.kind == "bool":
        return bool, Field(... if spec.required else False, description=desc)
    if spec.kind == "optional":
        return int | None, Field(None, ge=spec.lo, le=spec.hi, description=desc)
    if spec.kind == "nested":
        return (Inner if spec.required else Inner | None), Field(default, description=desc)
    if spec.kind == "list":
        return list[int], Field(... if spec.required else [], max_length=5, description=desc)
    assert spec.kind == "list_nested"
    return list[Inner], Field(... if spec.required else [], max_length=3, description=desc)


@st.composite
def field_specs(draw: st.DrawFn) -> list[FieldSpec]:
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6))
    specs = []
    for i, kind in enumerate(kinds):
        lo = draw(st.integers(-1000, 1000))
        hi = lo + draw(st.integers(1, 1000))
        if kind == "str":
            lo, hi = 1, draw(st.integers(1, 20))
        choices = tuple(draw(st.lists(st.sampled_from(CHOICE_POOL), min_size=1, max_size=4, unique=True)))
        required = kind != "optional" and draw(st.booleans())
        specs.append(FieldSpec(f"{kind}_{i}", kind, required, lo, hi, choices))
    return specs


def make_tool(specs: list[FieldSpec], tool_name: str = "probe") -> Tool[Any]:
    model = create_model("ProbeArgs", **{s.name: field_definition(s) for s in specs})  # type: ignore[call-overload]

    class ProbeTool(Tool[Any]):
        name = tool_name
        description = "探测工具：原样返回校验后的参数"
        args_model = model

        def run(self, args: Any) -> dict[str, Any]:
            return dict(args.model_dump(mode="json"))

    return ProbeTool()


INNER_VALUES = st.fixed_dictionaries({"x": st.integers(0, 10**6), "label": st.text(max_size=6)})


def valid_value(spec: FieldSpec) -> st.SearchStrategy[Any]:
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "int": st.integers(spec.lo, spec.hi),
        "float": st.floats(
            spec.lo, spec.hi, exclude_min=True, exclude_max=True, allow_nan=False, allow_infinity=False
        ),
        "literal": st.sampled_from(spec.choices),
        "enum": st.sampled_from(spec.choices),
        "str": st.text(min_size=1, max_size=spec.hi),
        "bool": st.booleans(),
        "optional": st.none() | st.integers(spec.lo, spec.hi),
        "nested": INNER_VALUES,
        "list": st.lists(st.integers(-(2**53), 2**53), max_size=5),
        "list_nested": st.lists(INNER_VALUES, max_size=3),
    }
    return strategies[spec.kind]


@st.composite
def valid_arguments(draw: st.DrawFn, specs: list[FieldSpec]) -> dict[str, Any]:
    return {s.name: draw(valid_value(s)) for s in specs if s.required or draw(st.booleans())}


def invalid_value(spec: FieldSpec) -> tuple[Any, str] | None:
    """A value out of range / not allowed for ``spec`` and the field path the error must name."""
    if spec.kind in ("int", "float", "optional"):
        return spec.hi + 1, spec.name
    if spec.kind in ("literal", "enum"):
        return "不存在的选项", spec.name
    if spec.kind == "str":
        return "长" * (spec.hi + 1), spec.name
    if spec.kind == "list":
        return list(range(6)), spec.name
    if spec.kind == "nested":
        return {"x": -1, "label": "负数"}, f"{spec.name}.x"
    return None


def walk_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | set().union(*(walk_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(walk_keys(v) for v in node))
    return set()


def expect_error(
    tool: Tool[Any], arguments: dict[str, Any], cls: type[ZhiwenError], prefix: str, field: str
) -> None:
    with pytest.raises(cls) as info:
        tool(arguments)
    exc = info.value
    assert type(exc) is cls, f"{type(exc).__name__} for {arguments!r}"
    # the message names the field, then (when the model says) its Chinese name and the bound
    assert exc.message == f"{prefix}：{field}" or exc.message.startswith(f"{prefix}：{field}（")
    assert exc.data["field"] == field


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- schema --------------------------------------------------------------------------------------
@FAST
@given(specs=field_specs(), tool_name=st.from_regex(r"[a-z][a-z0-9_]{0,40}", fullmatch=True))
def test_schema_is_a_plain_openai_function(specs: list[FieldSpec], tool_name: str) -> None:
    tool = make_tool(specs, tool_name)
    schema = tool.to_openai_schema()
    assert set(schema) == {"type", "function"} and schema["type"] == "function"
    fn = schema["function"]
    assert set(fn) == {"name", "description", "parameters"}
    assert fn["name"] == tool_name and OPENAI_NAME.match(fn["name"])
    assert fn["description"] == tool.description
    params = fn["parameters"]
    assert params["type"] == "object"
    assert list(params["properties"]) == [s.name for s in specs]
    assert params["required"] == [s.name for s in specs if s.required]
    assert not walk_keys(schema) & {"$ref", "$defs"}
    assert json.loads(json.dumps(schema, ensure_ascii=False)) == schema
    assert tool.to_openai_schema() == schema  # building it twice gives the same (nothing mutated)

    for spec in specs:
        prop = params["properties"][spec.name]
        assert prop.get("description") == spec.description, f"{spec.kind}: description lost: {prop}"
        if spec.kind == "int":
            assert (prop["type"], prop["minimum"], prop["maximum"]) == ("integer", spec.lo, spec.hi)
        elif spec.kind == "float":
            assert prop["exclusiveMinimum"] == spec.lo and prop["exclusiveMaximum"] == spec.hi
        elif spec.kind in ("literal", "enum"):
            allowed = prop["enum"] if "enum" in prop else [prop["const"]]  # one-choice Literal: const
            assert sorted(allowed) == sorted(spec.choices)
        elif spec.kind == "nested" and spec.required:
            assert prop["type"] == "object" and prop["required"] == ["x", "label"]
        elif spec.kind == "list_nested":
            assert prop["type"] == "array" and prop["items"]["properties"]["x"]["minimum"] == 0


# -- validation ----------------------------------------------------------------------------------
@FAST
@given(data=st.data(), specs=field_specs())
def test_valid_arguments_round_trip(data: st.DataObject, specs: list[FieldSpec]) -> None:
    tool = make_tool(specs)
    arguments = data.draw(valid_arguments(specs))
    result = tool(arguments)
    assert {k: result[k] for k in arguments} == arguments
    assert tool(tool.validate(arguments)) == result  # an already-validated model passes through


@FAST
@given(data=st.data(), specs=field_specs())
def test_one_broken_field_gives_its_code_and_names_it(data: st.DataObject, specs: list[FieldSpec]) -> None:
    tool = make_tool(specs)
    arguments = data.draw(valid_arguments(specs))
    spec = data.draw(st.sampled_from(specs))

    if spec.required:
        missing = {k: v for k, v in arguments.items() if k != spec.name}
        expect_error(tool, missing, MissingParameter, "缺少必需参数", spec.name)
        assert MissingParameter.code == 3001

    if spec.kind in WRONG_TYPE:
        expect_error(
            tool,
            {**arguments, spec.name: WRONG_TYPE[spec.kind]},
            WrongParameterType,
            "参数类型错误",
            spec.name,
        )
        assert WrongParameterType.code == 3002

    bad = invalid_value(spec)
    if bad is not None:
        value, field = bad
        expect_error(tool, {**arguments, spec.name: value}, ToolValidationError, "输入参数有误", field)
        assert ToolValidationError.code == 2001


def test_missing_field_inside_a_nested_model_is_named_with_its_path() -> None:
    tool = make_tool([FieldSpec("inner", "nested", True, 0, 1, ("a",))])
    expect_error(tool, {"inner": {"label": "无数量"}}, MissingParameter, "缺少必需参数", "inner.x")
    expect_error(tool, {}, MissingParameter, "缺少必需参数", "inner")


def test_fractional_number_for_an_integer_is_a_type_error() -> None:
    tool = make_tool([FieldSpec("years", "int", True, 1, 30, ("a",))])
    expect_error(tool, {"years": 2.5}, WrongParameterType, "参数类型错误", "years")
    assert tool({"years": 3.0})["years"] == 3  # a whole float is still accepted (lax JSON numbers)


@pytest.mark.parametrize("arguments", ["principal=1", ["principal", 1], 42])
def test_arguments_that_are_not_an_object_are_a_type_error(arguments: Any) -> None:
    tool = make_tool([FieldSpec("principal", "int", True, 0, 10, ("a",))])
    with pytest.raises(WrongParameterType) as info:
        tool(arguments)
    assert info.value.code == 3002 and "arguments" in info.value.message


def test_no_arguments_means_every_required_field_is_missing() -> None:
    tool = make_tool([FieldSpec("city", "str", True, 1, 10, ("a",))])
    expect_error(tool, None, MissingParameter, "缺少必需参数", "city")  # type: ignore[arg-type]


# -- registry ------------------------------------------------------------------------------------
def registry_of(*names: str) -> ToolRegistry:
    return ToolRegistry(make_tool([FieldSpec("n", "int", True, 0, 9, ("a",))], n) for n in names)


def test_registry_calls_by_name_and_lists_schemas_in_order() -> None:
    reg = registry_of("calc_loan", "calc_tax", "search_policy")
    assert reg.names() == ["calc_loan", "calc_tax", "search_policy"] and len(reg) == 3
    assert "calc_tax" in reg and "nope" not in reg
    assert [t.name for t in reg] == reg.names()
    assert reg.call("calc_tax", {"n": 4}) == {"n": 4}
    assert reg.get("calc_loan").name == "calc_loan"
    assert [s["function"]["name"] for s in reg.schemas()] == reg.names()
    assert [s["function"]["name"] for s in reg.schemas(["search_policy", "calc_loan"])] == [
        "search_policy",
        "calc_loan",
    ]


def test_unknown_tool_is_not_found_listing_the_known_tools() -> None:
    reg = registry_of("calc_tax", "calc_loan")
    for call in (
        lambda: reg.call("calc_rent", {}),
        lambda: reg.get("calc_rent"),
        lambda: reg.schemas(["calc_rent"]),
    ):
        with pytest.raises(NotFound) as info:
            call()
        exc = info.value
        assert exc.code == 3004 and exc.message == "工具不存在：calc_rent"
        assert exc.data == {"tools": ["calc_loan", "calc_tax"]}
        assert "calc_loan" in exc.detail and "calc_tax" in exc.detail


def test_registering_a_name_twice_is_refused() -> None:
    reg = registry_of("calc_tax")
    with pytest.raises(ValueError, match="calc_tax"):
        reg.register(make_tool([FieldSpec("n", "int", True, 0, 9, ("a",))], "calc_tax"))
    with pytest.raises(ValueError, match="dup"):
        registry_of("dup", "dup")
    assert reg.names() == ["calc_tax"]
