"""LLM layer: one chat-completion interface over the embedded llama.cpp model and remote providers."""

from askchain.llm.base import ChatModel, Completion, Message, Usage, track_usage
from askchain.llm.registry import get_model

__all__ = ["ChatModel", "Completion", "Message", "Usage", "get_model", "track_usage"]
