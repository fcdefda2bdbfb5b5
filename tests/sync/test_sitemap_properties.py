"""The sitemap reader, for any URLs: every ``<loc>`` once, in order; an index followed one level;
markup that is no XML refused with a Chinese message; entities never expanded."""

from __future__ import annotations

from xml.sax.saxutils import escape

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zhiwen.errors import IngestError
from zhiwen.sync.listing import sitemap_urls

PATHS = st.lists(st.text(alphabet="abc/-_.~0123456789中文", min_size=1, max_size=12), max_size=20)


def _client(pages: dict[str, str]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        body = pages.get(str(request.url))
        return httpx.Response(404) if body is None else httpx.Response(200, text=body)

    return httpx.Client(transport=httpx.MockTransport(handler))


def _urlset(urls: list[str]) -> str:
    locs = "".join(f"<url><loc> {escape(u)} </loc></url>" for u in urls)
    return f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'


@settings(max_examples=60, deadline=None)
@given(PATHS)
def test_every_loc_once_in_order(paths: list[str]) -> None:
    urls = [f"https://site.example/{p}" for p in paths]
    with _client({"https://site.example/sitemap.xml": _urlset(urls)}) as client:
        assert sitemap_urls("https://site.example/sitemap.xml", client) == list(dict.fromkeys(urls))


@settings(max_examples=30, deadline=None)
@given(PATHS, PATHS)
def test_an_index_is_followed(first: list[str], second: list[str]) -> None:
    a = [f"https://site.example/a/{p}" for p in first]
    b = [f"https://site.example/b/{p}" for p in second]
    index = (
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<sitemap><loc>https://site.example/a.xml</loc></sitemap>"
        "<sitemap><loc>https://site.example/b.xml</loc></sitemap></sitemapindex>"
    )
    pages = {
        "https://site.example/index.xml": index,
        "https://site.example/a.xml": _urlset(a),
        "https://site.example/b.xml": _urlset(b),
    }
    with _client(pages) as client:
        assert sitemap_urls("https://site.example/index.xml", client) == [
            *dict.fromkeys(a),
            *dict.fromkeys(b),
        ]


def test_no_xml_and_entities() -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "https://evil.example/">]>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>&e;</loc></url></urlset>'
    )
    pages = {"https://s.example/bad.xml": "<html><p>不是站点地图", "https://s.example/e.xml": bomb}
    with _client(pages) as client:
        with pytest.raises(IngestError) as err:
            sitemap_urls("https://s.example/bad.xml", client)
        assert "站点地图" in err.value.message
        assert sitemap_urls("https://s.example/e.xml", client) == []
        with pytest.raises(IngestError) as gone:
            sitemap_urls("https://s.example/missing.xml", client)
        assert "404" in gone.value.message
