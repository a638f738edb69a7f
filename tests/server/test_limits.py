"""The server holds its limits: a body past 2 MB is refused as it arrives, chunked or not, and unread beyond that; an
error reply never hands the request back."""

from __future__ import annotations

import json
import select
import socket
from urllib.parse import urlsplit

import pytest

from askchain.server.app import create_app
from askchain.server.limits import MAX_BODY_BYTES

CHUNK = b" " * 65536
FIFTY_MB = 50_000_000


class ReceivedBytes:
    """ASGI wrapper counting the body bytes the server hands the app, and the largest single message."""

    def __init__(self, app):
        self.app = app
        self.received = 0
        self.largest = 0

    async def __call__(self, scope, receive, send):
        async def counted():
            message = await receive()
            size = len(message.get("body", b""))
            self.received += size
            self.largest = max(self.largest, size)
            return message

        await self.app(scope, counted, send)


def post_raw(base: str, headers: list[str], body_bytes: int) -> tuple[bytes, int]:
    """POST /query over a raw socket, sending up to `body_bytes` of a JSON body in 64 kB chunks (chunked transfer
    encoding when `headers` say so) until the server replies; returns (the reply, body bytes sent).

    A server that refuses a body closes the connection with the rest unread, so the client's next send may fail with
    a reset before its `select` saw the reply: the reply is then still in the socket's receive queue, and is read."""
    url = urlsplit(base)
    sock = socket.create_connection((url.hostname, url.port))
    head = "\r\n".join(["POST /query HTTP/1.1", "Host: localhost", "Content-Type: application/json", *headers])
    sock.sendall(head.encode() + b"\r\n\r\n")
    frame = b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK) if "Transfer-Encoding: chunked" in headers else CHUNK
    sock.setblocking(False)
    reply, sent, pending = b"", 0, b""
    try:
        while sent < body_bytes or pending:
            readable, writable, _ = select.select([sock], [sock], [], 30)
            if readable:  # the first byte of a reply ends the sending
                break
            if not writable:
                raise AssertionError(f"no reply after {sent} bytes sent")
            if not pending:
                pending, sent = frame, sent + len(CHUNK)
            pending = pending[sock.send(pending):]
    except (BrokenPipeError, ConnectionResetError):  # the server closed the connection: its reply is read below
        pass
    try:
        sock.settimeout(30)
        while data := sock.recv(65536):
            reply += data
    except ConnectionResetError:  # after the reply, the reset of the unread body ends it
        pass
    finally:
        sock.close()
    return reply, sent


@pytest.fixture
def served(settings, fake_model, live_server):
    """The app on a real uvicorn on loopback, behind a probe counting what the app was handed."""
    probe = ReceivedBytes(create_app(settings, fake_model))
    return live_server(probe), probe


def test_a_chunked_50_mb_body_is_refused_without_being_read_whole(served):
    base, probe = served
    reply, sent = post_raw(base, ["Transfer-Encoding: chunked"], FIFTY_MB)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert f"request body over {MAX_BODY_BYTES} bytes".encode() in reply
    assert probe.received - probe.largest <= MAX_BODY_BYTES  # reading stopped at the message that passed the limit
    assert probe.received < 2 * MAX_BODY_BYTES and sent < FIFTY_MB


def test_a_declared_oversized_body_is_refused_before_any_is_read(served):
    base, probe = served
    reply, _ = post_raw(base, [f"Content-Length: {FIFTY_MB}"], 0)
    assert reply.startswith(b"HTTP/1.1 413") and probe.received == 0


def test_a_body_under_the_limit_still_reaches_the_app(served):
    """Up to the limit nothing changes: a padded question, chunked, is answered."""
    base, _ = served
    url = urlsplit(base)
    body = json.dumps({"question": "How many singers are there?" + " " * 1_500_000}).encode()
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.sendall(b"POST /query HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        for start in range(0, len(body), len(CHUNK)):
            part = body[start:start + len(CHUNK)]
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        sock.sendall(b"0\r\n\r\n")
        reply = b""
        while data := sock.recv(65536):
            reply += data
    assert reply.startswith(b"HTTP/1.1 200") and b"event: done" in reply


def test_an_oversized_chunked_body_through_the_test_client_is_413(settings, fake_model, local_client):
    def body():
        yield b'{"question": "'
        for _ in range(40):
            yield CHUNK

    with local_client(create_app(settings, fake_model)) as client:
        response = client.post("/query", content=body(), headers={"content-type": "application/json"})
    assert response.status_code == 413 and response.json() == {"detail": f"request body over {MAX_BODY_BYTES} bytes"}


SECRET = "do-not-repeat-me"


@pytest.mark.parametrize("path, body", [
    ("/query", {"question": {"nested": SECRET}}),
    ("/query", {"question": "q", "surprise": SECRET}),
    ("/query", {"question": SECRET * 200}),
    ("/query", [SECRET]),
    ("/query", {"question": "q", "thread_id": f"../{SECRET}"}),
    ("/query", {"question": "q", f"{SECRET}-" * 50: 1}),
    ("/a2a/generate", {"question": "q", "schema": {"tables": {"t": {"columns": [SECRET * 20]}}}}),
    ("/a2a/generate", {"question": SECRET, "schema": {"dialect": "no-such-dialect", "tables": {}}}),
])
def test_validation_errors_do_not_repeat_the_request(settings, fake_model, local_client, path, body):
    with local_client(create_app(settings, fake_model)) as client:
        response = client.post(path, json=body)
    assert response.status_code == 422
    assert all("input" not in error for error in response.json()["detail"])
    assert len(response.text) < 400  # the reasons, and at most an unknown field's name cut short


def test_malformed_json_is_not_repeated(settings, fake_model, local_client):
    with local_client(create_app(settings, fake_model)) as client:
        response = client.post("/query", content=b'{"question": "' + SECRET.encode() + b'"',
                               headers={"content-type": "application/json"})
    assert response.status_code == 422 and SECRET not in response.text


@pytest.mark.parametrize("path, body", [
    ("/query", {"question": "How many singers\udcff are there?"}),
    ("/query", {"question": "q", "model": "\ud800"}),
    ("/query", {"question": "q", "method": "\ud800"}),
    ("/query", {"question": "q", "\ud800": 1}),
    ("/a2a/generate", {"question": "q", "schema": {"tables": {"t\ud800": {"columns": ["a"]}}}}),
])
def test_text_that_is_not_utf8_is_a_422(settings, fake_model, local_client, path, body):
    """JSON may spell a lone surrogate as an escape; it is no text a database, a model or a reply can carry."""
    with local_client(create_app(settings, fake_model)) as client:
        response = client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "not valid UTF-8" in response.json()["detail"][0]["msg"]
