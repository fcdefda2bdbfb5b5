"""The OpenAI-compatible front door: every KB and every app as a model, under ``/v1``.

Chat clients (Open WebUI, LobeChat, Chatbox, Cherry Studio, Dify …), the official SDKs and
LangChain's ``ChatOpenAI`` talk to zhiwen as to any OpenAI endpoint:

| method | path | what |
|--------|------|------|
| GET | ``/v1/models`` , ``/v1/models/{model}`` | one model per app and per KB (:mod:`.models`) |
| POST | ``/v1/chat/completions`` | answers, streamed or not, with citations (:mod:`.chat`) |
| POST | ``/v1/embeddings`` | a KB's own embeddings (:mod:`.embeddings`) |
| POST | ``/v1/feedback`` | extension: 👍/👎 on an answer by its ``zhiwen.answer_id`` (:mod:`.feedback`) |

Errors are OpenAI-shaped (:mod:`.errors`). Optional bearer keys guard every route through the
server's one access dependency (:func:`zhiwen.httpkit.deps.get_access`): with keys
(``ZHIWEN_API__KEYS='["sk-team-a", {"key": "sk-r", "kbs": ["demo"], "write": false}]'``) or an
admin token, a request without one of them gets 401 ``invalid_api_key``; a scoped key sees only
the models over its KBs and gets 403 ``permission_denied`` for any other
(:func:`.catalog.require_model_access`). The caller's key also names the caller in the derived
session ids (:func:`zhiwen.httpkit.deps.get_caller`), so two teams asking the same first question
never share a conversation. Mount with ``app.include_router(zhiwen.api.openai.router)``: the
router carries its own (OpenAI-shaped) error documentation, not the envelope's.

Example::

    from openai import OpenAI

    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="none")
    [m.id for m in client.models.list()]                      # every app, then every KB: […, 'demo']
    reply = client.chat.completions.create(
        model="demo", messages=[{"role": "user", "content": "怎么创建知识库？"}]
    )
    print(reply.choices[0].message.content)                   # "…[1]…"
    print(reply.model_extra["citations"][0]["title"])         # the source behind [1]
"""

from __future__ import annotations

from fastapi import APIRouter, Depends

from zhiwen.api.openai import chat, embeddings, feedback, models
from zhiwen.api.openai.errors import is_openai_path
from zhiwen.httpkit.deps import get_access

router = APIRouter(prefix="/v1", tags=["OpenAI 兼容接口"], dependencies=[Depends(get_access)])
router.include_router(models.router)
router.include_router(chat.router)
router.include_router(embeddings.router)
router.include_router(feedback.router)

__all__ = ["is_openai_path", "router"]
