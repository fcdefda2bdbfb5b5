"""Run by an earlier release of zhiwen (``PYTHONPATH=<git archive of it>/src``): fills the home
``ZHIWEN_HOME`` the way that release does — a small KB (hash embedder) with an owner's edit-free
index, a conversation with an advisor's session beside it (the layout before sessions kept every
answerer's state in one row), a runtime setting — and prints its search results as JSON.

Only APIs the earlier release has are used here; the test opens the home with this release.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

QUESTIONS = ("怎么退货", "发票如何开具", "保修期多长", "运费谁出")
DOCUMENTS = {
    "退货": "# 退货\n\n收到商品七天内可以无理由退货，商品需保持完好，退货运费由买家承担。",
    "发票": "# 发票\n\n下单时选择开具电子发票，填写抬头和税号，发票在发货后三天内发到邮箱。",
    "保修": "# 保修\n\n整机保修一年，主要部件保修三年，保修期内非人为损坏免费维修。",
    "运费": "# 运费\n\n订单满九十九元包邮，不满九十九元收取运费八元，偏远地区另计。",
}


def main() -> None:
    from zhiwen.appkit.sessions import ConversationMemory

    from zhiwen.config import get_settings
    from zhiwen.config.runtime import DynamicSettingsService
    from zhiwen.documents import Document
    from zhiwen.kb.registry import close_all, open_kb

    home = Path(os.environ["ZHIWEN_HOME"])
    kb = open_kb("旧版知识库", create=True, embedder="hash")
    docs = [Document(name, text, name, {"source": f"{name}.md"}) for name, text in DOCUMENTS.items()]
    kb.index_documents(docs, progress=False)
    hits = {q: [h.chunk.id for h in kb.search(q, top_k=5)] for q in QUESTIONS}
    memory = ConversationMemory(home / "sessions.sqlite")
    turns = [{"role": "user", "content": "怎么退货"}, {"role": "assistant", "content": "七天内无理由退货"}]
    memory.append("caller-1", "s-1", turns)
    memory.append("caller-1", "advisor/s-1", turns, state={"budget": 3000})
    DynamicSettingsService(get_settings()).update({"retrieval": {"top_k": 7}})
    close_all()
    json.dump({"hits": hits}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
