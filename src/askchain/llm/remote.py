"""What the remote providers (OpenAI-compatible, Anthropic, Gemini) share: retries and one-line errors.

Retries are each SDK's own (exponential backoff with jitter; OpenAI's and Anthropic's also honour Retry-After), set
from `llm.max_retries` and on the same failures for every provider; what outlasts them is reported in one line."""

from __future__ import annotations

from askchain.errors import AskchainError, ConfigError, ProviderError, first_line
from askchain.llm.base import ChatModel

#: HTTP statuses worth another try: request timeout, conflict, rate limit, server errors. (Timeouts and lost
#: connections, which have no status, are retried too.)
TRANSIENT_STATUSES = (408, 409, 429, *range(500, 600))


class RemoteModel(ChatModel):
    def __init__(self, model_id: str, retries: int, cache=None):
        super().__init__(cache)
        self.model_id = model_id
        self.retries = retries

    def failure(self, exc: Exception, status: int | None) -> AskchainError:
        """A rejected request (bad key, model name or parameter) is a ConfigError, raised at once; a transient failure
        (`status` None: no response) that outlasted the retries is a ProviderError."""
        if status is None or status in TRANSIENT_STATUSES:
            return ProviderError(f"{self.model_id}: {first_line(exc)} (after {self.retries} retries)")
        return ConfigError(f"{self.model_id}: {first_line(exc)}")
