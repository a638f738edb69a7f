"""Anthropic's Messages API (extra `[anthropic]`)."""

from __future__ import annotations

from askchain.errors import ConfigError, require
from askchain.llm.base import ChatRequest, RawSample
from askchain.llm.remote import RemoteModel


class AnthropicModel(RemoteModel):
    def __init__(self, name: str, *, retries: int, cache=None, http_client=None):
        """`http_client`: the SDK's httpx client, for a proxy or a recorded transport."""
        anthropic = require("anthropic", "anthropic")
        super().__init__(f"anthropic:{name}", retries, cache)
        self.name = name
        self._client = anthropic.Anthropic(max_retries=retries, http_client=http_client)
        if not (self._client.api_key or self._client.auth_token):  # the SDK would fail only at the first request
            raise ConfigError("the anthropic provider needs ANTHROPIC_API_KEY")
        self._errors = anthropic.AnthropicError

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        system = "\n\n".join(c for r, c in request.messages if r == "system")
        messages = [m for m in request.message_dicts if m["role"] != "system"]
        # Absent fields are left out, not sent as null, which the API rejects. No temperature: the Messages API of
        # the SDK versions in pyproject takes none (the model samples), so n requests give n samples.
        optional = {"system": system} if system else {}
        if request.stop:
            optional["stop_sequences"] = list(request.stop)
        samples = []
        for _ in range(request.n):
            try:
                out = self._client.messages.create(
                    model=self.name, messages=messages, max_tokens=request.max_tokens, **optional,
                )
            except self._errors as exc:
                raise self.failure(exc, getattr(exc, "status_code", None)) from exc
            text = "".join(block.text for block in out.content if block.type == "text")
            samples.append(RawSample(text, out.usage.input_tokens, out.usage.output_tokens))
        return samples
