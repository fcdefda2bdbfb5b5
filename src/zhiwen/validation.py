"""Pydantic's validation errors in Chinese, guards for numbers given in the wrong unit, and the one
check of a question.

One table, :data:`PREDICATES`, words every pydantic error type a user can cause in Chinese. The
REST handlers (:mod:`zhiwen.api.handlers`), the OpenAI front door and the tools
(:mod:`zhiwen.tools.base`, so the CLI and LLM tool calls too) all build their messages from it,
so no user reads pydantic's English (``Input should be less than 1``); that raw text goes to the
logs and the error's ``data`` (:func:`raw_errors`).

:func:`unit_guard` refuses a number that was plainly given in another unit (a rate as a fraction
where a percent is expected, a price in 万元 where 元 is expected) with a Chinese hint, as a
``zhiwen_unit`` :class:`~pydantic_core.PydanticCustomError` whose message is shown as it is.

:func:`question_text` is the one check of a question every interface and app asks (REST's
request models, the OpenAI front door, the CLI, an app's service): stripped, not empty, not over
a limit; :class:`QuestionRefused` (422 / 3003) says which, in Chinese.

Example::

    >>> describe({"type": "less_than", "loc": ("body", "ratio"), "ctx": {"lt": 1.0}}, "ratio")
    'ratio 必须小于 1'
    >>> describe({"type": "int_parsing", "loc": ("top_k",)}, "top_k（来源数量）")
    'top_k（来源数量）应为整数'

    def _percent(value: float) -> str | None:
        return "利率请按百分数填写，如 3.1 表示 3.1%" if 0 < value < 0.5 else None

    class LoanArgs(BaseModel):
        rate: Annotated[float, Field(ge=0, le=24), unit_guard(_percent)]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ValidationInfo, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import PydanticCustomError

from zhiwen.chinese.dates import read_day
from zhiwen.errors import InvalidParameter

Kind = Literal["json", "missing", "type", "value"]
QuestionProblem = Literal["empty", "too_long"]

_DATE = "日期格式无效，应为 YYYY-MM-DD，如 2026-01-15"
_DATETIME = "时间格式无效，应为 ISO 8601，如 2026-01-15T09:30:00"

# pydantic error type → what is wrong, after the field's name. ``{…}`` are the error's ctx.
PREDICATES: dict[str, str] = {
    # values
    "greater_than": "必须大于 {gt}",
    "greater_than_equal": "必须大于等于 {ge}",
    "less_than": "必须小于 {lt}",
    "less_than_equal": "必须小于等于 {le}",
    "multiple_of": "必须是 {multiple_of} 的整数倍",
    "finite_number": "必须是有限的数",
    "string_too_short": "不能为空",
    "string_too_long": "过长（最多 {max_length} 个字符）",
    "too_short": "至少需要 {min_length} 项",
    "too_long": "最多 {max_length} 项",
    "literal_error": "取值无效，可选：{expected}",
    "enum": "取值无效，可选：{expected}",
    "string_pattern_mismatch": "格式无效",
    "value_error": "取值无效",
    "assertion_error": "取值无效",
    "url_parsing": "不是有效的网址",
    "url_scheme": "网址协议无效，可选：{expected_schemes}",
    "date_past": "必须是过去的日期",
    "date_future": "必须是将来的日期",
    # types
    "int_type": "应为整数",
    "int_parsing": "应为整数",
    "int_from_float": "应为整数",
    "float_type": "应为数字",
    "float_parsing": "应为数字",
    "decimal_type": "应为数字",
    "decimal_parsing": "应为数字",
    "bool_type": "应为 true 或 false",
    "bool_parsing": "应为 true 或 false",
    "string_type": "应为字符串",
    "string_unicode": "应为 UTF-8 字符串",
    "bytes_type": "应为字符串",
    "list_type": "应为列表",
    "tuple_type": "应为列表",
    "set_type": "应为列表",
    "dict_type": "应为 JSON 对象",
    "model_type": "应为 JSON 对象",
    "model_attributes_type": "应为 JSON 对象",
    "is_instance_of": "类型错误",
    "date_type": _DATE,
    "date_parsing": _DATE,
    "date_from_datetime_parsing": _DATE,
    "date_from_datetime_inexact": _DATE,
    "datetime_type": _DATETIME,
    "datetime_parsing": _DATETIME,
    "datetime_from_date_parsing": _DATETIME,
    "none_required": "必须为空（null）",
}

# error types whose cause is the value's type (3002) rather than its value (3003 / 2001)
_TYPE_SUFFIXES = ("_type", "_parsing", "_inexact")
_TYPE_ERRORS = frozenset({"int_from_float", "is_instance_of", "string_unicode"})


def kind_of(err: Mapping[str, Any]) -> Kind:
    """What a pydantic error is about: malformed JSON, a missing field, a wrong type or a bad value.

    A ``zhiwen_*`` custom error (e.g. a unit guard) is always about the value.
    """
    etype = str(err.get("type", ""))
    if etype == "json_invalid":
        return "json"
    if etype == "missing":
        return "missing"
    if not etype.startswith("zhiwen_") and (etype in _TYPE_ERRORS or etype.endswith(_TYPE_SUFFIXES)):
        return "type"
    return "value"


def _number(value: Any) -> Any:
    """1.0 → 1 and 1e10 → 10000000000 (what a person writes); other values as they are."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return int(value)
    return value


