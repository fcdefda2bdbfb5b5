"""Documents → answer units: sentences, list items, table rows and code blocks, with their headings.

The extractive answerer scores *units*, not chunks. A markdown document is parsed with
markdown-it (CommonMark + tables; indented code off, so indented prose stays prose) into blocks;
each block yields units:

* a paragraph (or block quote) → its sentences (Chinese 。！？；…… and English ``. ! ?``; closing
  quotes stay with their sentence, fragments under 6 characters join the next sentence);
* a list → one unit per top-level item (nested items stay inside it);
* a table → one unit per body row (the header is kept on the block, for rendering);
* a fenced code block → one unit, whole.

Headings are not units: they become every unit's ``path`` (``("建立知识库", "支持的导入格式")``),
shown as context. Text without markdown structure (BEIR passages, CSV records) skips the parser:
blank lines separate paragraphs and line ends end sentences. Results are cached by text.

Example::

    >>> doc = split_units(Document(id="d", title="手册", text="# 手册\\n## 导入\\n用 index 命令。支持目录。"))
    >>> [(u.kind, u.path, u.text) for u in doc.units]
    [('sentence', ('手册', '导入'), '用 index 命令。'), ('sentence', ('手册', '导入'), '支持目录。')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from zhiwen.cache import LRU
from zhiwen.documents import Document

UnitKind = Literal["sentence", "item", "row", "code"]
BlockKind = Literal["paragraph", "list", "table", "code"]

_MIN_SENTENCE = 6  # shorter fragments ("注：", "1.") join the following sentence
_SENTENCE = re.compile(
    r".*?(?:[。！？!?；;]+|……|…|\.{3,}(?=\s|$)|(?<=[a-z]{2})\.(?=\s+[A-Z\"“]|$))[”’」』）)\]】》\"']*|.+$",
    re.S,
)
_MARKDOWN_HINT = re.compile(r"^[ \t]{0,3}(?:#{1,6}[ \t]|[-*+][ \t]|\d{1,3}[.)][ \t]|\||```|~~~|>)", re.M)
_INLINE_MARKUP = [
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"(\*\*|__)(.+?)\1"), r"\2"),
    (re.compile(r"`([^`]*)`"), r"\1"),
    (re.compile(r"<[^>]+>"), ""),
]
_CJK_BREAK = re.compile(r"(?<=[\u3000-\u9fff\uff00-\uffef])\n(?=[\u3000-\u9fff\uff00-\uffef])")

_md = MarkdownIt("commonmark").enable("table").disable("code")
_cache: LRU[DocUnits] = LRU(512, "answer_units")


@dataclass(frozen=True, slots=True)
class Unit:
    text: str  # markdown, as it reads in the document (a sentence, an item, a row, a fenced block)
    plain: str  # readable text without markup: what is scored and measured
    kind: UnitKind
    block: int  # index of its block in DocUnits.blocks
    path: tuple[str, ...]  # heading path


@dataclass(frozen=True, slots=True)
class Block:
    kind: BlockKind
    path: tuple[str, ...]
    first: int  # its units are DocUnits.units[first:last]
    last: int
    header: str = ""  # tables: the header and separator lines
    ordered: bool = False  # lists: numbered


@dataclass(frozen=True, slots=True)
class DocUnits:
    doc_id: str
    title: str
    units: tuple[Unit, ...]
    blocks: tuple[Block, ...]
    structured: bool  # parsed as markdown (headings, lists, tables, code may be present)


def plain_text(markdown: str) -> str:
    """Inline markdown → readable text (links keep their label, emphasis and backticks go)."""
    text = markdown
    for pattern, repl in _INLINE_MARKUP:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def _join_lines(text: str) -> str:
    """Soft line breaks: nothing between two CJK characters, a space elsewhere."""
    return " ".join(_CJK_BREAK.sub("", text).split("\n")).strip()


def split_sentences(text: str) -> list[str]:
    """Sentences of one paragraph, ends kept; tiny fragments join the next sentence."""
    out: list[str] = []
    carry = ""
    for m in _SENTENCE.finditer(text):
        piece = m.group(0)
        if not piece.strip():
            continue
        piece = carry + piece
        if len(piece.strip()) < _MIN_SENTENCE:
            carry = piece
            continue
        carry = ""
        out.append(piece.strip())
    if carry.strip():
        if out:
            out[-1] = f"{out[-1]}{carry}".strip()
        else:
            out.append(carry.strip())
    return out


class _Builder:
    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.blocks: list[Block] = []

    def add_block(
        self, kind: BlockKind, path: tuple[str, ...], units: list[tuple[str, str, UnitKind]], **extra: object
    ) -> None:
        units = [u for u in units if u[1]]
        if not units:
            return
        first = len(self.units)
        index = len(self.blocks)
        self.units.extend(Unit(text, plain, unit_kind, index, path) for text, plain, unit_kind in units)
        self.blocks.append(Block(kind, path, first, len(self.units), **extra))  # type: ignore[arg-type]

    def add_paragraph(self, path: tuple[str, ...], markdown: str) -> None:
        sentences = split_sentences(_join_lines(markdown))
        self.add_block("paragraph", path, [(s, plain_text(s), "sentence") for s in sentences])


def _lines(source: list[str], token: Token) -> str:
    start, end = token.map or (0, 0)
    return "".join(source[start:end]).rstrip("\n")


def _dedent(text: str) -> str:
    lines = text.splitlines()
    pad = min((len(x) - len(x.lstrip(" ")) for x in lines if x.strip()), default=0)
    return "\n".join(x[pad:] for x in lines)


def _closing(tokens: list[Token], i: int) -> int:
    """Index of the token closing the one opened at ``i``."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += tokens[j].nesting
        if depth == 0:
            return j
    return len(tokens) - 1


