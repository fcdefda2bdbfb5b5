"""The product invariants an LLM path must keep whatever the model says (#31), as plain checks.

Shared by ``bench/bench_llm_paths.py`` (it counts them) and the ``llm_real`` tests (they assert
them). Each takes what the product returned — an :class:`~zhiwen.answer.model.Answer` or an
app's message — and, where it helps, the raw :class:`~llm_real.recording.Call` behind it.

Example::

    >>> answer_flags(Answer(answer="可以免签。", citations=[c], llm_used=True), None)
    ['uncited_shown_cited']
    >>> figures_not_in("月供约9500元", ["月供 **8,967.34元**"])
    ['9500']
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from zhiwen.answer.model import Answer

from .recording import Call

_MARKER = re.compile(r"\[(\d+)\]")
_LATIN = re.compile(r"[A-Za-z]")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def json_verdict(call: Call | None) -> str:
    """``as_is`` for strict JSON, ``repaired`` for what only ``json_repair`` reads, else ``bad``."""
    if call is None or call.status != 200:
        return "bad"
    try:
        json.loads(call.content)
        return "as_is"
    except ValueError:
        pass
    from zhiwen.llm.parse import JSONRepairError, parse_json_lenient

    try:
        parse_json_lenient(call.content)
        return "repaired"
    except JSONRepairError:
        return "bad"


def markers(text: str) -> list[int]:
    return [int(m) for m in _MARKER.findall(text)]


def answer_flags(answer: Answer, call: Call | None) -> list[str]:
    """What is wrong with an LLM-written answer shown beside its citations (``[]``: nothing).

    ``uncited_shown_cited``: no ``[n]`` marker, yet the answer comes with its sources as if they
    grounded it; ``marker_out_of_range``: a ``[n]`` with no n-th source.
    """
    if not answer.llm_used:
        return []
    flags = []
    found = markers(answer.answer)
    if not found:
        flags.append("uncited_shown_cited" if answer.citations else "uncited")
    elif any(m < 1 or m > len(answer.citations) for m in found):
        flags.append("marker_out_of_range")
    return flags + text_flags(answer.answer, call)


#: characters of the reply that, found verbatim in the prompt, make it an echo
ECHO_CHARS = 40
#: a line repeated this often is a loop, not an answer
REPEATS = 4


def echoes_prompt(text: str, call: Call | None) -> bool:
    """The reply repeats the prompt (a small model continuing its input): its opening
    :data:`ECHO_CHARS` characters, or any of its lines that long, stand verbatim in the prompt."""
    if call is None:
        return False
    prompt = "\n".join(str(m.get("content") or "") for m in call.request.get("messages") or [])
    pieces = [text.strip()[:ECHO_CHARS], *(ln.strip() for ln in text.splitlines())]
    return any(len(p) >= ECHO_CHARS and p[:ECHO_CHARS] in prompt for p in pieces)


def repeats_itself(text: str) -> bool:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    tokens = text.split()
    return any(lines.count(ln) >= REPEATS for ln in set(lines)) or any(
        tokens.count(t) >= 4 * REPEATS and len(t) < 4 for t in set(tokens)
    )


def text_flags(text: str, call: Call | None) -> list[str]:
    """A ``<think>`` block shown, an English reply to a Chinese product, a reply cut at max_tokens,
    the prompt echoed back, a reply that loops."""
    flags = []
    if "<think>" in text or "</think>" in text:
        flags.append("think_shown")
    if len(_LATIN.findall(text)) > 2 * len(_CJK.findall(text)):
        flags.append("english")
    if call is not None and call.finish_reason == "length":
        flags.append("cut_at_max_tokens")
    if echoes_prompt(text, call):
        flags.append("echoes_prompt")
    if repeats_itself(text):
        flags.append("repeats_itself")
    return flags


def figures_not_in(text: str, sources: Sequence[str]) -> list[str]:
    """Figures of ``text`` (beyond small integers) that none of ``sources`` states, in any
    rounding or unit — stricter than the advisor's own check, which also accepts any number of
    any tool result (so a right number under the wrong label passes it)."""
    from zhiwen.chinese.number_check import allowed_numbers, check_numbers

    return check_numbers(text, allowed_numbers([], sources)).unsupported


def listing_numbers_unsupported(answer: Answer, question: str) -> list[str]:
    """Figures of a listings answer that no shown listing, nor the question, holds."""
    from zhiwen.chinese.number_check import allowed_numbers, check_numbers

    listings = answer.data.get("retrieved_properties") or []
    allowed = allowed_numbers(listings, [question, str(answer.data.get("requirements") or "")])
    return check_numbers(answer.answer, allowed).unsupported


def role_messages(answer: Answer) -> list[Mapping[str, Any]]:
    """The advisor's role messages and discussion messages of one answer."""
    return [*(answer.data.get("roles") or []), *(answer.data.get("discussion") or [])]


# -- measures the bench reports ----------------------------------------------------------------
def pct(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def char_f1(pred: str, gold: str) -> float:
    if not pred or not gold:
        return 0.0
    common = sum((Counter(pred) & Counter(gold)).values())
    if not common:
        return 0.0
    p, r = common / len(pred), common / len(gold)
    return round(2 * p * r / (p + r), 3)


def condense_counts() -> dict[str, float]:
    """``CONDENSE_CALLS{outcome}`` now: used / rejected / error."""
    from zhiwen.metrics import CONDENSE_CALLS

    return {
        s.labels["outcome"]: s.value
        for metric in CONDENSE_CALLS.collect()
        for s in metric.samples
        if s.name.endswith("_total")
    }
