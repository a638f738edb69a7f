"""The request body limit, enforced on the bytes as they arrive, whatever the transfer encoding."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse

#: The largest request body the API reads: a question is at most a few kB, an A2A schema well under this.
MAX_BODY_BYTES = 2_000_000


class BodyLimit:
    """ASGI middleware: a request whose body passes `max_bytes` is answered 413 at once, and the rest is never read.

    `Content-Length` alone cannot be trusted (a chunked body has none), so the body is counted as it arrives and
    handed to the app whole once complete: the app parses bodies whole anyway, and an oversized one never reaches
    it, nor any error reply that might quote it. Pure ASGI, so streamed responses (SSE) pass through untouched.
    """

    def __init__(self, app, max_bytes: int = MAX_BODY_BYTES):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _declared_length(scope) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left mid-body: the app sees that, after what came
                pending = [{"type": "http.request", "body": bytes(body), "more_body": True}, message]
                break
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            if not message.get("more_body", False):
                pending = [{"type": "http.request", "body": bytes(body), "more_body": False}]
                break

        async def replay():
            return pending.pop(0) if pending else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope, receive, send) -> None:
        """413, and the connection closed after it: kept open, the server would read the rest of the body to reach
        the next request."""
        response = JSONResponse({"detail": f"request body over {self.max_bytes} bytes"}, status_code=413,
                                headers={"Connection": "close"})
        await response(scope, receive, send)


def _declared_length(scope) -> int:
    """The Content-Length the client announced (0 without one; the server has already refused a malformed one)."""
    declared = Headers(scope=scope).get("content-length", "")
    return int(declared) if declared.isdigit() else 0
