"""Metadata filters, one small language shared by every store backend and the API.

A filter is a conjunction of :class:`Condition` s. The dict form used by the API and apps::

    {"category": "soup",                      # equals
     "difficulty": {"lte": 2},                 # range (gt, gte, lt, lte)
     "district": {"in": ["浦东新区", "徐汇区"]},  # membership
     "decoration": {"nin": ["毛坯"]},           # exclusion
     "elevator": {"ne": False}}

The CLI form is ``key=value``, ``key!=value``, ``key>=3``, ``key<=3``, ``key>3``, ``key<3``,
``key=a|b`` (in).

A filter on a field the knowledge base does not have would silently match nothing;
:func:`check_filter_fields` rejects it instead, naming the fields there are
(``Store.metadata_fields()``).

Example::

    >>> f = parse_filters({"difficulty": {"lte": 2}, "category": "soup"})
    >>> f.matches({"difficulty": 1, "category": "soup"})
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from zhiwen.errors import InvalidParameter

Op = Literal["eq", "ne", "in", "nin", "gt", "gte", "lt", "lte"]
OPS: tuple[str, ...] = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte")
RANGE_OPS = frozenset({"gt", "gte", "lt", "lte"})
_FIELD_RE = re.compile(r"^[A-Za-z_\u4e00-\u9fff][\w\u4e00-\u9fff.\-]{0,63}$")


@dataclass(frozen=True, slots=True)
class Condition:
    field: str
    op: Op
    value: Any

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        actual = metadata.get(self.field)
        op, value = self.op, self.value
        if op == "eq":
            return bool(actual == value)
        if op == "ne":
            return bool(actual != value)
        if op == "in":
            return actual in value
        if op == "nin":
            return actual not in value
        if actual is None or isinstance(actual, bool) or not isinstance(actual, int | float):
            return False
        if op == "gt":
            return bool(actual > value)
        if op == "gte":
            return bool(actual >= value)
        if op == "lt":
            return bool(actual < value)
        return bool(actual <= value)


@dataclass(frozen=True, slots=True)
class Filter:
    conditions: tuple[Condition, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        return all(c.matches(metadata) for c in self.conditions)

    def fields(self) -> set[str]:
        return {c.field for c in self.conditions}

    def and_(self, other: Filter | None) -> Filter:
        if not other:
            return self
        return Filter(self.conditions + other.conditions)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, dict[str, Any]] = {}
        for c in self.conditions:
            out.setdefault(c.field, {})[c.op] = c.value
        return out


def _check_field(name: str) -> str:
    if not isinstance(name, str) or not _FIELD_RE.match(name):
        raise InvalidParameter(f"invalid filter field {name!r}", message=f"过滤字段无效：{name}")
    return name


def _check_value(field: str, op: str, value: Any) -> Any:
    if op in ("in", "nin"):
        if not isinstance(value, list | tuple | set) or not value:
            raise InvalidParameter(
                f"filter {field}.{op} needs a non-empty list", message=f"过滤条件 {field} 需要非空列表"
            )
        return tuple(value)
    if op in RANGE_OPS:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidParameter(
                f"filter {field}.{op} needs a number", message=f"过滤条件 {field} 需要数字"
            )
        return value
    if value is not None and not isinstance(value, str | int | float | bool):
        raise InvalidParameter(f"filter {field}.{op} needs a scalar", message=f"过滤条件 {field} 取值无效")
    return value


def parse_filters(spec: Mapping[str, Any] | Filter | Iterable[Condition] | None) -> Filter:
    """Normalise the dict form (or a Filter, or conditions) into a validated :class:`Filter`."""
    if spec is None:
        return Filter()
    if isinstance(spec, Filter):
        return spec
    if not isinstance(spec, Mapping):
        return Filter(tuple(spec))
    conds: list[Condition] = []
    for name, cond in spec.items():
        field = _check_field(name)
        if isinstance(cond, Mapping):
            if not cond:
                raise InvalidParameter(f"empty condition for {field}", message=f"过滤条件 {field} 为空")
            for op, value in cond.items():
                if op not in OPS:
                    raise InvalidParameter(
                        f"unknown filter operator {op!r}", message=f"未知的过滤运算符：{op}"
                    )
                conds.append(Condition(field, op, _check_value(field, op, value)))
        elif isinstance(cond, list | tuple | set):
            conds.append(Condition(field, "in", _check_value(field, "in", cond)))
        else:
            conds.append(Condition(field, "eq", _check_value(field, "eq", cond)))
    return Filter(tuple(conds))


_CLI_RE = re.compile(r"^\s*([^=!<>\s]+)\s*(>=|<=|!=|=|>|<)\s*(.*?)\s*$")
_CLI_OPS: dict[str, Op] = {"=": "eq", "!=": "ne", ">=": "gte", "<=": "lte", ">": "gt", "<": "lt"}


def coerce_scalar(text: str) -> str | int | float | bool:
    """``"3"`` → 3, ``"2.5"`` → 2.5, ``"true"`` → True, anything else stays a string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_cli_filter(expr: str) -> Condition:
    """Parse one ``--filter`` argument such as ``difficulty<=2`` or ``category=soup|staple``."""
    m = _CLI_RE.match(expr)
    if not m or not m.group(3):
        raise InvalidParameter(
            f"cannot parse filter {expr!r}; use key=value, key>=3, key=a|b",
            message=f"无法解析过滤条件：{expr}",
        )
    field, sym, raw = _check_field(m.group(1)), m.group(2), m.group(3)
    op = _CLI_OPS[sym]
    if "|" in raw and op in ("eq", "ne"):
        values = tuple(coerce_scalar(v) for v in raw.split("|") if v)
        return Condition(field, "in" if op == "eq" else "nin", values)
    return Condition(field, op, _check_value(field, op, coerce_scalar(raw)))


_MAX_LISTED_FIELDS = 30


def check_filter_fields(
    spec: Mapping[str, Any] | Filter | Iterable[Condition] | None, known: Iterable[str]
) -> Filter:
    """The parsed filter, after checking that every field it names is one of ``known``.

    An unknown field raises :class:`InvalidParameter` (code 3003, HTTP 422) whose message lists
    the known fields, e.g. ``未知的过滤字段：foo（可用字段：category、difficulty）``; ``data``
    has ``unknown_fields`` and ``known_fields``. ``known`` is usually ``store.metadata_fields()``.
    """
    flt = parse_filters(spec)
    fields = set(known)
    unknown = sorted(flt.fields() - fields)
    if not unknown:
        return flt
    listed = sorted(fields)
    if not listed:
        available = "知识库中没有可过滤的元数据字段"
    elif len(listed) > _MAX_LISTED_FIELDS:
        available = "可用字段：" + "、".join(listed[:_MAX_LISTED_FIELDS]) + f" 等 {len(listed)} 个"
    else:
        available = "可用字段：" + "、".join(listed)
    raise InvalidParameter(
        f"unknown filter field(s) {unknown}; known: {listed}",
        message=f"未知的过滤字段：{'、'.join(unknown)}（{available}）",
        data={"unknown_fields": unknown, "known_fields": listed},
    )
