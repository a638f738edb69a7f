"""Who may call askchain's HTTP endpoints: on loopback, pages and programs of this machine; beyond it, only holders
of the API token.

Shared by `askchain serve` and `askchain mcp --transport http`, so both refuse the same exposure, check the token
the same way and, open on loopback, refuse the same foreign Host and Origin headers.
"""

from __future__ import annotations

import ipaddress
import secrets
from typing import Callable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from askchain.errors import ConfigError

TOKEN_ENV = "ASKCHAIN_SERVER__TOKEN"


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without an API token: the databases would be open to the network."""
    if not token and not is_loopback(host):
        raise ConfigError(f"--host {host} is reachable from other machines: give an API token with --token or {TOKEN_ENV}")


class BearerToken:
    """ASGI middleware: HTTP requests need `Authorization: Bearer <token>` unless `is_open(path)`; else 401.

    Pure ASGI (not BaseHTTPMiddleware) so streamed responses (SSE, MCP's streamable HTTP) pass through untouched.
    """

    def __init__(self, app, token: str, is_open: Callable[[str], bool] = lambda path: False):
        if not token:
            raise ConfigError("the API token is empty")
        self.app = app
        self._expected = token.encode()
        self.is_open = is_open

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or self.is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        presented = _bearer(scope)
        if presented is not None and secrets.compare_digest(presented, self._expected):
            await self.app(scope, receive, send)
            return
        reason = (
            "this server needs an API token: send the header 'Authorization: Bearer <token>'"
            if presented is None else "the API token is wrong"
        )
        response = JSONResponse({"detail": reason}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)


def _bearer(scope) -> bytes | None:
    """The credentials of the Authorization header (empty if not a Bearer one), or None without the header."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, credentials = value.partition(b" ")
            return credentials.strip() if scheme.lower() == b"bearer" else b""
    return None


class LoopbackOnly:
    """ASGI middleware for a server open on loopback (no token): it answers only what this machine's own pages and
    programs send. A Host that is not a loopback name (421) is a DNS-rebinding page reaching 127.0.0.1 under its own
    domain; an Origin that is not a loopback page (403) is a site the user visits posting to 127.0.0.1. No Origin
    (curl, scripts, a browser's same-origin GET) passes. The rules are the MCP SDK's for its own transport on
    loopback, any port, with every loopback address counted as this machine (`is_loopback`).
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if not _names_loopback("//" + headers.get("host", "")):
            refusal = (421, "this server on loopback answers only requests addressed to localhost, 127.0.0.1 or [::1]")
        elif origin is not None and not (origin.startswith(("http://", "https://")) and _names_loopback(origin)):
            refusal = (403, "this server on loopback answers only pages served from this machine, not other sites")
        else:
            await self.app(scope, receive, send)
            return
        status, reason = refusal
        await JSONResponse({"detail": reason}, status_code=status)(scope, receive, send)


def _names_loopback(url: str) -> bool:
    """True if the URL's host (port or not) is a loopback name or address; False for anything unparsable."""
    try:
        host = urlsplit(url).hostname
    except ValueError:  # "[::1" and the like
        return False
    return bool(host) and is_loopback(host)
