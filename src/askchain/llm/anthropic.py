"""Anthropic's Messages API (extra `[anthropic]`)."""

from __future__ import annotations

from askchain.errors import ConfigError, require
from askchain.llm.base import ChatModel, ChatRequest, RawSample


class AnthropicModel(ChatModel):
    def __init__(self, name: str, *, cache=None):
        super().__init__(cache)
        anthropic = require("anthropic", "anthropic")
        self.name = name
        self.model_id = f"anthropic:{name}"
        self._client = anthropic.Anthropic()
        self._errors = (anthropic.AnthropicError,)

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        system = "\n\n".join(c for r, c in request.messages if r == "system")
        messages = [m for m in request.message_dicts if m["role"] != "system"]
        samples = []
        for _ in range(request.n):
            try:
                out = self._client.messages.create(
                    model=self.name,
                    system=system or None,
                    messages=messages,
                    temperature=request.temperature,
                    max_tokens=request.max_tokens,
                    stop_sequences=list(request.stop) or None,
                )
            except self._errors as exc:
                raise ConfigError(f"{self.model_id}: {str(exc).splitlines()[0]}") from exc
            text = "".join(block.text for block in out.content if getattr(block, "type", "") == "text")
            samples.append(RawSample(text, out.usage.input_tokens, out.usage.output_tokens))
        return samples
