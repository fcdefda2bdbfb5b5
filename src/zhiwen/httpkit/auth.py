"""Who calls and what they may do: a bearer key → :class:`Access`.

Once a key or the admin token is configured (``ZHIWEN_API__KEYS``, ``ZHIWEN_API__ADMIN_TOKEN``),
a request without a valid bearer is refused (401 / 3006); a key may be limited to some KBs and to
reading (403 / 3012 ``无权访问知识库「x」``). The FastAPI dependencies that apply it to a request are
:mod:`.deps`'s (``get_access``, ``require_kb_read`` …); this module holds the rule alone.

Example::

    >>> access = resolve_access(settings, "sk-r")        # a key limited to KB demo, read-only
    >>> access.can_read("demo"), access.write
    (True, False)
    >>> access.require_kb("manual")
    Traceback (most recent call last):
    zhiwen.errors.Forbidden: 无权访问知识库「manual」: key may not access knowledge base 'manual'
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from zhiwen.config import KeySpec, Settings
from zhiwen.errors import Forbidden, Unauthorized

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Access:
    """What the caller of this request may do.

    ``kbs`` None: every KB; ``write``: upload, delete documents, delete a KB; ``admin``: change
    settings. A server without any credential configured is open: every caller may read and
    write every KB (the admin API stays disabled).
    """

    caller: str = ""  # the key's fingerprint (:func:`get_caller`), "" without one
    kbs: frozenset[str] | None = None
    write: bool = True
    admin: bool = False

    def can_read(self, kb: str) -> bool:
        return self.kbs is None or kb in self.kbs

    def readable(self, names: Iterable[str]) -> list[str]:
        """The names among ``names`` this caller may read, in their order."""
        return [name for name in names if self.can_read(name)]

    def require_kb(self, kb: str, *, write: bool = False) -> None:
        """403 / 3012 unless the caller may read ``kb`` (and, with ``write``, change it)."""
        if not self.can_read(kb):
            raise Forbidden(f"key may not access knowledge base {kb!r}", message=f"无权访问知识库「{kb}」")
        if write and not self.write:
            raise Forbidden(
                f"read-only key may not change {kb!r}", message=f"此 API Key 只读，无权修改知识库「{kb}」"
            )

    def require_kbs(self, kbs: Iterable[str], *, what: str = "") -> None:
        """403 unless the caller may read every KB of ``kbs`` (an app answers over all of them)."""
        denied = [kb for kb in kbs if not self.can_read(kb)]
        if denied:
            subject = f"{what}使用的" if what else ""
            raise Forbidden(
                f"key may not access knowledge bases {denied}",
                message=f"无权访问{subject}知识库「{'、'.join(denied)}」",
            )

    def guard(self, open_kb: Callable[[str], T]) -> Callable[[str], T]:
        """``open_kb`` that refuses (403) a KB this caller may not read: an app answering for a
        scoped key never reads another KB's chunks, whatever it opens on its own."""
        if self.kbs is None:
            return open_kb

        def guarded(name: str) -> T:
            self.require_kb(name)
            return open_kb(name)

        return guarded


#: a server without credentials: everyone may read and write every KB
OPEN_ACCESS = Access()
def _same(given: bytes, secret: str) -> bool:
    return hmac.compare_digest(given, secret.encode("utf-8"))


def _match_key(token: str, specs: list[KeySpec]) -> KeySpec | None:
    """The key spec whose key is ``token``; every key is compared (constant time, no early
    exit), so the time taken does not tell which key came close."""
    given = token.encode("utf-8")
    found: KeySpec | None = None
    for spec in specs:
        if _same(given, spec.key) and found is None:
            found = spec
    return found


def resolve_access(settings: Settings, token: str | None, caller: str = "") -> Access:
    """The :class:`Access` of a bearer ``token`` (None: none sent) under ``settings``: 401 / 3006
    when credentials are configured and the token is missing or matches none of them."""
    api = settings.api
    if not api.credentials_configured:
        return Access(caller=caller)
    if not token:
        raise Unauthorized(
            "missing bearer token",
            message="未授权：未提供 API Key，请在请求头中携带 Authorization: Bearer <key>",
        )
    is_admin = bool(api.admin_token) and _same(token.encode("utf-8"), api.admin_token or "")
    spec = _match_key(token, api.key_specs())
    if is_admin:
        return Access(caller=caller, admin=True)
    if spec is None:
        raise Unauthorized("wrong bearer token", message="未授权：API Key 错误")
    kbs = frozenset(spec.kbs) if spec.kbs is not None else None
    return Access(caller=caller, kbs=kbs, write=spec.write)
