"""A scripted model for tests and demos: replies come from a function of the request, no weights needed."""

from __future__ import annotations

from typing import Callable

from askchain.llm.base import ChatModel, ChatRequest, RawSample

Script = Callable[[ChatRequest, int], str]


class ScriptedModel(ChatModel):
    """Answers each request with `script(request, sample_index)`; records every request it saw."""

    def __init__(self, script: Script | list[str], name: str = "scripted", cache=None):
        super().__init__(cache)
        self.model_id = f"fake:{name}"
        if isinstance(script, list):
            replies = iter(script)
            self._script: Script = lambda request, i: next(replies)
        else:
            self._script = script
        self.requests: list[ChatRequest] = []

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        self.requests.append(request)
        prompt_tokens = sum(len(c.split()) for _, c in request.messages)
        samples = []
        for i in range(request.n):
            text = self._script(request, i)
            samples.append(RawSample(text, prompt_tokens, len(text.split())))
        return samples
