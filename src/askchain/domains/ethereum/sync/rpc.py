"""JSON-RPC over HTTP through web3.py's provider: calls sent in batches, several batches in flight, held under a rate
limit, and retried with backoff on what a provider answers when busy (HTTP 429 and 5xx, rate-limit errors, timeouts).
web3 encodes, posts and orders the batch; what it leaves to the caller (retries of a batch, the rate limit, errors
per call) is here."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence
from urllib.parse import urlsplit

from askchain.config import EthSyncSettings
from askchain.errors import DatasetError, require

#: JSON-RPC error codes a node gives for a method it does not have (geth, erigon, reth, anvil, providers).
UNSUPPORTED_CODES = (-32601, -32004, -32600)
#: JSON-RPC error codes and words providers use for "slow down" (Infura -32005, Alchemy 429).
RATE_LIMIT_CODES = (429, -32005, -32029)
RATE_LIMIT_WORDS = ("rate limit", "too many requests", "exceeded", "capacity")

SLOWER = "lower --rate-limit or eth_sync.concurrency, or try later"
UNREACHABLE = "check --rpc and that the node runs"

Call = tuple[str, list]


@dataclass(frozen=True)
class RpcError:
    """A call's own error, returned in its place by `batch(..., tolerate=True)` (a revert, a missing method)."""

    code: int
    message: str

    @property
    def unsupported(self) -> bool:
        text = self.message.lower()
        return self.code in UNSUPPORTED_CODES or "not found" in text or "not supported" in text or "unsupported" in text

    @property
    def rate_limited(self) -> bool:
        return self.code in RATE_LIMIT_CODES or any(word in self.message.lower() for word in RATE_LIMIT_WORDS)


class _Retry(Exception):
    """A transient failure of one request: wait (at least `after` seconds) and send it again."""

    def __init__(self, reason: str, advice: str, after: float = 0.0):
        super().__init__(reason)
        self.advice = advice
        self.after = after


def endpoint_label(url: str) -> str:
    """The endpoint as messages name it: scheme, host and port, never the path or user part that carries API keys."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}"


class RateLimiter:
    """At most `per_second` calls a second across threads (0: unlimited), spaced evenly so a provider's per-second
    window never sees a burst."""

    def __init__(self, per_second: int):
        self.interval = 1.0 / per_second if per_second else 0.0
        self.next_at = time.monotonic()
        self.lock = threading.Lock()

    def take(self, calls: int) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            start = max(self.next_at, now)
            self.next_at = start + calls * self.interval
        if start > now:
            time.sleep(start - now)


class RpcClient:
    """One endpoint: `batch` answers a list of calls in order; counts calls and HTTP requests for --stats."""

    def __init__(self, url: str, settings: EthSyncSettings, rate_limit: int | None = None):
        web3 = require("web3", "chain")
        requests = require("requests", "chain")
        if urlsplit(url).scheme not in ("http", "https"):
            raise DatasetError(f"--rpc must be an http:// or https:// URL, not '{url}'")
        self.label = endpoint_label(url)
        self.settings = settings
        self.provider = web3.HTTPProvider(url, request_kwargs={"timeout": settings.timeout_s},
                                          exception_retry_configuration=None)
        self.limiter = RateLimiter(settings.max_calls_per_second if rate_limit is None else rate_limit)
        self.pool = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="askchain-rpc")
        self._requests_errors = (requests.ConnectionError, requests.Timeout)
        self._http_error = requests.HTTPError
        self.calls = self.requests = self.retried = 0
        self._count = threading.Lock()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    def call(self, method: str, params: list, *, first: bool = False) -> Any:
        """One call's result; `first`: the run's first call, which an unreachable endpoint fails at once."""
        return self.batch([(method, params)], first=first)[0]

    def batch(self, calls: Sequence[Call], *, tolerate: bool = False, first: bool = False) -> list[Any]:
        """The results of `calls` in order, sent `calls_per_request` to an HTTP request, `concurrency` at once. A
        call's own error raises DatasetError, or with `tolerate` stands in its place as an RpcError."""
        size = self.settings.calls_per_request
        chunks = [list(calls[i:i + size]) for i in range(0, len(calls), size)]
        if len(chunks) == 1:
            answered = [self._send(chunks[0], first)]
        else:
            answered = list(self.pool.map(lambda chunk: self._send(chunk, first), chunks))
        results = [result for chunk in answered for result in chunk]
        if not tolerate:
            failed = next(((call, r) for call, r in zip(calls, results) if isinstance(r, RpcError)), None)
            if failed:
                (method, params), error = failed
                raise DatasetError(f"{self.label} refused {method}({_short(params)}): {error.message} (code {error.code})")
        return results

    def _send(self, calls: list[Call], first: bool) -> list[Any]:
        """One batched request, retried with doubling waits while the endpoint is busy or unreachable (unless it
        has never answered: then the URL is wrong or the node is down, and waiting does not help)."""
        retries = self.settings.retries
        for attempt in range(retries + 1):
            self.limiter.take(len(calls))
            try:
                return self._post(calls)
            except _Retry as busy:
                if first and busy.advice == UNREACHABLE:
                    raise DatasetError(f"{self.label} {busy}: {busy.advice}") from None
                if attempt == retries:
                    raise DatasetError(f"{self.label} {busy} after {retries} retries: {busy.advice}") from None
                with self._count:
                    self.retried += 1
                time.sleep(max(busy.after, self.settings.backoff_s * 2 ** attempt))
        raise AssertionError("unreachable")

    def _post(self, calls: list[Call]) -> list[Any]:
        with self._count:
            self.calls += len(calls)
            self.requests += 1
        try:
            answer = self.provider.make_batch_request(calls)
        except self._http_error as exc:
            raise self._http_failure(exc) from None
        except self._requests_errors as exc:
            raise _Retry(f"could not be reached ({type(exc).__name__})", UNREACHABLE) from None
        except ValueError as exc:  # a body that is not JSON: a proxy's or a provider's error page
            raise DatasetError(f"{self.label} did not answer JSON-RPC: {str(exc).splitlines()[0][:120]}") from None
        if isinstance(answer, dict):  # the whole batch refused: one error object
            error = _error(answer)
            if error.rate_limited:
                raise _Retry(f"kept answering '{error.message}'", SLOWER)
            raise DatasetError(f"{self.label} refused a batch of {len(calls)} calls: {error.message} (code {error.code}); "
                               "lower eth_sync.calls_per_request")
        results = [_error(r) if "error" in r else r.get("result") for r in answer]
        if any(isinstance(r, RpcError) and r.rate_limited for r in results):
            raise _Retry("kept answering calls with a rate-limit error", SLOWER)
        if len(results) != len(calls):
            raise DatasetError(f"{self.label} answered {len(results)} of a batch of {len(calls)} calls; "
                               "lower eth_sync.calls_per_request")
        return results

    def _http_failure(self, exc) -> Exception:
        status = exc.response.status_code if exc.response is not None else 0
        if status == 429 or status >= 500:
            after = exc.response.headers.get("Retry-After", "") if exc.response is not None else ""
            return _Retry(f"kept answering HTTP {status}", SLOWER, float(after) if after.isdigit() else 0.0)
        return DatasetError(f"{self.label} answered HTTP {status}: check the URL and its API key")


def _error(response: dict) -> RpcError:
    error = response.get("error") or {}
    if not isinstance(error, dict):
        return RpcError(0, str(error))
    return RpcError(int(error.get("code") or 0), str(error.get("message") or "unknown error"))


def _short(params: list) -> str:
    text = ", ".join(str(p) for p in params)
    return text if len(text) <= 60 else text[:57] + "..."
