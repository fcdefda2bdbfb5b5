"""A KB's dictionary and synonym groups (#36), as JSON or CSV.

| method | path | what |
|--------|------|------|
| GET / PUT | ``/api/v1/kbs/{kb}/synonyms`` | ``{"groups": [["土豆","马铃薯","洋芋"]]}`` |
| GET / PUT | ``/api/v1/kbs/{kb}/dictionary`` | ``{"words": ["知识库管理员"]}`` |
| GET | ``/api/v1/kbs/{kb}/synonyms.csv`` , ``/api/v1/kbs/{kb}/dictionary.csv`` | the same as CSV |

A PUT replaces the whole list and takes JSON or a ``text/csv`` body (the layouts of
:mod:`zhiwen.curation.csvio`; a bad row is 422 naming it, nothing is changed). It is one recorded,
undoable change; queries use the new words at once, the chunks are re-tokenised in the
background while searches go on. Reads need read access, changes write access.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from zhiwen.curation import Change, export_dictionary, export_synonyms, parse_dictionary, parse_synonyms
from zhiwen.errors import InvalidParameter
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_kb, require_kb_read, require_kb_write
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.kb import KnowledgeBase

router = APIRouter(prefix="/api/v1", tags=["curation"])
TheKB = Annotated[KnowledgeBase, Depends(get_kb)]
Caller = Annotated[Access, Depends(get_access)]
#: reads: read access; changes: write access, checked before the KB is looked up (403 first)
READ = [Depends(require_kb_read)]
WRITE = [Depends(require_kb_write)]
CSV_MEDIA = "text/csv; charset=utf-8"


class SynonymsIO(BaseModel):
    groups: list[list[str]] = Field(description="同义词组，每组至少两个词")
    change_id: int | None = Field(None, description="这次修改的编号（可撤销）；未改变时为 null")


class DictionaryIO(BaseModel):
    words: list[str] = Field(description="分词时保持完整的词")
    change_id: int | None = Field(None, description="这次修改的编号（可撤销）；未改变时为 null")


def _csv_or_json(
    body: bytes, content_type: str, parse_csv: Callable[[bytes], Any], model: type[BaseModel]
) -> Any:
    """The list a PUT carries: a CSV file's, or the JSON body's (422 with a Chinese message)."""
    if content_type.lower().startswith(("text/csv", "text/plain")):
        return parse_csv(body)
    try:
        return model.model_validate_json(body or b"{}")
    except ValidationError as exc:
        raise InvalidParameter(
            str(exc), message='请求格式错误：应为 JSON（如 {"groups": [["土豆", "马铃薯"]]}）或 text/csv'
        ) from exc


def _csv_body(kind: str) -> dict[str, Any]:
    example = {
        "synonyms": "标准词,同义词1,同义词2\n土豆,马铃薯,洋芋\n",
        "dictionary": "词条\n知识库管理员\n",
    }[kind]
    return {"requestBody": {"content": {"text/csv": {"schema": {"type": "string"}, "example": example}}}}


def _change_id(change: Change | None) -> int | None:
    return change.id if change is not None else None


@router.get("/kbs/{kb}/synonyms", summary="同义词", response_model=Envelope[SynonymsIO], dependencies=READ)
async def get_synonyms(kb: TheKB) -> dict[str, Any]:
    return ok({"groups": [list(g) for g in kb.curation.groups()], "change_id": None})


@router.put(
    "/kbs/{kb}/synonyms",
    summary="设置同义词（JSON 或 CSV，整体替换）",
    response_model=Envelope[SynonymsIO],
    dependencies=WRITE,
    openapi_extra=_csv_body("synonyms"),
)
async def put_synonyms(request: Request, kb: TheKB, access: Caller) -> dict[str, Any]:
    parsed = _csv_or_json(
        await request.body(), request.headers.get("content-type", ""), parse_synonyms, SynonymsIO
    )
    groups = parsed.groups if isinstance(parsed, SynonymsIO) else parsed
    done = await run_in_threadpool(lambda: kb.curation.set_groups(groups, actor=access.caller))
    return ok({"groups": [list(g) for g in kb.curation.groups()], "change_id": _change_id(done)})


@router.get("/kbs/{kb}/synonyms.csv", summary="导出同义词 CSV", response_class=Response, dependencies=READ)
async def synonyms_csv(kb: TheKB) -> Response:
    return _csv_download(export_synonyms(kb.curation.groups()), f"{kb.name}-synonyms.csv")


@router.get("/kbs/{kb}/dictionary", summary="词典", response_model=Envelope[DictionaryIO], dependencies=READ)
async def get_dictionary(kb: TheKB) -> dict[str, Any]:
    return ok({"words": list(kb.curation.words()), "change_id": None})


@router.put(
    "/kbs/{kb}/dictionary",
    summary="设置词典（JSON 或 CSV，整体替换）",
    response_model=Envelope[DictionaryIO],
    dependencies=WRITE,
    openapi_extra=_csv_body("dictionary"),
)
async def put_dictionary(request: Request, kb: TheKB, access: Caller) -> dict[str, Any]:
    parsed = _csv_or_json(
        await request.body(), request.headers.get("content-type", ""), parse_dictionary, DictionaryIO
    )
    words = parsed.words if isinstance(parsed, DictionaryIO) else parsed
    done = await run_in_threadpool(lambda: kb.curation.set_words(words, actor=access.caller))
    return ok({"words": list(kb.curation.words()), "change_id": _change_id(done)})


@router.get("/kbs/{kb}/dictionary.csv", summary="导出词典 CSV", response_class=Response, dependencies=READ)
async def dictionary_csv(kb: TheKB) -> Response:
    return _csv_download(export_dictionary(kb.curation.words()), f"{kb.name}-dictionary.csv")


def _csv_download(text: str, filename: str) -> Response:
    """A CSV file with a BOM (Excel reads the Chinese right; the importers skip it)."""
    disposition = f"attachment; filename*=UTF-8''{quote(filename)}"
    return Response("\ufeff" + text, media_type=CSV_MEDIA, headers={"Content-Disposition": disposition})
