"""Any folder of documents → parsed files, each detected by content and loaded by its loader.

:func:`parse_file` turns one file into a :class:`~zhiwen.ingest.model.ParsedFile` or raises
:class:`~zhiwen.ingest.limits.FileRejected` with a Chinese reason naming the file.
:func:`load_files` does it for a file or a whole folder and never stops at a bad file: every file
gets a :class:`FileResult` (``ok``, ``failed`` with its reason, or ``skipped`` for a file type
that holds no document). :func:`file_documents` turns the good ones into documents and chunks with
``source``, ``page``/``page_end`` and ``section`` on every chunk.

Document ids are the path relative to the folder: without suffix for markdown (as
:func:`~zhiwen.ingest.markdown.load_markdown` names them), with it for everything else, so
``报告.pdf`` and ``报告.docx`` side by side stay two documents.

Example::

    >>> results = load_files(Path("资料"), ocr="auto")
    >>> [(r.source, r.status, r.error) for r in results if r.status != "ok"]
    [('合同（加密）.pdf', 'failed', '「合同（加密）.pdf」已加密（需要密码才能打开），请先解除密码保护再导入')]
    >>> docs, chunks = file_documents(results, max_chars=800, overlap=80)
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zhiwen.config import Settings, get_settings
from zhiwen.documents import Chunk, Document
from zhiwen.errors import IngestError
from zhiwen.ingest.detect import detect_kind
from zhiwen.ingest.limits import FileRejected, IngestLimits, check_file_size, check_zip
from zhiwen.ingest.memory import HEAVY_BYTES, release_memory
from zhiwen.ingest.model import ParsedFile
from zhiwen.ingest.ocr import INSTALL_HINT, OcrEngine, OcrUnavailable, ocr_available

log = logging.getLogger(__name__)

# --format values that force one loader for every file (``documents``/``auto`` detect each file)
FORCED_KINDS = ("pdf", "docx", "pptx", "xlsx", "html", "text", "image")
DOCUMENT_SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".xlsx", ".html", ".htm", ".txt", ".text", ".md", ".markdown", ".csv", ".tsv"}
    | {".doc", ".xls", ".ppt", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp"}
)
_OFFICE = ("docx", "pptx", "xlsx")
_BINARY_KINDS = ("pdf", "image", *_OFFICE)
OnPage = Callable[[str, int, int], None]  # (source, pages done, pages to OCR)


@dataclass(slots=True)
class FileResult:
    source: str  # path relative to the indexed folder (or the uploaded file's name)
    kind: str
    status: str  # ok | failed | skipped
    error: str | None = None
    parsed: ParsedFile | None = None
    seconds: float = 0.0
    sha256: str = ""
    size: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def pages(self) -> int | None:
        return self.parsed.pages if self.parsed else None


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class OcrProvider:
    """Creates the OCR engine on first use (its models load in ~0.5 s) and closes it at the end."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._engine: OcrEngine | None = None

    @property
    def available(self) -> bool:
        return ocr_available()

    def __call__(self) -> OcrEngine:
        if self._engine is None:
            try:
                self._engine = OcrEngine(
                    threads=self.settings.ingest.ocr_threads, cache_dir=self.settings.home / "cache" / "ocr"
                )
            except OcrUnavailable as exc:
                raise IngestError(str(exc), message=f"需要 OCR，但未安装 OCR 组件（{INSTALL_HINT}）") from exc
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None


@contextmanager
def ocr_provider(settings: Settings) -> Iterator[OcrProvider]:
    provider = OcrProvider(settings)
    try:
        yield provider
    finally:
        provider.close()


