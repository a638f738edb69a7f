"""The chat-completion interface every provider implements, with usage metering and response caching."""

from __future__ import annotations

import contextvars
import json
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, TypeVar

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from askchain.llm.cache import ResponseCache

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": "..."}
T = TypeVar("T", bound=BaseModel)


class Prompt(list):
    """Messages rendered from a prompt template, naming the template and the values filled in, so that test doubles
    (ScriptedModel) answer by template rather than by wording. Models see only the messages."""

    def __init__(self, messages: Iterable[Message], template: str, values: Mapping[str, Any]):
        super().__init__(messages)
        self.template = template
        self.values = dict(values)

    def with_messages(self, messages: Iterable[Message]) -> "Prompt":
        """Other messages (e.g. this prompt appended to a shared prefix) still naming this template."""
        return Prompt(messages, self.template, self.values)


@dataclass
class Usage:
    """Tokens and seconds spent by model calls; `cached_calls` were answered from the response cache, and
    `restored_tokens` of the prompt tokens were not evaluated: their KV cells were in the context already (from the
    previous call or a saved state)."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    restored_tokens: int = 0

    def add(self, other: "Usage") -> None:
        self.calls += other.calls
        self.cached_calls += other.cached_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.seconds += other.seconds
        self.restored_tokens += other.restored_tokens

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "llm_seconds": round(self.seconds, 3),
            "restored_tokens": self.restored_tokens,
        }


@dataclass
class Completion:
    """The `n` sampled texts of one request, their parsed objects when a response model was given."""

    texts: list[str]
    usage: Usage
    parsed: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.texts[0]


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[tuple[str, str], ...]
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 512
    stop: tuple[str, ...] = ()
    n: int = 1
    seed: int = 42
    json_schema: str | None = None  # JSON schema text for constrained decoding
    # The prompt template the messages came from and its values (see Prompt). Not sent, and not part of the request's
    # identity (compare=False): the cache key depends only on what the model sees, so it stays the same as before.
    template: str | None = field(default=None, compare=False)
    values: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def cache_key(self, model_id: str) -> str:
        import hashlib

        seen = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        payload = json.dumps([model_id, seen], sort_keys=True, default=list)
        return hashlib.sha256(payload.encode()).hexdigest()

    @property
    def message_dicts(self) -> list[Message]:
        return [{"role": role, "content": content} for role, content in self.messages]

    @property
    def schema(self) -> dict | None:
        return json.loads(self.json_schema) if self.json_schema else None


@dataclass
class RawSample:
    text: str
    prompt_tokens: int
    completion_tokens: int
    restored_tokens: int = 0  # of prompt_tokens, not evaluated: their KV cells were already in the context


def _cached(sample: RawSample) -> dict[str, Any]:
    """A sample as the response cache keeps it: restoring is a fact of the call that computed it, not of the reply."""
    return {"text": sample.text, "prompt_tokens": sample.prompt_tokens, "completion_tokens": sample.completion_tokens}


_meters: contextvars.ContextVar[tuple[Usage, ...]] = contextvars.ContextVar("askchain_usage_meters", default=())


@contextmanager
def track_usage() -> Iterator[Usage]:
    """Collect the usage of every model call made inside the block (and in threads copied from it)."""
    usage = Usage()
    token = _meters.set(_meters.get() + (usage,))
    try:
        yield usage
    finally:
        _meters.reset(token)


def _record(usage: Usage) -> None:
    for meter in _meters.get():
        meter.add(usage)


class ChatModel(ABC):
    """A chat model: providers implement `_sample`; callers use `complete`."""

    #: A stable identity for caching: provider, model name and weights.
    model_id: str
    #: Whether `_sample` honours `json_schema` by constrained decoding (otherwise it is asked for in the prompt).
    supports_json_schema: bool = False

    def __init__(self, cache: "ResponseCache | None" = None):
        self.cache = cache

    @abstractmethod
    def _sample(self, request: ChatRequest) -> list[RawSample]:
        """Return `request.n` samples."""

    def _sample_many(self, requests: list[ChatRequest]) -> list[list[RawSample]]:
        """Samples for several requests; providers that can decode them side by side override this."""
        return [self._sample(request) for request in requests]

    def prefill(self, messages: list[Message]) -> int:
        """Evaluate a prompt without generating and keep its state, so that later prompts beginning the same way
        (in this process or, where states go to disk, the next one) start from it; returns the prompt tokens
        evaluated. Models that keep no state of a prompt (remote APIs, scripts) have nothing to do."""
        return 0

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 512,
        stop: list[str] | None = None,
        n: int = 1,
        seed: int = 42,
        response_model: type[T] | None = None,
        json_schema: dict | None = None,
    ) -> Completion:
        return self.complete_many(
            [messages], temperature=temperature, top_p=top_p, max_tokens=max_tokens, stop=stop, n=n, seed=seed,
            response_model=response_model, json_schema=json_schema,
        )[0]

    def complete_many(
        self,
        prompts: list[list[Message]],
        *,
        temperature: float = 0.0,
        top_p: float = 1.0,
        max_tokens: int = 512,
        stop: list[str] | None = None,
        n: int = 1,
        seed: int = 42,
        response_model: type[T] | None = None,
        json_schema: dict | None = None,
    ) -> list[Completion]:
        """One completion per prompt, with the same sampling options: independent prompts (e.g. revisions of several
        failed queries) that a provider may decode together. Each is cached and metered as its own call.
        `response_model` parses replies into a pydantic model; `json_schema` only constrains them (a schema made at
        run time, such as a semantic model's names), leaving the parsing to the caller."""
        # A given schema keeps its key order: the grammar asks for properties in it, which is the order a query is
        # written in (a model first, then its measures).
        schema = (json.dumps(response_model.model_json_schema(), sort_keys=True) if response_model
                  else json.dumps(json_schema) if json_schema else None)
        if schema and not self.supports_json_schema:
            prompts = [_ask_for_json(messages, schema) for messages in prompts]
        requests = [
            ChatRequest(
                messages=tuple((m["role"], m["content"]) for m in messages), temperature=temperature, top_p=top_p,
                max_tokens=max_tokens, stop=tuple(stop or ()), n=n, seed=seed, json_schema=schema,
                template=getattr(messages, "template", None), values=getattr(messages, "values", {}),
            )
            for messages in prompts
        ]
        keys = [request.cache_key(self.model_id) for request in requests]
        found = {i: self.cache.get(key) for i, key in enumerate(keys)} if self.cache else {}
        missing = [i for i in range(len(requests)) if found.get(i) is None]
        started = time.perf_counter()
        fresh = dict(zip(missing, self._sample_many([requests[i] for i in missing]))) if missing else {}
        seconds = (time.perf_counter() - started) / max(len(missing), 1)
        completions = []
        for i, key in enumerate(keys):
            if i in fresh:
                samples, usage = fresh[i], Usage(calls=1, seconds=seconds)
                if self.cache:
                    self.cache.put(key, [_cached(s) for s in samples])
            else:
                samples, usage = [RawSample(**s) for s in found[i]], Usage(calls=1, cached_calls=1)
            usage.prompt_tokens = sum(s.prompt_tokens for s in samples)
            usage.completion_tokens = sum(s.completion_tokens for s in samples)
            usage.restored_tokens = sum(s.restored_tokens for s in samples)
            _record(usage)
            texts = [s.text for s in samples]
            parsed = [parse_json_reply(t, response_model) for t in texts] if response_model else []
            completions.append(Completion(texts=texts, usage=usage, parsed=parsed))
        return completions


def _ask_for_json(messages: list[Message], schema: str) -> list[Message]:
    instruction = f"Reply with one JSON object only, matching this JSON schema:\n{schema}"
    asked = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + "\n\n" + instruction}]
    return messages.with_messages(asked) if isinstance(messages, Prompt) else asked


def parse_json_reply(text: str, model: type[T]) -> T | None:
    """Validate a model's JSON reply; tolerate code fences and prose around the object. None if invalid."""
    candidate = text.strip()
    start, end = candidate.find("{"), candidate.rfind("}")
    if 0 <= start < end:
        candidate = candidate[start : end + 1]
    try:
        return model.model_validate_json(candidate)
    except (ValidationError, ValueError):
        return None
