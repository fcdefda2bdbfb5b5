"""Columnar metadata for the embedded store: filters become numpy boolean masks.

Each metadata field is kept as typed, row-aligned arrays, so a :class:`~zhiwen.store.filters.Filter`
is evaluated with a handful of vectorised comparisons instead of one Python call per chunk.
The semantics are exactly :meth:`Filter.matches` (Python ``==``: ``True == 1``, a missing field is
``None``, range operators never match strings, bools or missing values); the property test in
``tests/store/test_embedded.py`` checks the two agree.

Example::

    cols = MetadataColumns.build([{"cat": "soup", "n": 2}, {"cat": "meat"}])
    cols.mask(parse_filters({"n": {"gte": 1}}))   # array([ True, False])
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zhiwen.store.filters import Condition, Filter

# Kinds of a stored value; anything else (lists, dicts) is stored but never equals a scalar.
_NONE, _STR, _NUM, _BOOL, _OTHER = 0, 1, 2, 3, 4


@dataclass(slots=True)
class Column:
    """One field over all rows: a kind code per row plus the value in the array of its kind."""

    kind: np.ndarray  # int8: _NONE (missing or null), _STR, _NUM, _BOOL, _OTHER
    num: np.ndarray  # float64: numbers and bools (as 0/1), NaN elsewhere
    codes: np.ndarray  # int32: index into ``categories`` for strings, -1 elsewhere
    categories: dict[str, int] = field(default_factory=dict)

    @classmethod
    def empty(cls, n: int) -> Column:
        return cls(
            kind=np.zeros(n, np.int8),
            num=np.full(n, np.nan),
            codes=np.full(n, -1, np.int32),
        )

    def __len__(self) -> int:
        return len(self.kind)


def _kind_of(value: Any) -> int:
    if value is None:
        return _NONE
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, str):
        return _STR
    if isinstance(value, int | float):
        return _NUM
    return _OTHER


class MetadataColumns:
    """Row-aligned typed columns for every metadata field seen; append-only (rows are tombstoned)."""

    def __init__(self, n_rows: int = 0, columns: dict[str, Column] | None = None) -> None:
        self.n_rows = n_rows
        self.columns: dict[str, Column] = columns or {}

    @classmethod
    def build(cls, metadatas: Sequence[Mapping[str, Any]]) -> MetadataColumns:
        return cls().append(metadatas)

    def append(self, metadatas: Sequence[Mapping[str, Any]]) -> MetadataColumns:
        """A new object with ``metadatas`` appended as rows (the old one stays valid for readers)."""
        start, extra = self.n_rows, len(metadatas)
        n = start + extra
        fields = set(self.columns)
        for md in metadatas:
            fields.update(md)
        out: dict[str, Column] = {}
        for name in fields:
            old = self.columns.get(name)
            col = Column.empty(n)
            if old is not None:
                col.kind[:start] = old.kind
                col.num[:start] = old.num
                col.codes[:start] = old.codes
                col.categories = dict(old.categories)
            for i, md in enumerate(metadatas, start):
                if name not in md:
                    continue
                value = md[name]
                kind = _kind_of(value)
                col.kind[i] = kind
                if kind in (_NUM, _BOOL):
                    col.num[i] = float(value)
                elif kind == _STR:
                    col.codes[i] = col.categories.setdefault(value, len(col.categories))
            out[name] = col
        return MetadataColumns(n, out)

    def present_fields(self, rows: np.ndarray) -> set[str]:
        """Fields with a non-null value in at least one of ``rows`` (a boolean row mask)."""
        return {name for name, col in self.columns.items() if bool(np.any(col.kind[rows] != _NONE))}

    def mask(self, filters: Filter | None) -> np.ndarray | None:
        """Rows matching ``filters`` (AND of its conditions), or None when there is no filter."""
        if not filters:
            return None
        result = np.ones(self.n_rows, bool)
        for cond in filters.conditions:
            result &= self._condition(cond)
        return result

    def _eq(self, col: Column | None, value: Any) -> np.ndarray:
        n = self.n_rows
        if col is None:  # field never seen: every row is "missing" (None)
            return np.full(n, value is None)
        kind = _kind_of(value)
        if kind == _NONE:
            return col.kind == _NONE
        if kind == _STR:
            code = col.categories.get(value)
            return np.zeros(n, bool) if code is None else col.codes == code
        if kind in (_NUM, _BOOL):
            # Python equality across numbers and bools: True == 1 == 1.0
            return col.num == float(value)
        return np.zeros(n, bool)

    def _condition(self, cond: Condition) -> np.ndarray:
        col = self.columns.get(cond.field)
        op, value = cond.op, cond.value
        if op == "eq":
            return self._eq(col, value)
        if op == "ne":
            return ~self._eq(col, value)
        if op in ("in", "nin"):
            hit = np.zeros(self.n_rows, bool)
            for v in value:
                hit |= self._eq(col, v)
            return hit if op == "in" else ~hit
        if col is None:
            return np.zeros(self.n_rows, bool)
        numeric = col.kind == _NUM
        with np.errstate(invalid="ignore"):
            if op == "gt":
                cmp = col.num > value
            elif op == "gte":
                cmp = col.num >= value
            elif op == "lt":
                cmp = col.num < value
            else:
                cmp = col.num <= value
        return cmp & numeric

    # -- persistence: flat arrays for np.savez (no pickle) ----------------------------------------
    def to_arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {"cols.n_rows": np.array([self.n_rows], np.int64)}
        for i, (name, col) in enumerate(self.columns.items()):
            cats = sorted(col.categories, key=col.categories.__getitem__)
            out[f"cols.{i}.name"] = pack_strs([name])
            out[f"cols.{i}.kind"] = col.kind
            out[f"cols.{i}.num"] = col.num
            out[f"cols.{i}.codes"] = col.codes
            out[f"cols.{i}.cats"] = pack_strs(cats)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> MetadataColumns:
        n_rows = int(arrays["cols.n_rows"][0])
        columns: dict[str, Column] = {}
        i = 0
        while f"cols.{i}.name" in arrays:
            name = unpack_strs(arrays[f"cols.{i}.name"])[0]
            cats = unpack_strs(arrays[f"cols.{i}.cats"])
            columns[name] = Column(
                kind=arrays[f"cols.{i}.kind"],
                num=arrays[f"cols.{i}.num"],
                codes=arrays[f"cols.{i}.codes"],
                categories={c: j for j, c in enumerate(cats)},
            )
            i += 1
        return cls(n_rows, columns)


def pack_strs(values: Sequence[str]) -> np.ndarray:
    """Strings → one uint8 array (JSON, any character allowed), so np.savez needs no pickle."""
    return np.frombuffer(json.dumps(list(values), ensure_ascii=False).encode("utf-8"), np.uint8)


def unpack_strs(data: np.ndarray) -> list[str]:
    values: list[str] = json.loads(bytes(data).decode("utf-8"))
    return values
