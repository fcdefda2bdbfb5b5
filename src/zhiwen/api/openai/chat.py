"""``POST /v1/chat/completions``: every KB and every app answers as a chat model.

``model`` picks the app or KB (:mod:`.catalog`); the conversation becomes an
:class:`AskRequest` (:mod:`.messages`) and one turn of the conversation service
(:mod:`zhiwen.conversation.service`: reconciled with the session the id names, resolved once,
kept once); the client's ``temperature`` / ``max_tokens`` /
``stop`` reach the LLM through :func:`zhiwen.llm.overrides.with_overrides`; the answer is
shaped by :mod:`.answer` (non-streamed) or :mod:`.stream` (``stream: true``).

A scoped key may ask only the models over KBs it may read (else 403 ``permission_denied``);
the app answering it opens no other KB (:meth:`zhiwen.httpkit.auth.Access.guard`).

Failures before the first byte are HTTP errors in OpenAI's shape (an unknown model, an app whose
KBs are not built, a bad request); the stream starts only once the app has produced its first
event, so clients see the real status. Later failures are in-band error frames.

Example::

    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="none")
    reply = client.chat.completions.create(
        model="demo", messages=[{"role": "user", "content": "怎么创建知识库？"}]
    )
    reply.choices[0].message.content, reply.model_extra["citations"][0]["title"]
"""

from __future__ import annotations

import time
import uuid
from itertools import chain
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import iterate_in_threadpool
from starlette.responses import StreamingResponse

from zhiwen import __version__
from zhiwen.answer.model import Answer
from zhiwen.api.openai.answer import closing_text, number_citations, usage, zhiwen_info
from zhiwen.api.openai.catalog import require_model_access, resolve_model
from zhiwen.api.openai.errors import OPENAI_ERROR_RESPONSES, guarded
from zhiwen.api.openai.messages import ParsedMessages, derive_session_id, parse_messages
from zhiwen.api.openai.schemas import AssistantMessage, ChatCompletion, ChatCompletionRequest, Choice
from zhiwen.api.openai.stream import StreamState, completion_frames
from zhiwen.appkit.app import AppContext, AskRequest
from zhiwen.appkit.registry import Answering, AppRegistry
from zhiwen.conversation import service as chat
from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import (
    get_access,
    get_app_context,
    get_apps,
    get_caller,
    get_kb_registry,
    get_settings_dep,
)
from zhiwen.llm.overrides import with_overrides

router = APIRouter()
FINGERPRINT = f"zhiwen-{__version__}"
_END = object()

_STREAM_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": (
            "非流式为 chat.completion JSON；stream: true 时为 SSE："
            "chat.completion.chunk 逐块，以 data: [DONE] 结束"
        ),
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "properties": {
                        "data": {
                            "type": "string",
                            "description": "chat.completion.chunk 的 JSON；最后一个事件为 [DONE]",
                        }
                    },
                    "required": ["data"],
                }
            }
        },
    }
}


def session_id_for(body: ChatCompletionRequest, request: Request, messages: ParsedMessages) -> str:
    explicit = body.session_id or request.headers.get("x-session-id", "").strip()[:128]
    if explicit:
        return explicit
    return derive_session_id(
        messages, model=body.model, caller=get_caller(request), user=body.user
    )


class NoOptions(BaseModel):
    """What an answerer without options accepts: nothing."""

    model_config = ConfigDict(extra="forbid")


def app_options(target: Answering, options: dict[str, Any] | None) -> dict[str, Any]:
    """``options`` checked against the answering app's declared ``options_model``.

    A bad option is a request error like any other field's (400, ``param`` = ``options.<name>``).
    """
    if not options:
        return {}
    model = target.answerer.options_model or NoOptions
    try:
        return model.model_validate(options).model_dump(exclude_none=True)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", "options", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from exc


def _completion(
    body: ChatCompletionRequest,
    target: Answering,
    messages: ParsedMessages,
    answer: Answer,
    ctx: AppContext,
) -> ChatCompletion:
    cited = number_citations(answer.citations, ctx)
    text = answer.answer + closing_text(answer, answer.answer, cited)
    info = zhiwen_info(answer, app=target.answerer.app_name, kb=target.kb)
    return ChatCompletion(
        id=f"chatcmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=body.model,
        system_fingerprint=FINGERPRINT,
        choices=[Choice(message=AssistantMessage(content=text))],
        usage=usage(messages.texts(), text),
        citations=cited,
        zhiwen=info,
    )


@router.post(
    "/chat/completions",
    summary="对话补全（OpenAI 兼容）：每个知识库、每个应用都是一个模型",
    response_model=ChatCompletion,
    responses={**OPENAI_ERROR_RESPONSES, **_STREAM_DOC},
)
async def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    ctx: AppContext = Depends(get_app_context),
    apps: AppRegistry = Depends(get_apps),
    access: Access = Depends(get_access),
) -> Any:
    settings = get_settings_dep(request)
    require_model_access(access, body.model, apps)  # 403 before the model is even looked up
    target = await guarded(resolve_model, body.model, apps, get_kb_registry(request))
    messages = parse_messages(body.messages, settings.api.max_question_chars)
    session_id = session_id_for(body, request, messages)
    ctx.llm = with_overrides(
        ctx.llm,
        temperature=body.temperature,
        max_tokens=body.max_completion_tokens or body.max_tokens,
        stop=body.stop,
    )
    ask_request = AskRequest(
        question=messages.question,
        history=messages.history,
        session_id=session_id,
        caller=get_caller(request),
        kb=target.kb,
        top_k=body.top_k,
        options=app_options(target, body.options),
    )
    answerer = target.answerer
    if not body.stream:
        answer = await guarded(chat.ask, answerer, ask_request, ctx)
        return await guarded(_completion, body, target, messages, answer, ctx)

    events = iter(await guarded(chat.stream, answerer, ask_request, ctx))
    first = await guarded(next, events, _END)  # errors so far are real HTTP errors
    state = StreamState(
        completion_id=f"chatcmpl-{uuid.uuid4().hex}",
        created=int(time.time()),
        model=body.model,
        fingerprint=FINGERPRINT,
        include_usage=bool(body.stream_options and body.stream_options.include_usage),
        prompt_texts=messages.texts(),
        app=answerer.app_name,
        kb=target.kb,
        event_text=answerer.event_text(),
    )
    everything = events if first is _END else chain([first], events)
    frames = completion_frames(everything, state, ctx)
    return StreamingResponse(
        iterate_in_threadpool(frames),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
