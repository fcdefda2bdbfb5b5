"""Text that cannot be encoded: lone surrogates (``"\\udcff"``) and NUL.

A JSON body may carry them as escapes (``"\\udcff"``, ``"\\u0000"``), a command line as bytes
that are not UTF-8 (Python decodes them to lone surrogates). Every later step that encodes text
(the tokenizer, the store, a log line, the response) would fail on them, so they are rejected at
the door with 3002 (:class:`~zhiwen.errors.WrongParameterType`), naming the field.

Example::

    >>> find_unencodable({"messages": [{"content": "你好\\udcff"}]})
    ('messages.0.content', '\\udcff')
    >>> require_clean_text("怎么安装", "question")
    '怎么安装'
"""

from __future__ import annotations

import re
from typing import Any

from zhiwen.errors import WrongParameterType

_BAD = re.compile("[\x00\ud800-\udfff]")
# a JSON body can only carry these as \\u escapes: scan the bytes before parsing anything
_JSON_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")


def bad_char(text: str) -> str | None:
    """The first NUL or lone surrogate in ``text`` (a valid surrogate pair is never in a str)."""
    match = _BAD.search(text)
    return match.group() if match else None


def printable(text: str) -> str:
    """``text`` with every NUL / lone surrogate written as its escape (safe to echo back)."""
    return _BAD.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def find_unencodable(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, character) of the first key or string that cannot be encoded, or None.

    The path is :func:`printable`: a bad key is named by its escape, never echoed raw.
    """
    found = _find(value, path)
    return (printable(found[0]), found[1]) if found else None


def _find(value: Any, path: str) -> tuple[str, str] | None:
    if isinstance(value, str):
        char = bad_char(value)
        return (path or "body", char) if char else None
    if isinstance(value, dict):
        for key, item in value.items():
            key_text = str(key)
            where = f"{path}.{key_text}" if path else key_text
            char = bad_char(key_text)
            if char:
                return where, char
            found = _find(item, where)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _find(item, f"{path}.{i}" if path else str(i))
            if found:
                return found
    return None


def json_may_hold_unencodable(body: bytes) -> bool:
    """Cheap pre-check of a JSON body: does it contain a NUL or surrogate escape at all?"""
    return bool(_JSON_ESCAPE.search(body))


def describe(char: str) -> str:
    return "NUL 字符" if char == "\x00" else f"无法编码的字符 U+{ord(char):04X}"


def unencodable_error(field: str, char: str) -> WrongParameterType:
    return WrongParameterType(
        f"{field} holds an unencodable character U+{ord(char):04X}",
        message=f"参数类型错误：{field}（含有{describe(char)}，请使用 UTF-8 文本）",
        data={"field": field},
    )


def require_clean_text(text: str, field: str) -> str:
    """``text`` unchanged, or :class:`WrongParameterType` (3002) naming ``field``."""
    char = bad_char(text)
    if char:
        raise unencodable_error(field, char)
    return text
