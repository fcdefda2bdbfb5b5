"""Who may read a KB's question log: a caller with write access to that KB, or the admin token.

The routes' caller is :class:`zhiwen.httpkit.auth.Access` (a key scoped to some KBs, read-only or
not, or the admin); the log declares what it reads of it (:class:`LogCaller`) instead of
importing the app kit, which sits above it. A server without credentials lets everyone read
(its :data:`~zhiwen.httpkit.auth.OPEN_ACCESS` may write every KB).

A 👍/👎 needs only read access to the answer's KB (whoever may ask may rate):
:func:`may_rate`.

Example::

    >>> require_log_reader(access, "manual")     # in a route, before any read of the log
    >>> may_rate(access, "manual")
    True
"""

from __future__ import annotations

from typing import Protocol

from zhiwen.questionlog.errors import log_forbidden


class LogCaller(Protocol):
    """What the log reads of a caller's rights (:class:`zhiwen.httpkit.auth.Access` fulfils it)."""

    @property
    def admin(self) -> bool: ...

    @property
    def write(self) -> bool: ...

    def can_read(self, kb: str) -> bool: ...


def may_read_log(caller: LogCaller, kb: str) -> bool:
    """Whether ``caller`` may read ``kb``'s questions, feedback and numbers."""
    return caller.admin or (caller.write and caller.can_read(kb))


def require_log_reader(caller: LogCaller, kb: str) -> None:
    """403 / 3012 (「无权查看知识库「x」的问答记录…」) unless :func:`may_read_log`."""
    if not may_read_log(caller, kb):
        raise log_forbidden(kb)


def may_rate(caller: LogCaller, kb: str) -> bool:
    """Whether ``caller`` may rate an answer of ``kb`` (it could have asked there)."""
    return caller.admin or caller.can_read(kb)
