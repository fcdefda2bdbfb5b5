"""The manifest of a KB bundle: what the bundle holds, which release wrote it, and its checksums.

A bundle (:mod:`zhiwen.portable.bundle`) is one uncompressed tar whose first member is
``manifest.json``. The manifest names the format and its version, the zhiwen version that wrote
it, the KB (its ``kb.json`` settings and its tuning), the embedder the vectors were made with
(provider, name — the embedder's stable identifier of model and settings, what the embedding
cache keys on — and dimension), counts, and the size and SHA-256 of every other member.

A reader refuses a bundle whose format version is newer than :data:`FORMAT_VERSION` (it never
guesses at a layout it does not know) and one whose members do not match the manifest.

Example::

    >>> manifest = Manifest.model_validate_json(text)
    >>> check_version(manifest)          # IngestError for a newer bundle
    >>> manifest.embedder.name, manifest.counts.chunks
    ('hash-256-ng13', 12)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from zhiwen.errors import IngestError

#: what ``format`` says in every bundle
FORMAT = "zhiwen-kb-bundle"
#: the layout this release writes and the newest it reads
FORMAT_VERSION = 1
MANIFEST = "manifest.json"


class BundleError(IngestError):
    """A bundle that cannot be imported: truncated, tampered, not a bundle, or too new (422)."""

    user_message = "知识库导出文件无效"


class EmbedderInfo(BaseModel):
    """The embedder the bundle's vectors were made with (``name`` None: the bundle has none)."""

    provider: str
    name: str | None = None
    dim: int | None = None


class Counts(BaseModel):
    documents: int = 0
    chunks: int = 0
    vectors: int = 0
    curation: dict[str, int] = Field(default_factory=dict)


class Member(BaseModel):
    bytes: int
    sha256: str


class Manifest(BaseModel):
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    zhiwen_version: str
    created_at: str
    kb: str
    #: the KB's ``kb.json`` as it was exported
    config: dict[str, Any]
    #: the KB's ``tuning.json`` (None: never tuned)
    tuning: dict[str, Any] | None = None
    embedder: EmbedderInfo
    counts: Counts = Field(default_factory=Counts)
    #: member name → size and SHA-256 (every member but the manifest)
    members: dict[str, Member] = Field(default_factory=dict)


def bundle_error(detail: str, message: str, reason: str) -> BundleError:
    return BundleError(detail, message=message, data={"reason": reason})


def check_version(manifest: Manifest) -> None:
    """Refuse a bundle of another format or a newer format version than this release reads."""
    if manifest.format != FORMAT:
        raise bundle_error(
            f"format {manifest.format!r} is not {FORMAT!r}",
            "这不是知问的知识库导出文件",
            "not_a_bundle",
        )
    if manifest.format_version > FORMAT_VERSION:
        raise bundle_error(
            f"bundle format {manifest.format_version} is newer than {FORMAT_VERSION}",
            f"导出文件的格式版本 {manifest.format_version} 比本程序支持的 {FORMAT_VERSION} 新"
            f"（由知问 {manifest.zhiwen_version} 导出）；请先升级知问再导入",
            "newer_format",
        )
