"""The body of ``POST /api/v1/kbs/import``: a multipart upload streamed into one spool file.

The part ``file`` is written to the spool file a chunk at a time, off the event loop; the small
form fields (``name``, ``replace``) are kept. The request is bounded by ``limit`` while the
bytes arrive (413), a malformed or unfinished body is a 422 and a client that hangs up a 499;
the caller removes the spool file whatever happens.

Example::

    form = await receive_bundle(request.headers, request.stream(), spool, limit=200 << 20)
    form.fields.get("name"), form.has_file
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from zhiwen.api.middleware import ClientClosed
from zhiwen.api.upload_body import MAX_FIELD_BYTES, request_too_large
from zhiwen.errors import InvalidParameter, MissingParameter

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

FILE_FIELD = "file"


def _malformed(reason: str) -> InvalidParameter:
    return InvalidParameter(reason, message=f"上传内容格式有误：{reason}")


@dataclass(slots=True)
class BundleForm:
    """What a bundle upload carried: its small fields, and whether the file part came."""

    fields: dict[str, str] = field(default_factory=dict)
    has_file: bool = False


class _Parts:
    """python-multipart's callbacks: the ``file`` part to the spool file, fields in memory."""

    def __init__(self, out: IO[bytes], form: BundleForm) -> None:
        self.out = out
        self.form = form
        self.headers: dict[bytes, bytes] = {}
        self.header = [b"", b""]
        self.part: str | None = None  # "file", a field name, or None (skipped)
        self.value = b""
        self.pending: list[bytes] = []
        self.complete = False

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self.on_part_begin,
            "on_header_field": lambda d, s, e: self._add(0, d[s:e]),
            "on_header_value": lambda d, s, e: self._add(1, d[s:e]),
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
            "on_end": self.on_end,
        }

    def _add(self, i: int, data: bytes) -> None:
        self.header[i] += data

    def on_part_begin(self) -> None:
        self.headers, self.part, self.value = {}, None, b""

    def on_header_end(self) -> None:
        self.headers[self.header[0].lower()] = self.header[1]
        self.header = [b"", b""]

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.headers.get(b"content-disposition", b""))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        if b"filename" in options:
            if name == FILE_FIELD and self.form.has_file:
                raise _malformed("只能上传一个文件")
            self.part = FILE_FIELD if name == FILE_FIELD else None
            self.form.has_file = self.form.has_file or name == FILE_FIELD
        else:
            self.part = "field:" + name

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.part == FILE_FIELD:
            self.pending.append(data[start:end])
        elif self.part is not None:
            self.value += data[start:end]
            if len(self.value) > MAX_FIELD_BYTES:
                raise _malformed(f"表单字段过长（上限 {MAX_FIELD_BYTES // 1024} KB）")

    def on_part_end(self) -> None:
        if self.part is not None and self.part.startswith("field:"):
            self.form.fields[self.part[6:]] = self.value.decode("utf-8", "replace")

    def on_end(self) -> None:
        self.complete = True

    def flush(self) -> None:
        pending, self.pending = self.pending, []
        for data in pending:
            self.out.write(data)


async def receive_bundle(
    headers: Mapping[str, str], body: AsyncIterator[bytes], spool: Path, *, limit: int
) -> BundleForm:
    """Stream the multipart ``body`` (its ``file`` part into ``spool``); see the module docstring."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise request_too_large(limit, int(declared))
    _, params = parse_options_header(headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if not boundary:
        raise _malformed("缺少 multipart boundary")
    form = BundleForm()
    seen = 0
    with open(spool, "wb") as out:
        parts = _Parts(out, form)
        try:
            parser = MultipartParser(boundary, parts.callbacks())
            async for chunk in body:
                seen += len(chunk)
                if seen > limit:
                    raise request_too_large(limit)
                parser.write(chunk)
                if parts.pending:
                    await run_in_threadpool(parts.flush)
        except FormParserError as exc:
            raise _malformed(str(exc)) from exc
        except ClientDisconnect as exc:
            raise ClientClosed("client disconnected during the upload") from exc
    if not parts.complete:
        raise _malformed("上传内容不完整（缺少结尾的 boundary）")
    if not form.has_file:
        raise MissingParameter("no file in the upload", message="缺少必需参数：file（导出文件）")
    return form