class _MarkdownReader:
    """One document's tokens → units, one short handler per block type (chosen by token type).

    Each handler reads the block that opens at ``i`` and returns the index after it.
    """

    def __init__(self, text: str) -> None:
        self.source = text.splitlines(keepends=True)
        self.tokens = _md.parse(text)
        self.out = _Builder()
        self.headings: dict[int, str] = {}
        self.path: tuple[str, ...] = ()
        self.handlers = {
            "heading_open": self.heading,
            "paragraph_open": self.paragraph,
            "fence": self.code,
            "code_block": self.code,
            "bullet_list_open": self.list,
            "ordered_list_open": self.list,
            "table_open": self.table,
            "html_block": self.html,
        }

    def read(self) -> _Builder:
        i = 0
        while i < len(self.tokens):
            handler = self.handlers.get(self.tokens[i].type)
            # a blockquote's paragraphs and lists (and anything unknown) are read as if they
            # stood alone: step into it
            i = handler(i) if handler is not None else i + 1
        return self.out

    def heading(self, i: int) -> int:
        level = int(self.tokens[i].tag[1:])
        self.headings = {lv: t for lv, t in self.headings.items() if lv < level}
        self.headings[level] = plain_text(self.tokens[i + 1].content)
        self.path = tuple(self.headings[lv] for lv in sorted(self.headings))
        return _closing(self.tokens, i) + 1

    def paragraph(self, i: int) -> int:
        self.out.add_paragraph(self.path, self.tokens[i + 1].content)
        return _closing(self.tokens, i) + 1

    def code(self, i: int) -> int:
        tok = self.tokens[i]
        body = tok.content.rstrip("\n")
        fenced = f"```{tok.info.strip()}\n{body}\n```"
        self.out.add_block("code", self.path, [(fenced, body.strip(), "code")])
        return i + 1

    def list(self, i: int) -> int:
        tokens, tok = self.tokens, self.tokens[i]
        end = _closing(tokens, i)
        items: list[tuple[str, str, UnitKind]] = []
        j = i + 1
        while j < end:
            if tokens[j].type == "list_item_open" and tokens[j].level == tok.level + 1:
                close = _closing(tokens, j)
                inline = [t.content for t in tokens[j:close] if t.type == "inline"]
                items.append((_dedent(_lines(self.source, tokens[j])), plain_text(" ".join(inline)), "item"))
                j = close
            j += 1
        self.out.add_block("list", self.path, items, ordered=tok.type == "ordered_list_open")
        return end + 1

    def table(self, i: int) -> int:
        tokens, source = self.tokens, self.source
        end = _closing(tokens, i)
        rows = [t for t in tokens[i:end] if t.type == "tr_open"]
        header_cells = _cells(tokens, tokens.index(rows[0])) if rows else []
        units: list[tuple[str, str, UnitKind]] = []
        for row in rows[1:]:
            cells = _cells(tokens, tokens.index(row))
            plain = "；".join(f"{h}：{c}" if h else c for h, c in zip(header_cells, cells, strict=False))
            units.append((_lines(source, row).strip(), plain_text(plain), "row"))
        first = (rows[0].map or (0, 0))[0] if rows else 0
        head = "".join(source[first : first + 2]) if rows else ""
        self.out.add_block("table", self.path, units, header=head.rstrip("\n"))
        return end + 1

    def html(self, i: int) -> int:
        self.out.add_paragraph(self.path, re.sub(r"<[^>]+>", " ", self.tokens[i].content))
        return i + 1


def _parse_markdown(doc: Document) -> DocUnits:
    out = _MarkdownReader(doc.text).read()
    return DocUnits(doc.id, doc.title, tuple(out.units), tuple(out.blocks), True)


def _cells(tokens: list[Token], tr: int) -> list[str]:
    end = _closing(tokens, tr)
    return [plain_text(t.content) for t in tokens[tr:end] if t.type == "inline"]


def _parse_plain(doc: Document) -> DocUnits:
    out = _Builder()
    for para in re.split(r"\n[ \t]*\n", doc.text):
        sentences = [s for line in para.splitlines() for s in split_sentences(line.strip()) if s]
        out.add_block("paragraph", (), [(s, " ".join(s.split()), "sentence") for s in sentences])
    return DocUnits(doc.id, doc.title, tuple(out.units), tuple(out.blocks), False)


def split_units(doc: Document) -> DocUnits:
    """The document's units and blocks (see the module docstring); cached by content."""
    key = (doc.id, doc.text)
    cached = _cache.get(key)
    if cached is None or cached.title != doc.title:
        structured = bool(_MARKDOWN_HINT.search(doc.text))
        cached = _parse_markdown(doc) if structured else _parse_plain(doc)
        _cache.put(key, cached)
    return cached
