"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp's server (extra `[openai]`)."""

from __future__ import annotations

import os

from askchain.errors import ConfigError, require
from askchain.llm.base import ChatRequest, RawSample
from askchain.llm.remote import RemoteModel


class OpenAIModel(RemoteModel):
    supports_json_schema = True

    # How servers take a JSON schema: OpenAI and vLLM the standard way, llama.cpp's server as a json_object schema.
    SCHEMA_FORMATS = (
        lambda schema: {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}},
        lambda schema: {"type": "json_object", "schema": schema},
    )

    def __init__(self, name: str, *, retries: int, base_url: str | None = None, api_key: str | None = None,
                 cache=None, http_client=None):
        """`http_client`: the SDK's httpx client, for a proxy or a recorded transport."""
        openai = require("openai", "openai")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        super().__init__(f"openai:{name}@{self.base_url or 'api.openai.com'}", retries, cache)
        self.name = name
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("none" if self.base_url else None)
        if not key:
            raise ConfigError("the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, max_retries=retries, http_client=http_client)
        self._errors = openai.OpenAIError
        self._format = 0  # index into SCHEMA_FORMATS: the first this server accepted

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        samples = []
        # One request per sample: not every compatible server honours `n`.
        for i in range(request.n):
            out = self._create(request, seed=request.seed + i)
            usage = out.usage
            samples.append(
                RawSample(
                    text=out.choices[0].message.content or "",
                    prompt_tokens=usage.prompt_tokens if usage else 0,
                    completion_tokens=usage.completion_tokens if usage else 0,
                )
            )
        return samples

    def _create(self, request: ChatRequest, seed: int):
        formats = list(range(self._format, len(self.SCHEMA_FORMATS))) if request.json_schema else [None]
        for n, fmt in enumerate(formats):
            extra = {"response_format": self.SCHEMA_FORMATS[fmt](request.schema)} if fmt is not None else {}
            try:
                out = self._client.chat.completions.create(
                    model=self.name,
                    messages=request.message_dicts,
                    temperature=request.temperature,
                    top_p=request.top_p,
                    max_tokens=request.max_tokens,
                    stop=list(request.stop) or None,
                    seed=seed,
                    **extra,
                )
            except self._errors as exc:
                status = getattr(exc, "status_code", None)
                # this server wants the schema in another form (llama.cpp's server refuses `json_schema` with a 500
                # naming response_format): try the next, and remember the one that works
                if fmt is not None and n + 1 < len(formats) and status in (400, 422, 500) and "response_format" in str(exc):
                    continue
                raise self.failure(exc, status) from exc
            if fmt is not None:
                self._format = fmt
            return out
