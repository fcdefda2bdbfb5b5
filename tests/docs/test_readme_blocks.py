"""The doc test's notes: a block cannot go untested silently, nor be replaced without a reason."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readme_blocks import NoteError, parse_readme, script

FENCE = "```"


def _md(*parts: str) -> str:
    return "\n".join(parts) + "\n"


def test_blocks_get_ids_from_their_heading() -> None:
    blocks = parse_readme(
        _md(
            "## Using it",
            f"{FENCE}bash",
            "zhiwen apps",
            FENCE,
            f"{FENCE}bash",
            "zhiwen kb list",
            FENCE,
            "### 安全 / Security",
            f"{FENCE}python",
            "print(1)",
            FENCE,
        )
    )
    assert [(b.id, b.lang, b.how) for b in blocks] == [
        ("using-it", "bash", "as written"),
        ("using-it-2", "bash", "as written"),
        ("安全-security", "python", "as written"),
    ]
    assert blocks[0].code == "zhiwen apps\n"


def test_a_note_with_an_equivalent_and_flags() -> None:
    (block,) = parse_readme(
        _md(
            '<!-- doctest: server slow reason="too slow"',
            "zhiwen kb list",
            "-->",
            f"{FENCE}bash",
            "zhiwen eval big",
            FENCE,
        )
    )
    assert block.how == "equivalent"
    assert block.note.flags == {"server", "slow"}
    assert script(block, port=9) == "zhiwen kb list\n"


def test_replacements_and_the_port() -> None:
    (block,) = parse_readme(
        _md(
            '<!-- doctest: replace="--queries 200" with="--queries 2" replace="a\\nb\\n" with="" '
            'reason="r" -->',
            f"{FENCE}bash",
            "zhiwen eval x --queries 200",
            "a",
            "b",
            "curl -s 'http://127.0.0.1:8000/x' localhost:8000",
            "zhiwen serve --port 8000",
            FENCE,
        )
    )
    assert block.how == "as written, with replacements"
    assert script(block, port=4321).splitlines() == [
        "zhiwen eval x --queries 2",
        "curl -s 'http://127.0.0.1:4321/x' localhost:4321",
        "zhiwen serve --port 4321",
    ]


def test_before_after_and_stdin() -> None:
    (block,) = parse_readme(
        _md(
            '<!-- doctest: stdin="q1\\n/exit" before="zhiwen index x" after="curl y" -->',
            f"{FENCE}bash",
            "zhiwen chat x",
            FENCE,
        )
    )
    assert block.note.get("stdin") == "q1\n/exit"
    assert script(block, port=1) == "zhiwen index x\nzhiwen chat x\n\ncurl y"


@pytest.mark.parametrize(
    ("note", "message"),
    [
        ("<!-- doctest: skip -->", "needs a reason"),
        ('<!-- doctest: data="subset" -->', "needs a reason"),
        ('<!-- doctest: replace="a" with="b" -->', "needs a reason"),
        ('<!-- doctest: replace="a" reason="r" -->', 'has no "with"'),
        ('<!-- doctest: with="b" reason="r" -->', 'without a "replace"'),
        ("<!-- doctest: fast -->", "unknown doctest flag"),
        ('<!-- doctest: speed="x" -->', "unknown doctest key"),
    ],
)
def test_bad_notes_fail(note: str, message: str) -> None:
    with pytest.raises(NoteError, match=message):
        parse_readme(_md(note, f"{FENCE}bash", "zhiwen apps", FENCE))


def test_a_note_must_sit_on_a_bash_fence() -> None:
    with pytest.raises(NoteError, match="right above"):
        parse_readme(_md("<!-- doctest: slow -->", "", f"{FENCE}bash", "zhiwen apps", FENCE))
    with pytest.raises(NoteError, match="right above"):
        parse_readme(_md("<!-- doctest: slow -->", f"{FENCE}python", "print()", FENCE))
    with pytest.raises(NoteError, match="never closed"):
        parse_readme(_md('<!-- doctest: reason="r"', "zhiwen apps", f"{FENCE}bash", FENCE))


def test_a_stale_replacement_fails() -> None:
    (block,) = parse_readme(
        _md('<!-- doctest: replace="gone" with="x" reason="r" -->', f"{FENCE}bash", "zhiwen apps", FENCE)
    )
    with pytest.raises(NoteError, match="no longer matches"):
        script(block, port=1)
