"""Google's Gemini API through google-genai (extra `[gemini]`)."""

from __future__ import annotations

from askchain.errors import ConfigError, require
from askchain.llm.base import ChatRequest, RawSample
from askchain.llm.remote import TRANSIENT_STATUSES, RemoteModel


class GeminiModel(RemoteModel):
    supports_json_schema = True

    def __init__(self, name: str, *, retries: int, cache=None, http_client=None):
        """`http_client`: the SDK's httpx client, for a proxy or a recorded transport."""
        genai = require("google.genai", "gemini")
        self._types = types = require("google.genai.types", "gemini")
        super().__init__(f"gemini:{name}", retries, cache)
        self.name = name
        retry = types.HttpRetryOptions(attempts=retries + 1, http_status_codes=list(TRANSIENT_STATUSES))
        try:
            self._client = genai.Client(http_options=types.HttpOptions(retry_options=retry, httpx_client=http_client))
        except ValueError as exc:  # no GEMINI_API_KEY
            raise ConfigError(f"{self.model_id}: {exc}") from exc
        # Failures with a response, and without one (timeouts, lost connections: httpx2 is the SDK's HTTP client)
        self._errors = (require("google.genai.errors", "gemini").APIError, require("httpx2", "gemini").TransportError)

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        types = self._types
        system = "\n\n".join(c for r, c in request.messages if r == "system") or None
        contents = [
            types.Content(role="model" if r == "assistant" else "user", parts=[types.Part(text=c)])
            for r, c in request.messages
            if r != "system"
        ]
        samples = []
        for i in range(request.n):
            config = types.GenerateContentConfig(
                system_instruction=system,
                temperature=request.temperature,
                top_p=request.top_p,
                max_output_tokens=request.max_tokens,
                stop_sequences=list(request.stop) or None,
                seed=request.seed + i,
                response_mime_type="application/json" if request.json_schema else None,
                response_json_schema=request.schema,
            )
            try:
                out = self._client.models.generate_content(model=self.name, contents=contents, config=config)
            except self._errors as exc:
                raise self.failure(exc, getattr(exc, "code", None)) from exc
            usage = out.usage_metadata or types.GenerateContentResponseUsageMetadata()
            samples.append(RawSample(out.text or "", usage.prompt_token_count or 0, usage.candidates_token_count or 0))
        return samples
