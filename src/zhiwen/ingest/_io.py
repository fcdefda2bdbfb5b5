"""File reading with ingest-grade errors: one clear :class:`IngestError` naming file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from zhiwen.errors import IngestError


def require_path(path: Path) -> Path:
    if not path.exists():
        raise IngestError(f"path not found: {path}", message=f"导入失败：路径不存在：{path}")
    return path


def read_utf8(path: Path) -> str:
    """Read a UTF-8 file (a BOM is dropped); undecodable bytes raise :class:`IngestError`."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise IngestError(
            f"{path}:{line}: not valid UTF-8 (byte offset {exc.start}); convert it to UTF-8 first",
            message=f"导入失败：文件不是 UTF-8 编码：{path}（第 {line} 行）",
        ) from exc
    except OSError as exc:
        raise IngestError(f"{path}: {exc}", message=f"导入失败：无法读取文件：{path}") from exc


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line; a bad line names file:line."""
    text = read_utf8(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(
                f"{path}:{lineno}: malformed JSON line: {exc.msg} (column {exc.colno})",
                message=f"导入失败：JSON 行格式错误：{path} 第 {lineno} 行",
            ) from exc
        if not isinstance(obj, dict):
            raise IngestError(
                f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}",
                message=f"导入失败：JSON 行应为对象：{path} 第 {lineno} 行",
            )
        yield lineno, obj


def empty_corpus(path: Path, what: str) -> IngestError:
    return IngestError(
        f"no documents found in {path} ({what})",
        message=f"导入失败：未找到任何文档：{path}",
    )
