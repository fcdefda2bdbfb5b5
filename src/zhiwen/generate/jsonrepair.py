"""Lenient JSON parsing for model output.

Chat models asked for JSON often wrap it in a ```json fence, add prose around it, leave trailing
commas, use single quotes or Python literals. :func:`parse_json_lenient` tries strict parsing
first, then each repair in turn, and raises :class:`JSONRepairError` when nothing parses.

Example::

    >>> parse_json_lenient("好的：```json\\n{'route': 'list', 'n': 3,}\\n```")
    {'route': 'list', 'n': 3}
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE_RE = re.compile(r"```(?:json|JSON|javascript|js)?\s*\n?(.*?)```", re.S)
_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")
_LINE_COMMENT_RE = re.compile(r'^(\s*)//.*$|(?<=[,{\[])\s*//[^\n"]*$', re.M)


class JSONRepairError(ValueError):
    """The text holds no JSON value we could repair."""


def _loads(text: str) -> Any:
    return json.loads(text)


def _strip_fences(text: str) -> str:
    m = _FENCE_RE.search(text)
    return m.group(1).strip() if m else text


def extract_first_json(text: str) -> str | None:
    """The first balanced ``{...}`` or ``[...]`` in ``text`` (string- and escape-aware)."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    start = min(starts)
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in ("'", '"'):
            quote = ch
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return text[start : i + 1]
    return None


def _single_to_double_quotes(text: str) -> str:
    """Rewrite single-quoted strings as JSON strings, leaving double-quoted ones alone."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != "'":
                if text[j] == "\\" and j + 1 < n:
                    buf.append(text[j + 1] if text[j + 1] == "'" else text[j : j + 2])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            out.append(json.dumps("".join(buf), ensure_ascii=False))
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _fix_common(text: str) -> str:
    text = _LINE_COMMENT_RE.sub(r"\1", text)
    text = _TRAILING_COMMA_RE.sub(r"\1", text)
    return text


def parse_json_lenient(text: str) -> Any:
    """Parse ``text`` as JSON, repairing fences, prose, trailing commas, quotes and literals."""
    if not isinstance(text, str) or not text.strip():
        raise JSONRepairError("empty text")
    candidates: list[str] = []
    stripped = text.strip()
    for cand in (stripped, _strip_fences(stripped), extract_first_json(_strip_fences(stripped))):
        if cand and cand not in candidates:
            candidates.append(cand)
    for cand in candidates:
        try:
            return _loads(cand)
        except ValueError:
            pass
    for cand in candidates:
        fixed = _fix_common(cand)
        for attempt in (fixed, _fix_common(_single_to_double_quotes(fixed))):
            try:
                return _loads(attempt)
            except ValueError:
                pass
        # Python literals (True/None, single quotes) as a last resort; literal_eval is safe
        try:
            value = ast.literal_eval(fixed)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict | list):
            return value
    raise JSONRepairError(f"no JSON value found in: {stripped[:120]!r}")
