"""The advisor's HTTP routes: chat (SSE), the loan and tax calculators, and direct tool calls.

* ``POST /api/v1/chat`` ``{session_id, message, mode}`` → SSE ``data:`` lines: ``facts`` (the
  facts used, 「按总价…计算：」), ``role_start`` / ``role_result`` / ``discussion`` …, ``error`` on
  failure, ``done`` last (with the ``session_id``). One turn of the conversation service: the
  session is bound to the caller's API key (another key starts its own); a ``history`` the
  client sends is the truth, the session started again from it when they disagree.
* ``POST /api/v1/calc/loan`` and ``/api/v1/calc/tax`` → ``{code, message, data}`` with the
  calculators' fields. Their bodies are validated by the tools themselves, so bad input gets the error codes:
  3001 missing field, 3002 wrong type, 2001 invalid value (422), with the field named in Chinese.
* ``GET /api/v1/tools`` → the OpenAI function schemas; ``POST /api/v1/tools/{name}`` → call one.

Example::

    curl -N localhost:8000/api/v1/chat -d '{"session_id": "s1", "message": "浦东和闵行哪个房价高"}'
    curl localhost:8000/api/v1/calc/loan \
         -d '{"price": 3000000, "down_payment_ratio": 0.3, "years": 30, "rate": 3.1}'
    # {"code": 0, "message": "success", "data": {"monthly_payment": 8967.34, ...}}
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from zhiwen.appkit.app import AppContext, AskRequest, BaseApp
from zhiwen.apps.advisor.tools import LoanArgs, TaxArgs, build_registry
from zhiwen.conversation import service as conversation
from zhiwen.errors import MissingParameter, WrongParameterType
from zhiwen.httpkit.deps import get_app_context, get_caller
from zhiwen.httpkit.envelope import Envelope, ok
from zhiwen.httpkit.fields import MAX_HISTORY_MESSAGES, ChatTurn, Question
from zhiwen.httpkit.sse import SSE_RESPONSE, sse_stream
from zhiwen.tools import ToolRegistry

log = logging.getLogger(__name__)


class ChatRequest(BaseModel):
    session_id: str = Field(min_length=1, max_length=128, description="会话 ID（同一会话共享用户信息）")
    message: Question = Field(description="用户消息")
    mode: Literal["standard", "discussion"] = Field(
        "standard", description="standard 标准模式；discussion 深度分析"
    )
    history: list[ChatTurn] = Field(
        default_factory=list,
        max_length=MAX_HISTORY_MESSAGES,
        description="此前的对话（OpenAI messages 格式）；带上时以它为准，否则用服务端保存的会话",
    )


class ScheduleRowOut(BaseModel):
    period: int
    payment: float
    principal: float
    interest: float
    remaining: float


class LoanCalcResponse(BaseModel):
    down_payment: float = Field(description="首付金额（元）")
    loan_amount: float = Field(description="贷款金额（元）")
    monthly_payment: float = Field(description="月供（元；等额本金为首月）")
    total_payment: float = Field(description="还款总额（元）")
    total_interest: float = Field(description="总利息（元）")
    method: str = Field(description="还款方式")
    method_name: str = Field(description="还款方式（中文）")
    months: int = Field(description="还款月数")
    first_month_payment: float = Field(description="首月月供（元）")
    last_month_payment: float = Field(description="末月月供（元）")
    monthly_decrease: float = Field(description="等额本金每月递减额（元）")
    schedule: list[ScheduleRowOut] = Field(default_factory=list, description="还款计划（schedule 参数）")


class RuleOut(BaseModel):
    id: str
    name: str
    source: str
    effective_from: str


class TaxCalcResponse(BaseModel):
    deed_tax: float = Field(description="契税（元）")
    vat: float = Field(description="增值税（元）")
    income_tax: float = Field(description="个人所得税（元）")
    agent_fee: float = Field(description="中介费（元）")
    total: float = Field(description="税费总计（元）")
    deed_tax_rate: float = Field(description="契税税率")
    agent_fee_rate: float = Field(description="中介费率")
    rule: RuleOut = Field(description="契税规则")
    checked_on: str = Field(description="规则数据截至日期")
    notes: list[str] = Field(default_factory=list, description="计算说明")


class ToolFunction(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]


class ToolSchema(BaseModel):
    type: str = "function"
    function: ToolFunction


class InvalidJSONBody(WrongParameterType):
    http_status = 400


async def json_object(request: Request) -> dict[str, Any]:
    """The request body as a JSON object, with the error codes of a missing or malformed one."""
    raw = await request.body()
    if not raw.strip():
        raise MissingParameter("empty body", message="缺少必需参数：请求体（JSON）")
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise InvalidJSONBody(str(exc), message="参数类型错误：请求体不是合法的 JSON") from None
    if not isinstance(body, dict):
        raise WrongParameterType("body is not an object", message="参数类型错误：请求体应为 JSON 对象")
    return body


def call_checked(registry: ToolRegistry, name: str, arguments: dict[str, Any]) -> Any:
    """Call tool ``name``; a missing required field is reported first (3001), as the engine's
    request handler does, before type (3002) and value (2001) errors."""
    tool = registry.get(name)
    missing = [f for f in tool.parameters_schema()["required"] if f not in arguments]
    if missing:
        raise MissingParameter(
            f"{missing[0]}: field required", message=f"缺少必需参数：{missing[0]}", data={"field": missing[0]}
        )
    return tool(arguments)


def _body_doc(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def build_router(app: BaseApp) -> APIRouter:
    router = APIRouter(tags=["advisor"])
    calculators = build_registry(None)  # the calculators need no context

    @router.post(
        "/api/v1/chat",
        summary="购房咨询对话（SSE：role_start / role_result / discussion / done）",
        response_class=EventSourceResponse,
        responses=SSE_RESPONSE,
    )
    async def chat(
        body: ChatRequest, ctx: AppContext = Depends(get_app_context), caller: str = Depends(get_caller)
    ) -> EventSourceResponse:
        request = AskRequest(
            question=body.message,
            history=[turn.model_dump() for turn in body.history],
            session_id=body.session_id,
            caller=caller,
            options={"mode": body.mode},
        )
        events = await run_in_threadpool(conversation.stream, app, request, ctx)
        return EventSourceResponse(sse_stream(events, log=log), ping=15)

    @router.post(
        "/api/v1/calc/loan",
        summary="房贷计算器（等额本息 / 等额本金）",
        response_model=Envelope[LoanCalcResponse],
        openapi_extra=_body_doc(LoanArgs),
    )
    async def calc_loan(request: Request) -> dict[str, Any]:
        return ok(call_checked(calculators, "calc_loan", await json_object(request)))

    @router.post(
        "/api/v1/calc/tax",
        summary="二手房税费计算器（契税、增值税、个税、中介费）",
        response_model=Envelope[TaxCalcResponse],
        openapi_extra=_body_doc(TaxArgs),
    )
    async def calc_tax(request: Request) -> dict[str, Any]:
        return ok(call_checked(calculators, "calc_tax", await json_object(request)))

    @router.get(
        "/api/v1/tools",
        summary="购房顾问的工具（OpenAI 函数格式）",
        response_model=Envelope[list[ToolSchema]],
    )
    async def list_tools() -> dict[str, Any]:
        return ok(calculators.schemas())

    @router.post("/api/v1/tools/{name}", summary="直接调用一个工具", response_model=Envelope[dict[str, Any]])
    async def call_tool(
        name: str, request: Request, ctx: AppContext = Depends(get_app_context)
    ) -> dict[str, Any]:
        arguments = await json_object(request)
        registry = build_registry(ctx)
        registry.get(name)  # unknown name → 404 before anything runs
        return ok(await run_in_threadpool(call_checked, registry, name, arguments))

    return router
