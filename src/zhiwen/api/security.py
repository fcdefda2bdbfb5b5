"""Cross-site and DNS-rebinding protection for every request, in every mode (keys or none).

* **Host** (DNS rebinding): a page on ``evil.example`` whose name the attacker re-points at
  127.0.0.1 reaches this server with ``Host: evil.example``. A request is served only when its
  ``Host`` names this server: ``localhost``, ``127.0.0.1``, ``[::1]``, the configured bind address
  (``api.host``), the local address the connection actually reached (a server bound to
  ``0.0.0.0`` answers to the LAN address it is called on; an IP literal cannot be rebound), or a
  name in ``api.allowed_hosts`` (``*`` any, ``*.example.com`` every subdomain). Otherwise 421 /
  3014. A request without ``Host`` (HTTP/1.0 tools) passes: browsers always send one.
* **Origin** (cross-site writes): a browser posts a multipart upload or a DELETE from any page
  without a preflight. A state-changing request (POST, PUT, PATCH, DELETE) whose ``Origin`` — or,
  without one, ``Referer`` — is neither this server (the same host and port as its ``Host``) nor
  one of ``api.cors_origins`` is refused with 403 / 3013, as is ``Origin: null`` (sandboxed
  frames, ``file://``) and a browser's ``Sec-Fetch-Site: cross-site`` without either header.
  Requests with no ``Origin`` and no ``Referer`` — curl, SDKs, scripts — pass: only browsers send
  them, and a browser always sends ``Origin`` on a cross-site POST.

Errors are the ``{code, message, data}`` envelope, or OpenAI's shape under ``/v1/``.

Starlette's ``TrustedHostMiddleware`` covers the Host half only, answers a plain-text 400 and
knows nothing of the connection's own address, so this small middleware does both checks.

Example::

    app.add_middleware(SiteGuardMiddleware, settings=settings)
    # curl -H 'Host: evil.example' localhost:8000/api/v1/kbs        → 421 / 3014
    # curl -X DELETE -H 'Origin: https://evil.example' …/kbs/demo    → 403 / 3013
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from zhiwen.api.middleware import send_json
from zhiwen.api.openai.errors import error_body as openai_error_body
from zhiwen.api.openai.errors import is_openai_path
from zhiwen.config import Settings
from zhiwen.errors import CrossSiteRequest, MisdirectedHost, ZhiwenError
from zhiwen.httpkit.envelope import ErrorEnvelope, error_body

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})

#: the responses the guard adds to every route, for the OpenAPI spec
SECURITY_RESPONSES: dict[int | str, dict[str, Any]] = {
    403: {
        "model": ErrorEnvelope,
        "description": "无权访问（3012：知识库或操作超出 API Key 的范围，或需管理员令牌；3013：跨站请求）",
    },
    421: {"model": ErrorEnvelope, "description": "未知的主机名 Host（3014，防 DNS 重绑定）"},
}


def hostname(netloc: str) -> str | None:
    """``"Example.com:8000"`` → ``"example.com"``, ``"[::1]:8000"`` → ``"::1"``; None if unparsable."""
    try:
        parts = urlsplit(f"//{netloc}")
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    return parts.hostname


def _site(name: str, port: int | None) -> str:
    """``host[:port]`` with the default ports (80, 443) left out: a ``Host`` header carries none
    for them, whichever scheme a proxy in front spoke."""
    host = f"[{name}]" if ":" in name else name
    return host if port in (None, 80, 443) else f"{host}:{port}"


def host_site(host: str) -> str | None:
    """A ``Host`` header as a site (``"127.0.0.1:8000"``, ``"example.com"``)."""
    try:
        parts = urlsplit(f"//{host}")
        return _site(parts.hostname, parts.port) if parts.hostname else None
    except ValueError:
        return None


def origin_site(value: str) -> str | None:
    """An ``Origin`` or ``Referer`` (a URL) as a site; None for ``null`` or anything not http(s)."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return _site(parts.hostname, port)


class SiteGuard:
    """The two checks, pure: ``host_allowed`` and ``origin_allowed`` (tested on their own)."""

    def __init__(self, settings: Settings) -> None:
        api = settings.api
        names = [h.strip().lower().strip("[]") for h in api.allowed_hosts if h.strip()]
        self.any_host = "*" in names
        self.suffixes = tuple(n[1:] for n in names if n.startswith("*.") and len(n) > 2)
        bound = api.host.strip().lower().strip("[]")
        self.hosts = LOOPBACK_NAMES | {n for n in names if not n.startswith("*")}
        if bound not in _ANY_ADDRESS:
            self.hosts |= {bound}
        self.origins = {o for o in map(origin_site, api.cors_origins) if o}

    def host_allowed(self, host: str | None, local_address: str | None) -> bool:
        if host is None or self.any_host:
            return True
        name = hostname(host)
        if not name:
            return False
        name = name.lower()
        if name in self.hosts or name == local_address:
            return True
        return any(name.endswith(suffix) for suffix in self.suffixes)

    def origin_allowed(self, headers: dict[str, str]) -> bool:
        """Whether a state-changing request may proceed: it comes from this server's own page
        (the site of its ``Host``), from a configured CORS origin, or from no page at all."""
        source = headers.get("origin") or headers.get("referer")
        if source is None:
            return headers.get("sec-fetch-site", "") != "cross-site"
        site = origin_site(source)
        if site is None:
            return False
        own = host_site(headers.get("host", ""))
        return site == own or site in self.origins


def _headers(scope: Scope) -> dict[str, str]:
    wanted = (b"host", b"origin", b"referer", b"sec-fetch-site")
    found: dict[str, str] = {}
    for key, value in scope.get("headers", ()):
        if key in wanted and key.decode() not in found:
            found[key.decode()] = value.decode("latin-1")
    return found


class SiteGuardMiddleware:
    """Pure ASGI: refuses a foreign ``Host`` (421) and a cross-site write (403) before routing,
    before any body is read."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.guard = SiteGuard(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        await _refuse(scope, send, refusal)

    def _refusal(self, scope: Scope) -> ZhiwenError | None:
        headers = _headers(scope)
        server = scope.get("server") or (None, None)
        local = str(server[0]).lower().strip("[]") if server[0] else None
        host = headers.get("host")
        if not self.guard.host_allowed(host, local):
            return MisdirectedHost(
                f"host {host!r} is not served here",
                message=f"拒绝请求：未知的主机名「{host}」（防 DNS 重绑定），请将它加入 api.allowed_hosts",
            )
        if scope.get("method") not in STATE_CHANGING:
            return None
        if not self.guard.origin_allowed(headers):
            source = headers.get("origin") or headers.get("referer") or "cross-site"
            return CrossSiteRequest(f"cross-site {scope.get('method')} from {source!r}")
        return None


async def _refuse(scope: Scope, send: Send, error: ZhiwenError) -> None:
    if is_openai_path(str(scope.get("path", ""))):
        code = "misdirected_request" if isinstance(error, MisdirectedHost) else "cross_site_request"
        body = openai_error_body(error.message, "invalid_request_error", code)
    else:
        body = error_body(error.code, error.message, {"detail": error.detail})
    await send_json(send, error.http_status, body, [(b"connection", b"close")])