def _expected(value: Any) -> str:
    """pydantic's ``'a', 'b' or 'c'`` → ``'a'、'b'、'c'``."""
    return re.sub(r"(?<=')(?:, | or )(?=')", "、", str(value))


def predicate(err: Mapping[str, Any]) -> str | None:
    """The Chinese predicate of one pydantic error (``必须小于 1``); a custom ``zhiwen_*`` error's
    own message; None for an error type the table does not know."""
    etype = str(err.get("type", ""))
    if etype.startswith("zhiwen_"):
        return str(err.get("msg", "")) or None
    template = PREDICATES.get(etype)
    if template is None:
        return None
    ctx = {k: _number(v) for k, v in dict(err.get("ctx") or {}).items()}
    for key in ("expected", "expected_schemes"):
        if key in ctx:
            ctx[key] = _expected(ctx[key])
    if etype == "string_too_short" and isinstance(ctx.get("min_length"), int) and ctx["min_length"] > 1:
        template = "至少需要 {min_length} 个字符"
    try:
        return template.format(**ctx)
    except (KeyError, IndexError, ValueError):
        return re.sub(r"\s*\{[^}]*\}", "", template).rstrip("：，") or None


def joined(field: str, text: str) -> str:
    """``top_k`` + ``必须大于 0`` → ``top_k 必须大于 0``: a space only after an ASCII name."""
    if not field:
        return text
    return f"{field} {text}" if field[-1].isascii() else f"{field}{text}"


def describe(err: Mapping[str, Any], field: str) -> str:
    """One Chinese sentence for one pydantic error about ``field`` (a name, maybe with its label).

    A custom ``zhiwen_*`` error is already a sentence and is returned as it is; an unknown error
    type reads ``参数取值无效：field`` (or ``参数类型错误：field`` for a type error).
    """
    etype = str(err.get("type", ""))
    if etype.startswith("zhiwen_"):
        return str(err.get("msg", "")) or f"参数取值无效：{field}"
    if etype == "extra_forbidden":
        return f"未知参数：{field}"
    if etype == "missing":
        return f"缺少必需参数：{field}"
    text = predicate(err)
    if text is None:
        return f"参数类型错误：{field}" if kind_of(err) == "type" else f"参数取值无效：{field}"
    return joined(field, text)


def raw_errors(errors: Iterable[Mapping[str, Any]], limit: int = 20) -> list[dict[str, Any]]:
    """pydantic's own (English) errors, trimmed for logs and a response's ``data``: field, type,
    msg and, for a short scalar, the input."""
    out = []
    for err in list(errors)[:limit]:
        item: dict[str, Any] = {
            "field": ".".join(str(p) for p in err.get("loc", ())),
            "type": err.get("type"),
            "msg": err.get("msg"),
        }
        value = err.get("input")
        if isinstance(value, float) and not math.isfinite(value):
            item["input"] = str(value)  # JSON has no inf / nan
        elif isinstance(value, int | float | bool) or (isinstance(value, str) and len(value) <= 100):
            item["input"] = value
        out.append(item)
    return out


