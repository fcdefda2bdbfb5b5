"""The question log's errors, in the house style (:mod:`zhiwen.errors`): a code, an HTTP status
and a Chinese message.

Example::

    >>> AnswerNotFound.of("0123456789abcdef").http_status
    404
    >>> bad_feedback("原因未知：好").code
    3003
"""

from __future__ import annotations

from zhiwen.errors import Forbidden, InvalidParameter, NotFound


class AnswerNotFound(NotFound):
    """Feedback or a lookup for an answer id the log does not hold (never logged, purged, of a
    KB the caller may not read, or the log is off): 404 / 3004."""

    user_message = "回答不存在或已过期"

    @classmethod
    def of(cls, answer_id: str, *, log_off: bool = False) -> AnswerNotFound:
        if log_off:
            message = "问答记录未开启（ZHIWEN_LOG__QUESTIONS=false），无法评价或查看回答"
        else:
            message = f"回答不存在或已过期：{answer_id}"
        return cls(f"no logged answer {answer_id!r}", message=message, data={"answer_id": answer_id})


def bad_feedback(message: str, detail: str = "") -> InvalidParameter:
    """A rating, reason or comment that cannot be kept: 422 / 3003 with ``message``."""
    return InvalidParameter(detail or message, message=message)


def log_forbidden(kb: str) -> Forbidden:
    """403 / 3012: the caller may not read this KB's questions."""
    return Forbidden(
        f"reading the question log of {kb!r} needs write access or the admin token",
        message=f"无权查看知识库「{kb}」的问答记录：需要该知识库的写权限或管理员令牌",
    )
