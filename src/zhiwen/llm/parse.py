"""Reading model output: lenient JSON, tool calls, and streamed chunks → typed events.

JSON repair is ``json_repair``'s (code fences, prose around the value, trailing commas, single
quotes, Python literals, comments, unclosed brackets); :func:`parse_json_lenient` only adds
"no JSON at all is an error". :class:`StreamAssembler` turns OpenAI ``chat.completion.chunk``
dicts into :mod:`zhiwen.llm.base` events, joining ``delta.tool_calls`` fragments by index.
:func:`strip_think` removes a reasoning model's ``<think>…</think>`` blocks from a reply, and
:class:`ThinkFilter` does the same to a stream as it arrives (a tag split across deltas is held
back until it is whole), so the reasoning is never shown.

Example::

    >>> parse_json_lenient("好的：```json\\n{'route': 'list', 'n': 3,}\\n```")
    {'route': 'list', 'n': 3}
    >>> asm = StreamAssembler()
    >>> for chunk in chunks:                 # dicts from the SDK's stream
    ...     for event in asm.feed(chunk):
    ...         handle(event)
    >>> for event in asm.finish():          # pending tool calls, then StreamFinished
    ...     handle(event)
    >>> strip_think("<think>先想想……</think>\n\n可以免签 [1]。")
    '可以免签 [1]。'
    >>> f = ThinkFilter()
    >>> f.feed("<thi") + f.feed("nk>嗯</think>答") + f.flush()
    '答'
"""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

from zhiwen.errors import LLMError
from zhiwen.llm.base import ContentDelta, StreamEvent, StreamFinished, ToolCall, ToolCallCompleted
from zhiwen.llm.errors import llm_error


class JSONRepairError(ValueError):
    """The text holds no JSON object or array, even after repair."""


def parse_json_lenient(text: str) -> Any:
    """Parse ``text`` as JSON; repair model sloppiness; a reply with no object/array raises."""
    if not isinstance(text, str) or not text.strip():
        raise JSONRepairError("empty text")
    try:
        return json.loads(text)
    except ValueError:
        pass
    value = json_repair.loads(text, skip_json_loads=True)
    if not isinstance(value, dict | list):
        raise JSONRepairError(f"no JSON value found in: {text.strip()[:120]!r}")
    return value


def parse_tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    """OpenAI ``tool_calls`` (or legacy ``function_call``) → :class:`ToolCall` with parsed arguments."""
    raw_calls = message.get("tool_calls") or []
    if not raw_calls and isinstance(message.get("function_call"), dict):
        raw_calls = [{"id": "call_0", "function": message["function_call"]}]
    calls: list[ToolCall] = []
    for i, raw in enumerate(raw_calls):
        fn = raw.get("function") or {}
        name = fn.get("name")
        if not name:
            raise llm_error(LLMError, f"tool call without a name: {raw!r:.200}", "bad_reply")
        args_raw = fn.get("arguments")
        if isinstance(args_raw, dict):
            args = args_raw
        elif args_raw in (None, ""):
            args = {}
        else:
            try:
                args = parse_json_lenient(str(args_raw))
            except JSONRepairError as exc:
                raise llm_error(LLMError, f"tool {name}: arguments are not JSON: {exc}", "bad_json") from exc
            if not isinstance(args, dict):
                raise llm_error(LLMError, f"tool {name}: arguments are not an object", "bad_json")
        calls.append(ToolCall(id=str(raw.get("id") or f"call_{i}"), name=str(name), arguments=args))
    return calls