def summary(errors: Iterable[Mapping[str, Any]]) -> str:
    """Every error of a ``ValidationError`` in Chinese, one clause each (for config files)::

    >>> summary([{"type": "less_than", "loc": ("ratio",), "ctx": {"lt": 1}},
    ...          {"type": "missing", "loc": ("a", "b")}])
    'ratio 必须小于 1；缺少必需参数：a.b'
    """
    return "；".join(describe(e, ".".join(str(p) for p in e.get("loc", ()))) for e in errors)


# -- unit guards -----------------------------------------------------------------------------
UnitCheck = Callable[[float], "str | None"]


def unit_error(message: str) -> PydanticCustomError:
    """A validation error whose Chinese ``message`` every interface shows as it is."""
    return PydanticCustomError("zhiwen_unit", message)


def _as_number(value: Any) -> float | None:
    """A number, or a string lax mode would read as one ("30"); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def unit_guard(check: UnitCheck) -> WrapValidator:
    """A field validator: ``check(value)`` returns a hint when the number looks like another unit.

    It runs before the field's own bounds (so ``down_payment_ratio: 30`` gets the hint, not
    ``必须小于 1``), on a number or a numeric string; anything else (``None``, a word) goes to
    the field's own validation as it is.
    """

    def wrap(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        number = _as_number(value)
        if number is not None and number == number:  # NaN is the field's own business
            hint = check(number)
            if hint:
                raise unit_error(hint)
        return handler(value)

    return WrapValidator(wrap)


# -- dates -----------------------------------------------------------------------------------
def parse_day(value: Any) -> date:
    """A calendar day as people write it: ``2026-01-15``, ``2026/1/15``, ``2026.01.15``,
    ``20260115``, ``2026年1月15日``; a ``date`` as it is. A number (a Unix timestamp, or
    20260115 as an integer) is refused rather than read as seconds since 1970.

    Raises :class:`~pydantic_core.PydanticCustomError` ``date_parsing`` / ``date_type``, which
    :data:`PREDICATES` words as 「日期格式无效，应为 YYYY-MM-DD，如 2026-01-15」.

    >>> parse_day("2026年1月15日"), parse_day("20260115")
    (datetime.date(2026, 1, 15), datetime.date(2026, 1, 15))
    """
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("date_type", "Input should be a valid date string")
    try:
        return read_day(value)
    except ValueError:
        raise PydanticCustomError("date_parsing", "Input should be a valid date") from None


Day = Annotated[date, BeforeValidator(parse_day)]


# -- questions -------------------------------------------------------------------------------
EMPTY_QUESTION = "问题不能为空"


class QuestionRefused(InvalidParameter):
    """A question that is empty or too long (422 / 3003); ``problem`` says which.

    :meth:`as_validation_error` is the same refusal inside a pydantic model (a ``zhiwen_*``
    error, whose message every interface shows as it is).
    """

    def __init__(self, problem: QuestionProblem, detail: str, message: str) -> None:
        super().__init__(detail, message=message)
        self.problem: QuestionProblem = problem

    def as_validation_error(self) -> PydanticCustomError:
        return PydanticCustomError(f"zhiwen_{self.problem}", self.message)


def question_text(value: str, limit: int | None = None) -> str:
    """``value`` stripped, or :class:`QuestionRefused`: empty, or over ``limit`` characters
    (None: no limit).

    >>> question_text("  红烧肉怎么做？ ", 2000)
    '红烧肉怎么做？'
    >>> question_text("   ", 2000)
    Traceback (most recent call last):
    zhiwen.validation.QuestionRefused: 问题不能为空: empty question
    >>> question_text("长" * 2001, 2000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    zhiwen.validation.QuestionRefused: 问题过长：2001 个字符，最多 2000 个: question has 2001 ...
    """
    text = value.strip()
    if not text:
        raise QuestionRefused("empty", "empty question", EMPTY_QUESTION)
    if limit is not None and len(text) > limit:
        raise QuestionRefused(
            "too_long",
            f"question has {len(text)} characters, limit {limit}",
            f"问题过长：{len(text)} 个字符，最多 {limit} 个",
        )
    return text
