"""Error types with the project's error codes and Chinese user messages.

Every failure a user can cause or see maps to one :class:`ZhiwenError` subclass. The API turns
them into ``{code, message, data}`` with the HTTP status below; the CLI prints ``message`` (and
``detail``) on one line and exits non-zero.

| code | meaning | HTTP |
|------|---------|------|
| 1001 | LLM timeout | 504 |
| 1002 | LLM key invalid / misconfigured | 502 |
| 1003 | LLM rate limited | 429 |
| 1099 | LLM unknown error | 502 |
| 2001 | tool argument validation | 422 |
| 2002 | data query failed (store down) | 503 |
| 2003 | calculation error | 422 |
| 3001 | missing required parameter | 422 |
| 3002 | wrong parameter type | 422 |
| 3003 | invalid parameter value / range | 422 |
| 3004 | not found (knowledge base, document) | 404 |
| 3005 | request too large | 413 |
| 3006 | unauthorised | 401 |
| 3007 | bad input data (ingest) | 422 |
| 3008 | knowledge base busy: another writer holds its lock | 409 |
| 3012 | forbidden: the key may not read / change this KB, or only the admin token may | 403 |
| 3013 | cross-site request refused (foreign ``Origin`` / ``Referer``) | 403 |
| 3014 | unknown ``Host`` (DNS-rebinding protection) | 421 |

(3010 / 3011, the upload queue's 429 / 507, live with its caps in :mod:`zhiwen.uploads.budget`.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


class ZhiwenError(Exception):
    code: int = 1099
    http_status: int = 500
    user_message: str = "服务暂时不可用，请稍后重试"

    def __init__(self, detail: str = "", *, message: str | None = None, data: Any = None) -> None:
        self.detail = detail
        self.message = message or self.user_message
        self.data = data
        super().__init__(f"{self.message}: {detail}" if detail else self.message)

    @property
    def headers(self) -> dict[str, str]:
        """HTTP headers the error response carries (e.g. ``Retry-After`` of a 503); none by default."""
        return {}


# -- LLM (10xx) -------------------------------------------------------------------------------
class LLMError(ZhiwenError):
    code = 1099
    http_status = 502
    user_message = "服务暂时不可用，请稍后重试"


class LLMTimeout(LLMError):
    code = 1001
    http_status = 504
    user_message = "服务响应超时，请稍后重试"


class LLMAuthError(LLMError):
    code = 1002
    http_status = 502
    user_message = "服务配置错误，请联系管理员"


class LLMRateLimited(LLMError):
    code = 1003
    http_status = 429
    user_message = "请求过于频繁，请稍后重试"


# -- tools / data (20xx) ----------------------------------------------------------------------
class ToolValidationError(ZhiwenError):
    code = 2001
    http_status = 422
    user_message = "输入参数有误"


class StoreUnavailable(ZhiwenError):
    """The store (e.g. PostgreSQL) cannot be reached; callers may retry later."""

    code = 2002
    http_status = 503
    user_message = "数据查询失败，请稍后重试"


class CalculationError(ZhiwenError):
    code = 2003
    http_status = 422
    user_message = "计算过程出错，请检查输入"


# -- request (30xx) ---------------------------------------------------------------------------
class MissingParameter(ZhiwenError):
    code = 3001
    http_status = 422
    user_message = "缺少必需参数"


class WrongParameterType(ZhiwenError):
    code = 3002
    http_status = 422
    user_message = "参数类型错误"


class InvalidParameter(ZhiwenError):
    code = 3003
    http_status = 422
    user_message = "参数取值无效"


class NotFound(ZhiwenError):
    code = 3004
    http_status = 404
    user_message = "资源不存在"


class KnowledgeBaseNotFound(NotFound):
    """A KB that is not there. Raise it with :func:`kb_not_found`, whose message says how to build
    it (the app's setup, or ``zhiwen index``) and whose ``data`` carries ``kb``, ``app`` and
    ``setup_command``.

    ``unhinted`` is the KB's name when the raise site could not know which command builds it
    (below the apps, no registry is known): the interface names it (:func:`with_setup_hint`).
    """

    user_message = "知识库不存在"
    unhinted: str | None = None


@dataclass(frozen=True, slots=True)
class SetupHint:
    """How a missing KB comes to be: ``command`` builds it; ``app`` owns it (None: no app does).

    ``app_kbs`` is set when the name asked for is an app's own name rather than one of its KBs
    (``kb=policy``): the app's KBs, so the message can name them.
    """

    command: str
    app: str | None = None
    app_kbs: tuple[str, ...] = ()


def index_hint(kb: str) -> SetupHint:
    """A KB no app owns: documents make it."""
    return SetupHint(f"zhiwen index --kb {kb} <目录>")


#: KB name → how it is built: the app registry's (``AppRegistry.setup_hint``), which the engine
#: below the apps cannot know; it is handed to :func:`kb_not_found` where known, and applied by
#: the interfaces (:func:`with_setup_hint`) to an error raised below the apps
SetupHints = Callable[[str], SetupHint]


def kb_not_found(name: str, detail: str = "", hint: SetupHint | None = None) -> KnowledgeBaseNotFound:
    """The one "KB not found" error: 404 / 3004 with the command that builds it — ``hint``, or
    ``zhiwen index`` where the raise site does not know the apps (the error is then ``unhinted``).

    Example::

        >>> str(kb_not_found("notes").message)
        '知识库不存在：notes（导入文档即可建立：zhiwen index --kb notes <目录>）'
        >>> kb_not_found("policy_visa", hint=apps.setup_hint("policy_visa")).data["setup_command"]
        'zhiwen policy setup ../shared/data'
    """
    unhinted = hint is None
    hint = hint or index_hint(name)
    if hint.app is None:
        message = f"知识库不存在：{name}（导入文档即可建立：{hint.command}）"
    elif hint.app_kbs:
        message = (
            f"{name} 是应用名，不是知识库（它的知识库：{'、'.join(hint.app_kbs)}）；"
            f"尚未建立时请先运行 {hint.command}"
        )
    else:
        message = f"知识库 {name} 尚未建立：请先运行 {hint.command}"
    data = {"kb": name, "app": hint.app, "setup_command": hint.command}
    error = KnowledgeBaseNotFound(detail or f"no knowledge base named {name!r}", message=message, data=data)
    if unhinted:
        error.unhinted = name
    return error


def with_setup_hint(exc: ZhiwenError, hints: SetupHints) -> ZhiwenError:
    """``exc``, or — a "KB not found" raised where the apps are unknown — the same error naming
    the command ``hints`` gives (the app's setup for an app's KB). Interfaces apply it where
    errors reach the user (the API's handlers, the CLI's one error line, the KBs an app opens).

    Example::

        >>> err = with_setup_hint(kb_not_found("policy_visa"), apps.setup_hint)
        >>> err.message
        '知识库 policy_visa 尚未建立：请先运行 zhiwen policy setup ../shared/data'
    """
    if isinstance(exc, KnowledgeBaseNotFound) and exc.unhinted:
        return kb_not_found(exc.unhinted, exc.detail, hints(exc.unhinted))
    return exc


@contextmanager
def setup_hinted(hints: SetupHints) -> Iterator[None]:
    """Inside: a "KB not found" raised where the apps are unknown leaves naming the command
    ``hints`` gives (:func:`with_setup_hint`); e.g. around the KB opener an app is handed."""
    try:
        yield
    except KnowledgeBaseNotFound as exc:
        hinted = with_setup_hint(exc, hints)
        if hinted is exc:
            raise
        raise hinted from exc


class PayloadTooLarge(ZhiwenError):
    code = 3005
    http_status = 413
    user_message = "请求内容过大"


class Unauthorized(ZhiwenError):
    code = 3006
    http_status = 401
    user_message = "未授权：缺少或错误的访问令牌"


class Forbidden(ZhiwenError):
    """A valid credential that may not do this: another KB, a write with a read-only key, or a
    settings change without the admin token."""

    code = 3012
    http_status = 403
    user_message = "无权执行此操作"


class CrossSiteRequest(ZhiwenError):
    """A state-changing request sent by a page of another site (``Origin`` / ``Referer``)."""

    code = 3013
    http_status = 403
    user_message = "拒绝跨站请求：请求来源不是本服务，也不在允许的来源（api.cors_origins）中"


class MisdirectedHost(ZhiwenError):
    """A ``Host`` this server does not answer to: a DNS-rebinding page, or a missing setting."""

    code = 3014
    http_status = 421
    user_message = "拒绝请求：未知的主机名（Host），请在 api.allowed_hosts 中配置"


class IngestError(ZhiwenError):
    """Bad input data: missing path, unknown format, empty corpus, undecodable file, bad jsonl line."""

    code = 3007
    http_status = 422
    user_message = "导入数据有误"


class KnowledgeBaseBusy(ZhiwenError):
    """Another process (or thread) holds the knowledge base's writer lock (``Store.writer_lock``)."""

    code = 3008
    http_status = 409
    user_message = "知识库正在被另一个导入任务写入，请稍后重试"