def message_text(content: Any) -> str:
    """Message ``content`` as text (some servers send a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def usage_tokens(usage: Any) -> tuple[int, int] | None:
    """``(prompt_tokens, completion_tokens)`` of a ``usage`` dict, or None when absent."""
    if not isinstance(usage, dict):
        return None
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


class StreamAssembler:
    """Chunks of one streamed completion → content deltas, completed tool calls, a final event."""

    def __init__(self) -> None:
        self.content_seen = False
        self.finish_reason: str | None = None
        self.usage: tuple[int, int] | None = None
        self._tool_parts: dict[int, dict[str, Any]] = {}
        self.tool_calls: list[ToolCall] = []

    def feed(self, chunk: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        if (usage := usage_tokens(chunk.get("usage"))) is not None:
            self.usage = usage  # the include_usage chunk (choices: []), or usage on the last chunk
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            text = message_text(delta.get("content"))
            if text:
                self.content_seen = True
                events.append(ContentDelta(text))
            for frag in delta.get("tool_calls") or []:
                self._add_fragment(int(frag.get("index") or 0), frag)
            if isinstance(delta.get("function_call"), dict):  # legacy single-function streaming
                self._add_fragment(0, {"function": delta["function_call"]})
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
                events.extend(self._complete_tools())
        return events

    def _add_fragment(self, index: int, frag: dict[str, Any]) -> None:
        part = self._tool_parts.setdefault(index, {"id": None, "name": "", "arguments": ""})
        if frag.get("id"):
            part["id"] = frag["id"]
        fn = frag.get("function") or {}
        name = fn.get("name")
        if name and name != part["name"]:
            part["name"] += name  # a split name is joined; a name repeated in every fragment is not
        if fn.get("arguments"):
            part["arguments"] += (
                fn["arguments"] if isinstance(fn["arguments"], str) else json.dumps(fn["arguments"])
            )

    def _complete_tools(self) -> list[StreamEvent]:
        if not self._tool_parts:
            return []
        raw = [
            {"id": p["id"] or f"call_{i}", "function": {"name": p["name"], "arguments": p["arguments"]}}
            for i, p in sorted(self._tool_parts.items())
        ]
        self._tool_parts.clear()
        calls = parse_tool_calls({"tool_calls": raw})
        self.tool_calls.extend(calls)
        return [ToolCallCompleted(call) for call in calls]

    def finish(self) -> list[StreamEvent]:
        """Tool calls still open (no finish_reason was sent), then :class:`StreamFinished`."""
        events = self._complete_tools()
        prompt, completion = self.usage if self.usage is not None else (None, None)
        events.append(StreamFinished(self.finish_reason, prompt, completion))
        return events

    @property
    def empty(self) -> bool:
        return not self.content_seen and not self.tool_calls


def completion_chunk(body: dict[str, Any]) -> dict[str, Any]:
    """A whole completion (from a server that ignored ``stream: true``) as one stream chunk."""
    choices = []
    for choice in body.get("choices") or []:
        message = choice.get("message") or {}
        tool_calls = [dict(c, index=i) for i, c in enumerate(message.get("tool_calls") or [])]
        delta = {"content": message.get("content"), "tool_calls": tool_calls}
        if isinstance(message.get("function_call"), dict):
            delta["function_call"] = message["function_call"]
        choices.append({"delta": delta, "finish_reason": choice.get("finish_reason")})
    return {"usage": body.get("usage"), "choices": choices}


# -- reasoning blocks ------------------------------------------------------------------------------
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)  # an unclosed block runs to the end


def strip_think(text: str) -> str:
    """``text`` without ``<think>…</think>`` blocks (an unclosed one: everything after it), stripped.

    A reply that opens with the reasoning's end (``…</think>答案``: the template put ``<think>``
    in the prompt) keeps only what follows it.
    """
    if THINK_CLOSE in text and THINK_OPEN not in text.split(THINK_CLOSE, 1)[0]:
        text = text.split(THINK_CLOSE, 1)[1]
    return _THINK_BLOCK.sub("", text).replace(THINK_CLOSE, "").strip()


def _partial_tag(text: str, tag: str) -> int:
    """How many of ``text``'s last characters could start ``tag`` (held back for the next delta)."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


class ThinkFilter:
    """Streamed text with its ``<think>…</think>`` blocks left out, delta by delta.

    ``feed`` returns what can be shown now; ``flush`` what is left at the end (nothing of an
    unclosed block). ``seen`` says whether a block was dropped.
    """

    def __init__(self) -> None:
        self._pending = ""
        self._inside = False
        self.seen = False

    def feed(self, text: str) -> str:
        self._pending += text
        shown: list[str] = []
        while True:
            tag = THINK_CLOSE if self._inside else THINK_OPEN
            at = self._pending.find(tag)
            if at < 0:
                keep = _partial_tag(self._pending, tag)
                if not self._inside:
                    shown.append(self._pending[: len(self._pending) - keep])
                self._pending = self._pending[len(self._pending) - keep :]
                return "".join(shown)
            if not self._inside:
                shown.append(self._pending[:at])
                self.seen = True
            self._pending = self._pending[at + len(tag) :]
            self._inside = not self._inside

    def flush(self) -> str:
        rest = "" if self._inside else self._pending
        self._pending = ""
        return rest
