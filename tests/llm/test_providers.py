"""The remote providers against recorded API responses (a mock HTTP transport, no network): the request each sends,
how texts and usage are read from the reply, retries with backoff on transient failures, and one-line errors."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Callable

import httpx2  # the three SDKs' HTTP client (the `test` extra installs them)
import pytest
from pydantic import BaseModel

from askchain.errors import ConfigError, ProviderError
from askchain.llm.anthropic import AnthropicModel
from askchain.llm.base import ChatModel
from askchain.llm.gemini import GeminiModel
from askchain.llm.openai_compat import OpenAIModel

SYSTEM, QUESTION = "You write SQLite.", "How many singers are there?"
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]


class Tables(BaseModel):
    tables: list[str]


# Replies as the APIs send them (recorded bodies, trimmed of ids that nothing reads).
OPENAI_REPLY = {
    "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "logprobs": None, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": "SELECT count(*) FROM singer", "refusal": None}}],
    "usage": {"prompt_tokens": 19, "completion_tokens": 7, "total_tokens": 26},
    "system_fingerprint": "fp_06737a9306",
}
ANTHROPIC_REPLY = {
    "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
    "content": [{"type": "text", "text": "SELECT count(*) "}, {"type": "text", "text": "FROM singer"}],
    "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 21, "output_tokens": 8},
}
GEMINI_REPLY = {
    "candidates": [{"content": {"parts": [{"text": "SELECT count(*) FROM singer"}], "role": "model"},
                    "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 17, "candidatesTokenCount": 6, "totalTokenCount": 23},
    "modelVersion": "gemini-2.5-flash", "responseId": "2yHzZ_rkGfSrmecPlPnV6AE",
}

# Error bodies: a rejected request (400) and a rate limit (429) or overload (503), as each API words them.
ERRORS = {
    "openai": {
        400: {"error": {"message": "Invalid value for 'max_tokens': must be a positive integer.",
                        "type": "invalid_request_error", "param": "max_tokens", "code": "invalid_value"}},
        429: {"error": {"message": "Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3, Used 3.",
                        "type": "requests", "param": None, "code": "rate_limit_exceeded"}},
        503: {"error": {"message": "The server is overloaded or not ready yet.", "type": "server_error"}},
    },
    "anthropic": {
        400: {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}},
        429: {"type": "error",
              "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit."}},
        503: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    },
    "gemini": {
        400: {"error": {"code": 400, "status": "INVALID_ARGUMENT",
                        "message": "API key not valid. Please pass a valid API key."}},
        429: {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                        "message": "Resource has been exhausted (e.g. check quota)."}},
        503: {"error": {"code": 503, "status": "UNAVAILABLE",
                        "message": "The model is overloaded. Please try again later."}},
    },
}


class RecordedServer:
    """A mock transport answering with the given replies in turn, (status, body) or an exception to raise; it keeps
    every request it was sent."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests: list = []

    def __call__(self, request):
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, type) and issubclass(reply, Exception):
            raise reply("connection refused", request=request)
        status, body = reply
        return httpx2.Response(status, json=body)

    def client(self):
        return httpx2.Client(transport=httpx2.MockTransport(self))

    @property
    def bodies(self) -> list[dict]:
        return [json.loads(request.content) for request in self.requests]


@dataclass
class Provider:
    make: Callable[[RecordedServer, int], ChatModel]
    reply: dict
    text: str  # the reply's text as read
    usage: tuple[int, int]  # (prompt, completion) tokens the reply reports


def _openai(server, retries):
    return OpenAIModel("gpt-4o-mini", retries=retries, api_key="sk-test", http_client=server.client())


def _anthropic(server, retries):
    return AnthropicModel("claude-sonnet-5-5", retries=retries, http_client=server.client())


def _gemini(server, retries):
    return GeminiModel("gemini-2.5-flash", retries=retries, http_client=server.client())


