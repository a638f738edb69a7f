"""Google's Gemini API through google-genai (extra `[gemini]`)."""

from __future__ import annotations

from askchain.errors import ConfigError, require
from askchain.llm.base import ChatModel, ChatRequest, RawSample


class GeminiModel(ChatModel):
    supports_json_schema = True

    def __init__(self, name: str, *, cache=None):
        super().__init__(cache)
        genai = require("google.genai", "gemini")
        self._types = require("google.genai.types", "gemini")
        self.name = name
        self.model_id = f"gemini:{name}"
        try:
            self._client = genai.Client()
        except Exception as exc:  # missing GEMINI_API_KEY and similar
            raise ConfigError(f"{self.model_id}: {exc}") from exc

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
            except Exception as exc:
                raise ConfigError(f"{self.model_id}: {str(exc).splitlines()[0]}") from exc
            meta = out.usage_metadata
            samples.append(RawSample(out.text or "", meta.prompt_token_count or 0, meta.candidates_token_count or 0))
        return samples
