"""Bearer keys for the OpenAI front door: the server's one access dependency, OpenAI-shaped.

No key and no admin token configured: every request is served (a local, offline server). With
keys (``ZHIWEN_API__KEYS='["sk-team-a", {"key": "sk-r", "kbs": ["demo"], "write": false}]'``)
or an admin token, a request needs ``Authorization: Bearer <key>`` with one of them, else 401
``invalid_api_key``. A scoped key sees only the models over its KBs (:mod:`.models`) and gets
403 ``permission_denied`` for any other (:func:`.catalog.require_model_access`,
:mod:`.embeddings`). Keys are compared in constant time (:func:`zhiwen.httpkit.deps.get_access`).
The caller's key also names the caller in the derived session ids (:func:`caller_fingerprint`),
so two teams asking the same first question never share a conversation.

Example::

    router = APIRouter(dependencies=[Depends(require_api_key)])

    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="sk-team-a")
"""

from __future__ import annotations

from fastapi import Depends, Request

from zhiwen.httpkit.auth import Access
from zhiwen.httpkit.deps import get_access, get_caller


def require_api_key(access: Access = Depends(get_access)) -> Access:
    """Dependency: 401 ``invalid_api_key`` unless the bearer token is a configured credential
    (the same :class:`Access` the rest of the request sees)."""
    return access


def caller_fingerprint(request: Request) -> str:
    """A short, non-reversible id of the caller's key ("" when none was sent)."""
    return get_caller(request)
