"""Who may read the page and who may change things through it.

* The server binds to loopback unless a token is configured; with a token, every request must carry
  it (``Authorization: Bearer``, ``X-Hearth-Token`` or the cookie ``/?token=`` sets).
* On a loopback bind without a token the ``Host`` header must name loopback too: a page elsewhere
  that points its own name at 127.0.0.1 (DNS rebinding) is refused rather than served as same-origin.
* A change is a POST with a JSON body, from the page's own origin (``Origin`` / ``Sec-Fetch-Site``),
  carrying the CSRF token embedded in the page in ``X-CSRF-Token``. A form on another site can send
  none of these.
* Every response carries a strict Content-Security-Policy and refuses to be framed.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024
"""A change is a few words of JSON; anything much larger is refused before it is read."""

TOKEN_COOKIE = "hearth_token"
TOKEN_COOKIE_MAX_AGE_S = 400 * 24 * 3600
"""How long the browser keeps the cookie ``/?token=`` sets: the link is opened once on a kitchen
tablet, not after every restart of the browser (400 days is the longest browsers keep any cookie)."""
TOKEN_HEADER = "x-hearth-token"
CSRF_HEADER = "x-csrf-token"

PAGE_POLICY = (
    "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"
"""The timeline picture styles its own text; loaded as an image it runs nothing, and opened on its
own it may run nothing either."""

_LOOPBACK_NAMES = {"localhost", "localhost.", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """True for a loopback name or address ("127.0.0.1", "::1", "[::1]", "localhost")."""
    name = host.strip().lower().strip("[]")
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refuse_unsafe_bind(host: str, token: str | None) -> None:
    """Raise ValueError for a bind beyond loopback with no token to guard it (a blank one is none;
    the configuration refuses a weak one before it gets here)."""
    if not is_loopback(host) and not (token and token.strip()):
        raise ValueError(
            f"the companion page would listen on {host}, beyond this machine, without a token: "
            "set serve.web_token in the configuration or bind to 127.0.0.1"
        )


def _host_name(host_header: str) -> str:
    """The name in a Host header, without its port ("[::1]:8750" -> "::1")."""
    return urlsplit(f"//{host_header}").hostname or ""


def same_token(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def request_token(request: Request) -> str | None:
    """The access token a request carries, from a header or the cookie."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get(TOKEN_HEADER) or request.cookies.get(TOKEN_COOKIE)


class Guard:
    """ASGI middleware: the access checks on every HTTP request, and the security headers on every
    response."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is not None:
            await _with_headers(refusal, scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                _add_headers(message)
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _refusal(self, request: Request) -> Response | None:
        if self.token is None:
            if not is_loopback(_host_name(request.headers.get("host", ""))):
                return PlainTextResponse("this page answers only on a loopback address (127.0.0.1 or localhost)\n", 403)
            return None
        if request.url.path == "/" and "token" in request.query_params:
            return None  # the handler checks it, sets the cookie and redirects
        if not same_token(request_token(request), self.token):
            return PlainTextResponse("a token is needed: open /?token=<the configured token>\n", 401)
        return None


def check_change(request: Request, csrf_token: str) -> Response | None:
    """None when ``request`` may change something; otherwise the 4xx answer that says why not."""
    if request.method != "POST":
        return PlainTextResponse("changes are made with POST\n", 405, headers={"Allow": "POST"})
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return PlainTextResponse("changes are sent as application/json\n", 415)
    origin = request.headers.get("origin")
    if origin is not None:
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if origin.lower() != own.lower():
            return PlainTextResponse("changes come only from the page itself (foreign Origin)\n", 403)
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site != "same-origin":
        return PlainTextResponse(f"changes come only from the page itself (Sec-Fetch-Site: {fetch_site})\n", 403)
    if not same_token(request.headers.get(CSRF_HEADER), csrf_token):
        return PlainTextResponse("the page's CSRF token is missing or wrong; reload the page\n", 403)
    length = request.headers.get("content-length")
    if length is None or not length.isdigit() or int(length) > MAX_BODY_BYTES:
        return PlainTextResponse(f"a change is a JSON body of at most {MAX_BODY_BYTES} bytes, with its length given\n", 413)
    return None


def _add_headers(message: Message) -> None:
    headers = list(message.get("headers", []))
    names = {name.lower() for name, _ in headers}
    extra = [
        (b"content-security-policy", PAGE_POLICY.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"no-referrer"),
        (b"cross-origin-resource-policy", b"same-origin"),
        (b"cache-control", b"no-store"),
    ]
    headers += [(name, value) for name, value in extra if name not in names]
    message["headers"] = headers


async def _with_headers(response: Response, scope: Scope, receive: Receive, send: Send) -> None:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            _add_headers(message)
        await send(message)

    await response(scope, receive, send_with_headers)
