"""A scripted model for tests and demos: replies come from a function of the request, no weights needed."""

from __future__ import annotations

from typing import Callable, Mapping

from askchain.llm.base import ChatModel, ChatRequest, RawSample

Script = Callable[[ChatRequest, int], str]


class ScriptedModel(ChatModel):
    """Answers each request with `script(request, sample_index)`; records every request it saw.

    The script may also be a list of replies, given in turn, or a mapping from prompt template name (`direct`,
    `revise`, `judge`, `summarize`...) to a reply or a script: that answers by what a request is for, not by the
    prompt's wording, which may change. A script reads the template's values from `request.values`."""

    def __init__(self, script: Script | list[str] | Mapping[str, str | Script], name: str = "scripted", cache=None):
        super().__init__(cache)
        self.model_id = f"fake:{name}"
        if isinstance(script, list):
            replies = iter(script)
            self._script: Script = lambda request, i: next(replies)
        elif isinstance(script, Mapping):
            self._script = _by_template(dict(script))
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


def _by_template(replies: dict[str, str | Script]) -> Script:
    def script(request: ChatRequest, i: int) -> str:
        if request.template not in replies:
            scripted = ", ".join(replies)
            raise KeyError(f"no scripted reply for prompt template {request.template!r} (scripted: {scripted})")
        reply = replies[request.template]
        return reply(request, i) if callable(reply) else reply

    return script