PROVIDERS = {
    "openai": Provider(_openai, OPENAI_REPLY, "SELECT count(*) FROM singer", (19, 7)),
    "anthropic": Provider(_anthropic, ANTHROPIC_REPLY, "SELECT count(*) FROM singer", (21, 8)),
    "gemini": Provider(_gemini, GEMINI_REPLY, "SELECT count(*) FROM singer", (17, 6)),
}


@pytest.fixture(autouse=True)
def api_keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def naps(monkeypatch) -> list[float]:
    """The backoff sleeps the SDKs take between tries, recorded instead of slept."""
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    return slept


def test_openai_request_and_reply():
    server = RecordedServer((200, OPENAI_REPLY), (200, OPENAI_REPLY))
    model = _openai(server, retries=0)
    completion = model.complete(MESSAGES, temperature=0.7, top_p=0.9, max_tokens=64, stop=["```"], n=2, seed=5)
    assert [str(r.url) for r in server.requests] == ["https://api.openai.com/v1/chat/completions"] * 2
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    # one request per sample (not every compatible server honours `n`), each with its own seed
    assert server.bodies == [
        {"model": "gpt-4o-mini", "messages": MESSAGES, "temperature": 0.7, "top_p": 0.9, "max_tokens": 64,
         "stop": ["```"], "seed": seed}
        for seed in (5, 6)
    ]
    assert completion.texts == ["SELECT count(*) FROM singer"] * 2
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (38, 14)


