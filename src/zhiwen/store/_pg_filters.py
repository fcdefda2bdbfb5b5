"""Translate a metadata :class:`~zhiwen.store.filters.Filter` into a parameterised SQL condition.

Same semantics as :meth:`Condition.matches` (the embedded store's reference), on the ``metadata``
JSONB column:

* ``eq``/``ne``/``in``/``nin`` on scalars use JSONB containment (``metadata @> '{"f": v}'``),
  which the GIN ``jsonb_path_ops`` index answers; a missing field and JSON ``null`` both count as
  ``None``, as ``dict.get`` does;
* ranges compare only JSON *numbers* (not booleans, not numeric strings) through
  :func:`numeric_expr`, the same expression the store indexes per numeric field, so a range filter
  can use a btree index.

Values always travel as query parameters; field names (already validated by ``filters.py``)
are rendered as quoted SQL literals so the planner can match the expression indexes.

Example::

    where, params = filter_sql(parse_filters({"difficulty": {"lte": 2}}))
    cur.execute(sql.SQL("SELECT id FROM chunks WHERE {}").format(where), params)
"""

from __future__ import annotations

import json
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from zhiwen.errors import InvalidParameter
from zhiwen.store.filters import Condition, Filter

_RANGE_SQL = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
# beyond this many values an IN list is one `= ANY(array)` instead of OR-ed containments
_MAX_OR_TERMS = 64


def json_dumps(obj: Any) -> str:
    """JSON for metadata (non-ASCII kept); a value JSON cannot hold is a clear error."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidParameter(
            f"metadata is not JSON-serialisable: {exc}", message=f"元数据无法保存为 JSON：{exc}"
        ) from exc


def numeric_expr(field: str, column: str = "metadata") -> sql.Composable:
    """``metadata.field`` as double precision when it is a JSON number, else NULL."""
    col, f = sql.Identifier(column), sql.Literal(field)
    return sql.SQL(
        "(CASE WHEN jsonb_typeof({col} -> {f}) = 'number' THEN ({col} ->> {f})::double precision END)"
    ).format(col=col, f=f)


def _is_none(field: str) -> sql.Composable:
    return sql.SQL("(metadata -> {f} IS NULL OR metadata -> {f} = 'null'::jsonb)").format(
        f=sql.Literal(field)
    )


def _equals(field: str, value: Any, params: list[Any]) -> sql.Composable:
    if value is None:
        return _is_none(field)
    params.append(Jsonb({field: value}, dumps=json_dumps))
    return sql.SQL("metadata @> %s")


def _member(field: str, values: tuple[Any, ...], params: list[Any]) -> sql.Composable:
    parts: list[sql.Composable] = []
    scalars = [v for v in values if v is not None]
    if None in values:
        parts.append(_is_none(field))
    if len(scalars) <= _MAX_OR_TERMS:
        parts.extend(_equals(field, v, params) for v in scalars)
    else:
        params.append([Jsonb(v, dumps=json_dumps) for v in scalars])
        parts.append(sql.SQL("metadata -> {f} = ANY(%s::jsonb[])").format(f=sql.Literal(field)))
    return sql.SQL("({})").format(sql.SQL(" OR ").join(parts))


def condition_sql(cond: Condition, params: list[Any]) -> sql.Composable:
    op = cond.op
    if op == "eq":
        return _equals(cond.field, cond.value, params)
    if op == "ne":
        return sql.SQL("NOT {}").format(_equals(cond.field, cond.value, params))
    if op == "in":
        return _member(cond.field, tuple(cond.value), params)
    if op == "nin":
        return sql.SQL("NOT {}").format(_member(cond.field, tuple(cond.value), params))
    params.append(float(cond.value))
    return sql.SQL("{expr} {op} %s::double precision").format(
        expr=numeric_expr(cond.field), op=sql.SQL(_RANGE_SQL[op])
    )


def filter_sql(flt: Filter | None) -> tuple[sql.Composable, list[Any]]:
    """``(condition, params)``; ``TRUE`` with no params for an empty filter."""
    params: list[Any] = []
    if not flt:
        return sql.SQL("TRUE"), params
    parts = [condition_sql(c, params) for c in flt.conditions]
    return sql.SQL(" AND ").join(parts), params