def parse_file(
    path: Path,
    name: str,
    *,
    kind: str | None = None,
    limits: IngestLimits,
    ocr: str = "auto",
    ocr_engine: OcrProvider | None = None,
    ocr_scale: float = 2.0,
    on_page: OnPage | None = None,
) -> ParsedFile:
    """Parse one file (``kind`` forces a loader; default: detected by content).

    After a heavy file (:data:`~zhiwen.ingest.memory.HEAVY_BYTES` on disk or unpacked) the memory
    its parser held goes back to the system (:func:`~zhiwen.ingest.memory.release_memory`).
    """
    size = check_file_size(path, name, limits)
    detected = detect_kind(path)
    if kind in _BINARY_KINDS and detected != kind and not (detected == "corrupt_zip" and kind in _OFFICE):
        raise FileRejected(name, f"内容不是 {kind.upper()} 文件（按内容识别为 {detected}）")
    kind = kind or detected
    engine = ocr_engine if ocr_engine is not None and ocr_engine.available else None
    if kind in ("docx", "pptx", "xlsx"):
        if detected == "corrupt_zip":
            raise FileRejected(name, "文件已损坏或不完整（无法读取压缩包结构）")
        size = max(size, check_zip(path, name, limits, kind=kind))
    try:
        return _dispatch(path, name, kind, limits, ocr, engine, ocr_scale, on_page)
    except (FileRejected, IngestError):
        raise
    except MemoryError as exc:
        raise FileRejected(name, "解析时内存不足（文件过大或结构异常）") from exc
    except Exception as exc:  # a library choking on a malformed file: the file fails, the run goes on
        log.info("cannot parse %s as %s: %s", name, kind, exc, exc_info=log.isEnabledFor(logging.DEBUG))
        raise FileRejected(
            name, f"文件已损坏或格式无法解析（按 {kind} 读取失败）", f"{type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if size >= HEAVY_BYTES:
            release_memory()


def _dispatch(
    path: Path,
    name: str,
    kind: str,
    limits: IngestLimits,
    ocr: str,
    engine: OcrProvider | None,
    ocr_scale: float,
    on_page: OnPage | None,
) -> ParsedFile:
    if kind in ("pdf", "image"):
        return _load_scannable(path, name, kind, limits, ocr, engine, ocr_scale, on_page)
    if kind in ("docx", "pptx", "xlsx", "html", "markdown", "text"):
        return _load_document(path, name, kind, limits)
    raise _refusal(name, kind)


def _load_scannable(
    path: Path,
    name: str,
    kind: str,
    limits: IngestLimits,
    ocr: str,
    engine: OcrProvider | None,
    ocr_scale: float,
    on_page: OnPage | None,
) -> ParsedFile:
    """A PDF or an image: text layer and/or OCR."""
    if kind == "pdf":
        from zhiwen.ingest.pdf import load_pdf

        return load_pdf(
            path,
            name,
            limits,
            ocr=ocr,
            ocr_engine=engine,
            ocr_scale=ocr_scale,
            on_page=(lambda done, total: on_page(name, done, total)) if on_page else None,
        )
    from zhiwen.ingest.pdf import load_image

    return load_image(path, name, limits, ocr=ocr, ocr_engine=engine)


def _load_document(path: Path, name: str, kind: str, limits: IngestLimits) -> ParsedFile:
    """An Office document, a web page or a text file."""
    if kind == "docx":
        from zhiwen.ingest.office import load_docx

        return load_docx(path, name, limits)
    if kind == "pptx":
        from zhiwen.ingest.office import load_pptx

        return load_pptx(path, name, limits)
    if kind == "xlsx":
        from zhiwen.ingest.office import load_xlsx

        return load_xlsx(path, name, limits)
    if kind == "html":
        from zhiwen.ingest.textfiles import load_html_file

        return load_html_file(path, name, limits)
    if kind == "text" and path.suffix.lower() in (".csv", ".tsv"):
        from zhiwen.ingest.textfiles import load_delimited

        return load_delimited(path, name, limits)
    from zhiwen.ingest.textfiles import load_text_file

    return load_text_file(path, name, markdown=kind == "markdown", limits=limits)


def _refusal(name: str, kind: str) -> FileRejected:
    """Why a file of this kind is not indexed (empty, legacy Office, broken zip, unknown)."""
    if kind == "empty":
        return FileRejected(name, "是空文件")
    if kind == "ole":
        return FileRejected(
            name,
            "是旧版 Office 格式（.doc/.xls/.ppt）或已加密的 Office 文件，"
            "请另存为 .docx/.xlsx/.pptx 并解除密码",
        )
    if kind == "corrupt_zip":
        return FileRejected(name, "文件已损坏或不完整（无法读取压缩包结构）")
    return FileRejected(name, "不是支持的文档类型（支持 PDF、Word、PowerPoint、Excel、网页、文本、图片）")


def iter_files(root: Path) -> list[tuple[Path, str]]:
    """``(path, relative name)`` of every regular file under ``root``, sorted; hidden ones skipped."""
    if root.is_file():
        return [(root, root.name)]
    out: list[tuple[Path, str]] = []
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if any(part.startswith((".", "~$")) for part in rel.parts):  # .git, Office lock files
            continue
        if p.is_symlink() or not p.is_file():
            continue
        out.append((p, rel.as_posix()))
    return sorted(out, key=lambda x: x[1])


def load_files(
    path: Path,
    *,
    fmt: str | None = None,
    ocr: str | None = None,
    settings: Settings | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    on_page: OnPage | None = None,
    ocr_engine: OcrProvider | None = None,
) -> list[FileResult]:
    """Parse every file under ``path``; a bad file is a ``failed`` result, never an exception."""
    settings = settings or get_settings()
    path = Path(path)
    if not path.exists():
        raise IngestError(f"path not found: {path}", message=f"导入失败：路径不存在：{path}")
    kind = None if fmt in (None, "", "auto", "documents") else fmt
    if kind is not None and kind not in (*FORCED_KINDS, "markdown"):
        raise IngestError(f"unknown document format {fmt!r}", message=f"导入失败：未知的格式「{fmt}」")
    limits = IngestLimits.from_settings(settings)
    ocr_mode = ocr or settings.ingest.ocr
    results: list[FileResult] = []
    with _maybe_provider(settings, ocr_engine) as engine:
        for file_path, name in iter_files(path):
            result = parse_one(
                file_path,
                name,
                kind=kind,
                limits=limits,
                ocr=ocr_mode,
                engine=engine,
                ocr_scale=settings.ingest.ocr_scale,
                on_page=on_page,
                folder=path.is_dir(),
            )
            results.append(result)
            if on_file:
                on_file(result)
    _one_site(results)
    return results


def _one_site(results: list[FileResult]) -> None:
    """Web pages imported together: titles without the site's name, the site's chrome left out."""
    from zhiwen.ingest.site import drop_repeated_lines, own_titles

    pages = [r.parsed for r in results if r.parsed is not None and r.parsed.format == "html"]
    own_titles(pages)
    drop_repeated_lines(pages)


@contextmanager
def _maybe_provider(settings: Settings, given: OcrProvider | None) -> Iterator[OcrProvider]:
    if given is not None:
        yield given
    else:
        with ocr_provider(settings) as provider:
            yield provider


def parse_one(
    path: Path,
    name: str,
    *,
    kind: str | None,
    limits: IngestLimits,
    ocr: str,
    engine: OcrProvider | None,
    ocr_scale: float = 2.0,
    on_page: OnPage | None = None,
    folder: bool = False,
) -> FileResult:
    """One file → its :class:`FileResult` (exceptions become ``failed``)."""
    start = time.perf_counter()
    detected = "?"
    try:
        detected = detect_kind(path) if path.stat().st_size else "empty"
        if (
            folder
            and kind is None
            and detected in ("binary", "zip")
            and path.suffix.lower() not in DOCUMENT_SUFFIXES
        ):
            # a folder also holds files that are no documents (archives, programs): not a failure
            return FileResult(
                name, detected, "skipped", "不是文档，已跳过", seconds=time.perf_counter() - start
            )
        parsed = parse_file(
            path,
            name,
            kind=kind,
            limits=limits,
            ocr=ocr,
            ocr_engine=engine,
            ocr_scale=ocr_scale,
            on_page=on_page,
        )
        return FileResult(
            name,
            parsed.format,
            "ok",
            parsed=parsed,
            seconds=time.perf_counter() - start,
            sha256=file_sha256(path),
            size=path.stat().st_size,
            warnings=list(parsed.warnings),
        )
    except IngestError as exc:
        message = exc.message if name in exc.message else f"「{name}」{exc.message}"
        return FileResult(name, kind or detected, "failed", message, seconds=time.perf_counter() - start)
    except OSError as exc:
        return FileResult(
            name,
            kind or detected,
            "failed",
            f"「{name}」无法读取：{exc.strerror or exc}",
            seconds=time.perf_counter() - start,
        )


def document_id(source: str, fmt: str) -> str:
    """The document id of a file: its relative path, without the suffix for markdown."""
    if fmt == "markdown" and "." in source.rsplit("/", 1)[-1]:
        return source.rsplit(".", 1)[0]
    return source


def result_document(
    result: FileResult, doc_id: str | None = None, extra: dict[str, Any] | None = None
) -> Document:
    assert result.parsed is not None
    meta = {"file_sha256": result.sha256, "bytes": result.size, **(extra or {})}
    return result.parsed.to_document(doc_id or document_id(result.source, result.parsed.format), meta)


def document_chunks(result: FileResult, doc: Document, max_chars: int, overlap: int) -> list[Chunk]:
    assert result.parsed is not None
    chunks = result.parsed.chunks(doc, max_chars, overlap)
    return [
        Chunk(
            c.id,
            c.doc_id,
            c.text,
            c.title,
            c.parent_id,
            {k: v for k, v in c.metadata.items() if k not in ("file_sha256", "bytes", "ocr_pages", "chunks")},
        )
        for c in chunks
    ]


def file_documents(
    results: list[FileResult], *, max_chars: int, overlap: int, extra: dict[str, Any] | None = None
) -> tuple[list[Document], list[Chunk]]:
    """Documents and provenance chunks of the ``ok`` results."""
    docs: list[Document] = []
    chunks: list[Chunk] = []
    for result in results:
        if result.status != "ok" or result.parsed is None:
            continue
        doc = result_document(result, extra=extra)
        mine = document_chunks(result, doc, max_chars, overlap)
        if not mine:
            continue
        docs.append(Document(doc.id, doc.text, doc.title, {**doc.metadata, "chunks": len(mine)}))
        chunks.extend(mine)
    return docs, chunks
