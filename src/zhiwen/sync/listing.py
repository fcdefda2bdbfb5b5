"""The documents of one source, each with a stable name and a content hash.

* a folder: every file the indexer reads (:func:`zhiwen.ingest.files.iter_files`), named by its
  relative path, hashed by its bytes;
* a page URL: the page (fetched once; its bytes hashed and kept for the parser);
* a sitemap: every ``<loc>`` of it (a sitemap index is followed one level down).

Pages are fetched with :mod:`httpx` (redirects followed, a size cap); a page that cannot be
fetched is an error of that page, and its document is kept as it was.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from lxml import etree

from zhiwen.errors import IngestError
from zhiwen.ingest.files import file_sha256, iter_files
from zhiwen.sync.sources import source_kind

FETCH_TIMEOUT_S = 30.0
MAX_PAGE_BYTES = 20 * 1024 * 1024
MAX_SITEMAP_URLS = 50_000  # the sitemap protocol's own limit per file
USER_AGENT = "zhiwen-sync/1"


@dataclass(slots=True)
class Entry:
    """One document of a source: a file on disk or a fetched page's bytes."""

    name: str  # relative path (folder) or URL: the stable key of the document
    hash: str
    path: Path | None = None
    content: bytes | None = None
    content_type: str = ""
    error: str | None = None  # the page could not be fetched: keep what the KB has


def list_source(source: str, client: httpx.Client) -> Iterator[Entry]:
    """The entries of ``source``; raises :class:`IngestError` when the source itself is gone."""
    kind = source_kind(source)
    if kind == "folder":
        root = Path(source)
        if not root.exists():
            raise IngestError(f"folder not found: {root}", message=f"同步来源不存在：{root}")
        for path, name in iter_files(root):
            yield Entry(name, file_sha256(path), path=path)
        return
    urls = sitemap_urls(source, client) if kind == "sitemap" else [source]
    for url in urls:
        yield fetch_page(url, client)


def fetch_page(url: str, client: httpx.Client) -> Entry:
    try:
        body, content_type = _get(url, client)
    except IngestError as exc:
        return Entry(url, "", error=exc.message)
    return Entry(url, hashlib.sha256(body).hexdigest(), content=body, content_type=content_type)


def sitemap_urls(url: str, client: httpx.Client, *, depth: int = 1) -> list[str]:
    """The page URLs of a sitemap (``<urlset>``), or of the sitemaps a ``<sitemapindex>`` lists."""
    body, _ = _get(url, client)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        raise IngestError(f"{url}: {exc}", message=f"站点地图不是有效的 XML：{url}") from exc
    locs = [str(e.text).strip() for e in root.iter("{*}loc") if e.text and e.text.strip()]
    if etree.QName(root).localname == "sitemapindex" and depth > 0:
        return [u for sub in locs for u in sitemap_urls(sub, client, depth=depth - 1)][:MAX_SITEMAP_URLS]
    return list(dict.fromkeys(locs))[:MAX_SITEMAP_URLS]


def _get(url: str, client: httpx.Client) -> tuple[bytes, str]:
    try:
        with client.stream("GET", url) as response:
            if response.status_code >= 400:
                raise IngestError(
                    f"{url}: HTTP {response.status_code}",
                    message=f"无法获取 {url}（HTTP {response.status_code}）",
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_PAGE_BYTES:
                    raise IngestError(f"{url}: over {MAX_PAGE_BYTES} bytes", message=f"网页过大：{url}")
                chunks.append(chunk)
            return b"".join(chunks), response.headers.get("content-type", "")
    except httpx.HTTPError as exc:
        raise IngestError(f"{url}: {exc}", message=f"无法获取 {url}：{type(exc).__name__}") from exc


def http_client() -> httpx.Client:
    return httpx.Client(timeout=FETCH_TIMEOUT_S, follow_redirects=True, headers={"User-Agent": USER_AGENT})
