"""Structured logging with a request id on every line.

The API's request middleware puts the request id (``X-Request-ID``) into a context variable;
:class:`RequestIdFilter` copies it onto every log record, so one request's lines can be grepped
together, also from the thread pool (context variables follow ``run_in_threadpool``).

Example::

    >>> from zhiwen.config import get_settings
    >>> from zhiwen.logging import setup_logging, request_id_var
    >>> setup_logging(get_settings())          # JSON lines when settings.log_json
    >>> token = request_id_var.set("req-123")
    >>> logging.getLogger("zhiwen.api").info("searching", extra={"kb": "demo"})
    {"ts": "...", "level": "INFO", "logger": "zhiwen.api", "msg": "searching",
     "request_id": "req-123", "kb": "demo"}
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import Any

from zhiwen.config import Settings

request_id_var: ContextVar[str] = ContextVar("zhiwen_request_id", default="-")

# attributes every LogRecord has; anything else came from ``extra=`` and is worth emitting
_STANDARD_ATTRS = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__.keys()
    | {"message", "asctime", "request_id", "color_message"}
)
_HANDLER_NAME = "zhiwen-structured"


class RequestIdFilter(logging.Filter):
    """Adds ``record.request_id`` from the current context (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, request_id, extras, exc."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(record.created))
            + f".{int(record.msecs):03d}",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": getattr(record, "request_id", request_id_var.get()),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """Human-readable line with the request id and any ``extra=`` fields."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = {
            k: v for k, v in record.__dict__.items() if k not in _STANDARD_ATTRS and not k.startswith("_")
        }
        if extras:
            line += " " + " ".join(f"{k}={v}" for k, v in extras.items())
        return line


def setup_logging(settings: Settings, *, stream: Any = None) -> logging.Handler:
    """Install one stderr handler on the ``zhiwen`` and ``uvicorn`` loggers (idempotent).

    Library modules only ever call ``logging.getLogger(__name__)``; this is for the server/CLI.
    """
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if settings.log_json else TextFormatter())
    level = logging.getLevelName(settings.log_level.upper())
    if not isinstance(level, int):
        level = logging.INFO
    for name in ("zhiwen", "uvicorn"):  # uvicorn.error/access propagate to uvicorn
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if h.get_name() == _HANDLER_NAME]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
    return handler
