"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp's server."""

from __future__ import annotations

import os

from askchain.errors import ConfigError, require
from askchain.llm.base import ChatModel, ChatRequest, RawSample


class OpenAIModel(ChatModel):
    supports_json_schema = True

    def __init__(self, name: str, *, base_url: str | None = None, api_key: str | None = None, cache=None):
        super().__init__(cache)
        openai = require("openai", "openai")
        self.name = name
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.model_id = f"openai:{name}@{self.base_url or 'api.openai.com'}"
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("none" if self.base_url else None)
        if not key:
            raise ConfigError("the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=2)
        self._errors = (openai.OpenAIError,)

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        extra = {}
        if request.json_schema:
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.schema},
            }
        samples = []
        # One request per sample: not every compatible server honours `n`.
        for i in range(request.n):
            try:
                out = self._client.chat.completions.create(
                    model=self.name,
                    messages=request.message_dicts,
                    temperature=request.temperature,
                    top_p=request.top_p,
                    max_tokens=request.max_tokens,
                    stop=list(request.stop) or None,
                    seed=request.seed + i,
                    **extra,
                )
            except self._errors as exc:
                raise ConfigError(f"{self.model_id}: {str(exc).splitlines()[0]}") from exc
            usage = out.usage
            samples.append(
                RawSample(
                    text=out.choices[0].message.content or "",
                    prompt_tokens=usage.prompt_tokens if usage else 0,
                    completion_tokens=usage.completion_tokens if usage else 0,
                )
            )
        return samples
