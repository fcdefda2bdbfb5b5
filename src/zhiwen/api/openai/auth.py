"""Optional bearer keys for the OpenAI front door (``ZHIWEN_API__KEYS``).

No keys configured: every request is served (a local, offline server). With keys
(``ZHIWEN_API__KEYS='["sk-team-a","sk-team-b"]'``) a request needs ``Authorization: Bearer <key>``
with one of them, else 401 ``invalid_api_key``. Keys are compared in constant time. The caller's
key also names the caller in the derived session ids (:func:`caller_fingerprint`), so two
teams asking the same first question never share a conversation.

Example::

    router = APIRouter(dependencies=[Depends(require_api_key)])

    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="sk-team-a")
"""

from __future__ import annotations

import hmac

from fastapi import Request

from zhiwen.api.openai.errors import InvalidAPIKey
from zhiwen.appkit.deps import get_caller, get_settings_dep


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _matches(token: str, keys: list[str]) -> bool:
    given = token.encode("utf-8")
    found = False
    for key in keys:  # no early exit: the time taken does not tell which key is close
        found |= hmac.compare_digest(given, key.encode("utf-8"))
    return found


def require_api_key(request: Request) -> None:
    """Dependency: 401 ``invalid_api_key`` unless the bearer token is a configured key."""
    keys = [k for k in get_settings_dep(request).api.keys if k]
    if not keys:
        return
    token = bearer_token(request)
    if token is None:
        raise InvalidAPIKey(
            "missing bearer token",
            message="未提供 API Key：请在请求头中携带 Authorization: Bearer <key>",
        )
    if not _matches(token, keys):
        raise InvalidAPIKey("wrong bearer token", message="API Key 错误")


def caller_fingerprint(request: Request) -> str:
    """A short, non-reversible id of the caller's key ("" when none was sent)."""
    return get_caller(request)