def test_openai_json_schema_falls_back_to_the_form_the_server_takes():
    """OpenAI and vLLM take `json_schema`; llama.cpp's server refuses it and takes a `json_object` with a schema."""
    refused = {"error": {"message": "Unsupported response_format type: json_schema", "type": "invalid_request_error"}}
    answer = {"role": "assistant", "content": '{"tables": ["singer"]}'}
    reply = {**OPENAI_REPLY, "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]}
    server = RecordedServer((400, refused), (200, reply), (200, reply))
    model = _openai(server, retries=0)
    schema = Tables.model_json_schema()
    assert model.complete(MESSAGES, response_model=Tables).parsed == [Tables(tables=["singer"])]
    assert [body["response_format"] for body in server.bodies] == [
        {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
        {"type": "json_object", "schema": schema},
    ]
    model.complete(MESSAGES, response_model=Tables, seed=1)
    assert server.bodies[-1]["response_format"] == {"type": "json_object", "schema": schema}, "the working form is kept"


def test_anthropic_request_and_reply():
    server = RecordedServer((200, ANTHROPIC_REPLY), (200, ANTHROPIC_REPLY))
    model = _anthropic(server, retries=0)
    completion = model.complete(MESSAGES, max_tokens=64, stop=["```"], n=2)
    assert [str(r.url) for r in server.requests] == ["https://api.anthropic.com/v1/messages"] * 2
    assert server.requests[0].headers["authorization"] == "Bearer sk-ant-test"
    assert server.bodies == [
        {"model": "claude-sonnet-5-5", "system": SYSTEM, "messages": MESSAGES[1:], "max_tokens": 64,
         "stop_sequences": ["```"]}
    ] * 2
    assert completion.texts == ["SELECT count(*) FROM singer"] * 2  # the text blocks joined
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (42, 16)



def test_anthropic_leaves_out_absent_fields():
    """No system prompt and no stop sequences: the fields are left out, not sent as null (which the API refuses)."""
    server = RecordedServer((200, ANTHROPIC_REPLY))
    _anthropic(server, retries=0).complete(MESSAGES[1:], max_tokens=64)
    assert server.bodies == [{"model": "claude-sonnet-5-5", "messages": MESSAGES[1:], "max_tokens": 64}]


def test_anthropic_asks_for_json_in_the_prompt():
    reply = {**ANTHROPIC_REPLY, "content": [{"type": "text", "text": 'Here: {"tables": ["singer"]}'}]}
    server = RecordedServer((200, reply))
    assert _anthropic(server, retries=0).complete(MESSAGES, response_model=Tables).parsed == [Tables(tables=["singer"])]
    assert json.dumps(Tables.model_json_schema(), sort_keys=True) in server.bodies[0]["messages"][-1]["content"]


def test_gemini_request_and_reply():
    server = RecordedServer((200, GEMINI_REPLY), (200, GEMINI_REPLY))
    model = _gemini(server, retries=0)
    completion = model.complete(MESSAGES, temperature=0.7, top_p=0.9, max_tokens=64, stop=["```"], n=2, seed=5)
    url = str(server.requests[0].url)
    assert url.startswith("https://generativelanguage.googleapis.com/")
    assert url.endswith("/models/gemini-2.5-flash:generateContent")
    assert server.requests[0].headers["x-goog-api-key"] == "gemini-test"
    assert server.bodies == [
        {
            "contents": [{"role": "user", "parts": [{"text": QUESTION}]}],
            "systemInstruction": {"role": "user", "parts": [{"text": SYSTEM}]},
            "generationConfig": {"temperature": 0.7, "topP": 0.9, "maxOutputTokens": 64, "stopSequences": ["```"],
                                 "seed": seed},
        }
        for seed in (5, 6)
    ]
    assert completion.texts == ["SELECT count(*) FROM singer"] * 2
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (34, 12)


def test_gemini_json_schema_is_constrained_decoding():
    reply = {**GEMINI_REPLY, "candidates": [{"content": {"parts": [{"text": '{"tables": ["singer"]}'}], "role": "model"}}]}
    server = RecordedServer((200, reply))
    assert _gemini(server, retries=0).complete(MESSAGES, response_model=Tables).parsed == [Tables(tables=["singer"])]
    config = server.bodies[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json" and config["responseJsonSchema"] == Tables.model_json_schema()
    assert server.bodies[0]["contents"][-1]["parts"][0]["text"] == QUESTION, "the schema is not repeated in the prompt"


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("transient", [429, 503, "connection"])
def test_a_transient_failure_is_retried_after_a_backoff(name, transient, naps):
    provider = PROVIDERS[name]
    failure = httpx2.ConnectError if transient == "connection" else (transient, ERRORS[name][transient])
    server = RecordedServer(failure, (200, provider.reply))
    completion = provider.make(server, 3).complete(MESSAGES)
    assert completion.text == provider.text
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == provider.usage
    assert len(server.requests) == 2 and len(naps) == 1 and naps[0] > 0


@pytest.mark.parametrize("name", PROVIDERS)
def test_a_rejected_request_fails_at_once_in_one_line(name, naps):
    server = RecordedServer((400, ERRORS[name][400]))
    model = PROVIDERS[name].make(server, 3)
    with pytest.raises(ConfigError) as info:
        model.complete(MESSAGES)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{model.model_id}: ")
    assert ERRORS[name][400]["error"]["message"] in message
    assert len(server.requests) == 1 and not naps


@pytest.mark.parametrize("name", PROVIDERS)
def test_transient_failures_beyond_the_retries_are_one_line_provider_errors(name, naps):
    server = RecordedServer(*[(503, ERRORS[name][503])] * 3)
    model = PROVIDERS[name].make(server, 2)
    with pytest.raises(ProviderError) as info:
        model.complete(MESSAGES)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{model.model_id}: ") and message.endswith("(after 2 retries)")
    assert len(server.requests) == 3 and len(naps) == 2
    assert naps[1] >= naps[0], "the backoff grows"


@pytest.mark.parametrize("name, variable", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
                                            ("gemini", "GEMINI_API_KEY")])
def test_a_missing_api_key_is_a_config_error(name, variable, monkeypatch):
    from askchain.config import get_settings
    from askchain.llm.registry import get_model

    monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ConfigError) as info:
        get_model(f"{name}:some-model", get_settings())
    assert "\n" not in str(info.value)
