"""The advisor's stream events as plain text, for interfaces that show one message.

Chat clients (the OpenAI front door) show an answer as one markdown message, so each role reads
as a section and the discussion as one bullet list under one heading — exactly the text of the
non-streamed answer (:func:`zhiwen.apps.advisor.service.answer_text`).

Example::

    >>> render = AdvisorEventText()
    >>> render(AppEvent("facts", {"text": "按总价300万元、首付三成（90万元）计算："}))
    '按总价300万元、首付三成（90万元）计算：'
    >>> render(AppEvent("role_start", {"icon": "💰", "name": "财务顾问"}))
    '\\n\\n### 💰 财务顾问\\n'
    >>> render(AppEvent("role_result", {"content": "月供 8,967.34 元"}))
    '月供 8,967.34 元'
"""

from __future__ import annotations

from zhiwen.answer.events import AppEvent

DISCUSSION_HEADING = "### 💬 专家讨论\n\n"


class AdvisorEventText:
    """One answer's renderer: it remembers whether text was said and a discussion is open."""

    def __init__(self) -> None:
        self.said = False
        self.discussing = False

    def __call__(self, event: AppEvent) -> str:
        text = self._text(event)
        self.said = self.said or bool(text)
        return text

    def _separated(self, text: str) -> str:
        return "\n\n" + text if self.said else text

    def _text(self, event: AppEvent) -> str:
        data = event.data
        if event.type == "facts":  # the facts used, first: 「按总价300万元、首付三成……计算：」
            return self._separated(str(data.get("text") or ""))
        if event.type == "role_start":
            self.discussing = False
            heading = " ".join(str(x) for x in (data.get("icon"), data.get("name") or data.get("role")) if x)
            return self._separated(f"### {heading}\n")
        if event.type == "role_result":
            return str(data.get("content") or "")
        if event.type == "discussion":
            # one bullet list under one heading, as the non-streamed answer writes it
            head = "\n" if self.discussing else self._separated(DISCUSSION_HEADING)
            self.discussing = True
            who = f"**{data.get('from_name')} → {data.get('to_name')}**"
            return head + f"- {who}（第{data.get('round')}轮）：{data.get('content')}"
        return event.text
