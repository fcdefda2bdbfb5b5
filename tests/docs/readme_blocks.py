"""README.md's fenced blocks and their doc-test notes: what runs, as written or not, and why.

A ```` ```bash ```` block runs as written unless an HTML comment right above its fence says
otherwise (GitHub does not show it; the README's source does)::

    <!-- doctest: skip reason="…" -->                      not run; the reason is required
    <!-- doctest: data="subset" reason="…" -->             ../shared/data is a small copy
    <!-- doctest: replace="OLD" with="NEW" reason="…" -->  run with OLD replaced (repeatable)
    <!-- doctest: reason="…"
    an equivalent script, run instead of the block
    -->

and the flags ``server`` (a ``zhiwen demo`` serves the block's home, as after the Quickstart),
``background`` (the block's own ``zhiwen serve`` / ``zhiwen demo`` run in the background until
``/healthz`` answers, and stop when the block ends), ``slow`` (pytest's ``slow`` marker),
``requires="ocr"`` (skipped with the reason when that extra is missing), ``stdin="…"`` (what the
block reads, ``\\n`` for a new line), ``before="…"`` / ``after="…"`` (commands run around the
block: state a newcomer has from an earlier section, a check of what the block started).
Everywhere, port 8000 is a free port, so a running server of yours is never touched.

Example::

    blocks = parse_readme(Path("README.md").read_text("utf-8"))
    [b.id for b in blocks if b.lang == "bash"]      # ['quickstart', 'using-it', 'using-it-2', …]
    script(blocks[0], port=8123)                    # the bash the test runs
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

FENCE = re.compile(r"^```(\w*)\s*$")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")
NOTE_START = re.compile(r"^<!--\s*doctest:(.*)$")
ATTR = re.compile(r'(\w+)(?:="((?:[^"\\]|\\.)*)")?')
FLAGS = {"skip", "server", "background", "slow"}
VALUES = {"reason", "data", "stdin", "before", "after", "requires", "replace", "with"}
PORT = re.compile(r"(?<=localhost:)8000|(?<=127\.0\.0\.1:)8000|(?<=--port )8000")


class NoteError(ValueError):
    """A doc-test note the test cannot honour (unknown key, missing reason, stale replace …)."""


@dataclass(slots=True)
class Note:
    flags: set[str] = field(default_factory=set)
    values: dict[str, str] = field(default_factory=dict)
    replaces: list[tuple[str, str]] = field(default_factory=list)
    body: str = ""  # an equivalent script, run instead of the block

    def get(self, key: str) -> str:
        return self.values.get(key, "")


@dataclass(slots=True)
class Block:
    lang: str
    code: str
    line: int  # the opening fence, 1-based
    id: str
    note: Note = field(default_factory=Note)

    @property
    def how(self) -> str:
        """How the test runs it, for the report: skipped / equivalent / substituted / as written."""
        n = self.note
        if "skip" in n.flags:
            return "skipped"
        if n.body:
            return "equivalent"
        parts = ["as written"]
        if n.replaces:
            parts.append("with replacements")
        if n.get("data") == "subset":
            parts.append("on a data subset")
        return ", ".join(parts)


def _unescape(value: str) -> str:
    return value.replace('\\"', '"').replace("\\n", "\n")


def parse_note(head: str, body: str) -> Note:
    note = Note(body=body.strip("\n"))
    pending: str | None = None
    for m in ATTR.finditer(head):
        key, value = m.group(1), m.group(2)
        if value is None:
            if key not in FLAGS:
                raise NoteError(f"unknown doctest flag {key!r}")
            note.flags.add(key)
        elif key not in VALUES:
            raise NoteError(f"unknown doctest key {key!r}")
        elif key == "replace":
            pending = _unescape(value)
        elif key == "with":
            if pending is None:
                raise NoteError('"with" without a "replace" before it')
            note.replaces.append((pending, _unescape(value)))
            pending = None
        else:
            note.values[key] = _unescape(value)
    if pending is not None:
        raise NoteError(f'replace="{pending}" has no "with"')
    needs_reason = "skip" in note.flags or note.body or note.replaces or note.get("data") == "subset"
    if needs_reason and not note.get("reason"):
        raise NoteError("a skipped, replaced, subset or equivalent block needs a reason")
    return note


def _slug(text: str) -> str:
    text = re.sub(r"[`*_()（）/：:,，.+&'\"]", " ", text.lower())
    return re.sub(r"\s+", "-", text.strip()) or "top"


def _read_note(lines: list[str], i: int) -> tuple[Note, int]:
    """The note starting at ``lines[i]``: (note, index of the line after its ``-->``)."""
    head = NOTE_START.match(lines[i]).group(1)  # type: ignore[union-attr]
    if "-->" in head:
        return parse_note(head.split("-->")[0], ""), i + 1
    end = i + 1
    while end < len(lines) and lines[end].strip() != "-->":
        end += 1
    if end == len(lines):
        raise NoteError(f"README line {i + 1}: doctest note never closed")
    return parse_note(head, "\n".join(lines[i + 1 : end])), end + 1


def parse_readme(text: str) -> list[Block]:
    """Every fenced block with its note; a note not right above a bash fence is an error."""
    lines = text.splitlines()
    blocks: list[Block] = []
    seen: dict[str, int] = {}
    heading, note, i = "top", None, 0
    while i < len(lines):
        line = lines[i]
        if NOTE_START.match(line):
            note, i = _read_note(lines, i)
            if not (i < len(lines) and lines[i].startswith("```bash")):
                raise NoteError(f"README line {i}: a doctest note must sit right above a ```bash fence")
            continue
        fence = FENCE.match(line)
        if fence:
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            seen[heading] = seen.get(heading, 0) + 1
            block_id = _slug(heading) + (f"-{seen[heading]}" if seen[heading] > 1 else "")
            code = "\n".join(lines[i + 1 : end]) + "\n"
            blocks.append(Block(fence.group(1) or "text", code, i + 1, block_id, note or Note()))
            note, i = None, end + 1
            continue
        m = HEADING.match(line)
        if m:
            heading = m.group(1)
        i += 1
    return blocks


def script(block: Block, *, port: int) -> str:
    """The bash the test runs for ``block``: replacements, the free port, the notes' commands."""
    note = block.note
    code = note.body + "\n" if note.body else block.code
    for old, new in note.replaces:
        if old not in code:
            raise NoteError(f"{block.id}: replace={old!r} no longer matches the block")
        code = code.replace(old, new)
    parts = [note.get("before"), code, note.get("after")]
    return PORT.sub(str(port), "\n".join(p for p in parts if p))
