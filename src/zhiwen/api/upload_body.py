"""The body of an upload: its multipart parts streamed into the upload's spool as they arrive.

Each file part (field ``files``, or ``file``) is written straight into the upload's spool folder
(:class:`zhiwen.uploads.UploadSlot`), a chunk at a time, off the event loop; nothing is buffered
whole and nothing is written twice. The limits are checked while the bytes arrive, before they
are written:

* the whole body past ``ingest.max_upload_bytes`` → 413 (a declared ``Content-Length`` over it is
  refused by the route before a byte is read);
* one file past ``ingest.max_file_bytes`` → 413 naming the file (a part that declares its own
  ``Content-Length`` over it is refused before its first byte);
* the queue's byte cap or a full disk → 507; a malformed or unfinished body → 422; a client that
  hangs up → 499.

Any refusal leaves nothing behind: the route closes the slot, which removes its folder.

Example::

    >>> slot = uploads.open_upload("policies", declared=None)
    >>> names = await receive_files(request.headers, request.stream(), slot, limit=200 << 20)
    >>> names
    ['通知.pdf', '制度.docx']
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from zhiwen.api.middleware import ClientClosed
from zhiwen.errors import InvalidParameter, MissingParameter, PayloadTooLarge
from zhiwen.uploads import UploadSlot

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

    from zhiwen.uploads.spool import SpoolFile

FILE_FIELDS = ("files", "file")
MAX_FILES = 200
MAX_FIELDS = 50
MAX_FIELD_BYTES = 1 << 20  # a form field that is not a file (never spooled, so bounded in memory)


def request_too_large(limit: int, size: int | None = None) -> PayloadTooLarge:
    """413 for an upload request over ``ingest.max_upload_bytes``."""
    data: dict[str, int] = {"max_bytes": limit}
    if size is not None:
        data["content_length"] = size
    return PayloadTooLarge(
        f"upload over {limit} bytes", message=f"上传内容过大（上限 {limit // 1024 // 1024} MB）", data=data
    )


def declared_upload_size(headers: Mapping[str, str], limit: int, what: str) -> int | None:
    """The upload's declared size, checked before a byte is read: over ``limit`` → 413; not
    ``multipart/form-data`` → 3002 saying what to send (``文件（字段名 files）``)."""
    declared = headers.get("content-length")
    size = int(declared) if declared and declared.isdigit() else None
    if size is not None and size > limit:
        raise request_too_large(limit, size)
    if not headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise InvalidParameter("expected multipart/form-data", message=f"请用 multipart/form-data 上传{what}")
    return size


def _malformed(reason: str) -> InvalidParameter:
    return InvalidParameter(reason, message=f"上传内容格式有误：{reason}")


class _Parts:
    """python-multipart's callbacks: the current part's headers, its spool file, its pending bytes."""

    def __init__(self, slot: UploadSlot, charset: str) -> None:
        self.slot = slot
        self.charset = charset
        self.headers: dict[bytes, bytes] = {}
        self.header = [b"", b""]
        self.target: SpoolFile | None = None
        self.is_field = False
        self.field_bytes = 0
        self.field_name = ""
        self.field_value = bytearray()  # a form field's value: small (MAX_FIELD_BYTES), kept in memory
        self.files = self.fields = 0
        self.pending: list[tuple[SpoolFile, bytes]] = []  # written off the event loop by flush()
        self.ended: list[SpoolFile] = []
        self.complete = False

    def callbacks(self) -> MultipartCallbacks:
        return {
            "on_part_begin": self.on_part_begin,
            "on_header_field": self.on_header_field,
            "on_header_value": self.on_header_value,
            "on_header_end": self.on_header_end,
            "on_headers_finished": self.on_headers_finished,
            "on_part_data": self.on_part_data,
            "on_part_end": self.on_part_end,
            "on_end": self.on_end,
        }

    def on_part_begin(self) -> None:
        self.headers, self.target, self.is_field, self.field_bytes = {}, None, False, 0
        self.field_name, self.field_value = "", bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header[0] += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header[1] += data[start:end]

    def on_header_end(self) -> None:
        self.headers[self.header[0].lower()] = self.header[1]
        self.header = [b"", b""]

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.headers.get(b"content-disposition", b""))
        if b"name" not in options:
            raise _malformed("Content-Disposition 缺少 name")
        if b"filename" not in options:
            self.fields += 1
            self.is_field = True
            self.field_name = self._decode(options[b"name"])
            if self.fields > MAX_FIELDS:
                raise _malformed(f"表单字段过多（最多 {MAX_FIELDS} 个）")
            return
        self.files += 1
        if self.files > MAX_FILES:
            raise _malformed(f"文件过多（一次最多 {MAX_FILES} 个）")
        if self._decode(options[b"name"]) in FILE_FIELDS:
            self.target = self.slot.open_file(self._decode(options[b"filename"]), self._declared())

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.target is not None:
            self.pending.append((self.target, data[start:end]))
        elif self.is_field:
            self.field_bytes += end - start
            if self.field_bytes > MAX_FIELD_BYTES:
                raise _malformed(f"表单字段过长（上限 {MAX_FIELD_BYTES // 1024} KB）")
            self.field_value += data[start:end]
        # a file under another field name is read past, never written

    def on_part_end(self) -> None:
        if self.target is not None:
            self.ended.append(self.target)
        elif self.is_field:  # e.g. format=faq: what the upload is
            self.slot.form[self.field_name] = self._decode(bytes(self.field_value)).strip()

    def on_end(self) -> None:
        self.complete = True

    def flush(self) -> None:
        """Write the bytes that arrived (each write checks the file's and the queue's limits)."""
        pending, ended = self.pending, self.ended
        self.pending, self.ended = [], []
        for target, data in pending:
            target.write(data)
        for target in ended:
            target.close()

    def _declared(self) -> int | None:
        raw = self.headers.get(b"content-length", b"").strip()
        return int(raw) if raw.isdigit() else None

    def _decode(self, raw: bytes) -> str:
        try:
            return raw.decode(self.charset)
        except UnicodeDecodeError:
            return raw.decode("latin-1")


def _parser(headers: Mapping[str, str], slot: UploadSlot) -> tuple[MultipartParser, _Parts]:
    _, params = parse_options_header(headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if not boundary:
        raise _malformed("缺少 multipart boundary")
    charset = params.get(b"charset", b"utf-8").decode("latin-1")
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "latin-1"
    parts = _Parts(slot, charset)
    try:
        return MultipartParser(boundary, parts.callbacks()), parts
    except FormParserError as exc:
        raise _malformed(str(exc)) from exc


async def receive_files(
    headers: Mapping[str, str], body: AsyncIterator[bytes], slot: UploadSlot, *, limit: int
) -> list[str]:
    """Stream the multipart ``body`` into ``slot``; the saved (sanitized, unique) file names."""
    parser, parts = _parser(headers, slot)
    seen = 0
    try:
        async for chunk in body:
            seen += len(chunk)
            if seen > limit:
                raise request_too_large(limit)
            parser.write(chunk)
            if parts.pending or parts.ended:
                await run_in_threadpool(parts.flush)
    except FormParserError as exc:
        raise _malformed(str(exc)) from exc
    except ClientDisconnect as exc:  # the client hung up mid-body: a 499, not a server error
        raise ClientClosed("client disconnected during the upload") from exc
    if not parts.complete:
        raise _malformed("上传内容不完整（缺少结尾的 boundary）")
    if not slot.names:
        raise MissingParameter("no files in the upload", message="缺少必需参数：files（至少一个文件）")
    return list(slot.names)
