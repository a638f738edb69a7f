"""The embedded provider: a GGUF model run in-process by llama.cpp, one loaded copy per process."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

from askchain.errors import ConfigError
from askchain.llm.base import ChatModel, ChatRequest, RawSample
from askchain.llm.llamacpp_batch import PARALLEL_SEQUENCES, chat_prompt_tokens, context_params_for_batches, sample_batch
from askchain.llm.prompt_states import PromptStates



@dataclass
class _Loaded:
    """One loaded model and what belongs to its single context: the lock serialising its calls (its KV cache is
    the prompt cache every call reuses) and the saved states of earlier prompts."""

    llama: object
    states: PromptStates
    lock: threading.Lock = field(default_factory=threading.Lock)


_loaded: dict[tuple[str, int], _Loaded] = {}
_load_lock = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free the models before interpreter shutdown tears down the modules llama.cpp's finaliser needs."""
    while _loaded:
        _, loaded = _loaded.popitem()
        loaded.llama.close()


def _load(path: Path, context_tokens: int, threads: int | None, prompt_states_mb: int) -> _Loaded:
    import llama_cpp  # a core dependency, imported on first use: loading it is slow
    key = (str(path), context_tokens)
    with _load_lock:
        if key not in _loaded:
            try:
                llama = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=context_tokens,
                    n_threads=threads or os.cpu_count(),
                    n_batch=512,
                    verbose=False,
                )
            except ValueError as exc:
                raise ConfigError(f"llama.cpp cannot load {path}: {exc}") from exc
            _allow_parallel_sequences(llama)
            _loaded[key] = _Loaded(llama, PromptStates(prompt_states_mb << 20))
        return _loaded[key]


def _allow_parallel_sequences(llama) -> None:
    """Recreate the context so it can decode several sequences at once (`Llama()` offers no such option)."""
    from llama_cpp import _internals

    context_params_for_batches(llama.context_params)
    single = llama._ctx
    llama._ctx = llama._stack.enter_context(
        contextlib.closing(_internals.LlamaContext(model=llama._model, params=llama.context_params, verbose=False))
    )
    single.close()


class LlamaCppModel(ChatModel):
    supports_json_schema = True

    def __init__(
        self, path: Path, *, name: str, context_tokens: int = 8192, threads: int | None = None, cache=None,
        prompt_states_mb: int = 1024,
    ):
        super().__init__(cache)
        self.model_id = f"llamacpp:{name}"
        self.path = path
        self.context_tokens = context_tokens
        self.threads = threads
        self.prompt_states_mb = prompt_states_mb

    @property
    def loaded(self) -> _Loaded:
        return _load(self.path, self.context_tokens, self.threads, self.prompt_states_mb)

    @property
    def llama(self):
        return self.loaded.llama

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        response_format = {"type": "json_object", "schema": request.schema} if request.json_schema else None
        loaded = self.loaded
        # llama.cpp reuses the longest prefix its KV cache (or a saved state) shares with the prompt, so calls are
        # serialised and callers put the stable part (schema, instructions) first.
        with loaded.lock:
            llama, states = loaded.llama, loaded.states
            states.restore_best(llama, chat_prompt_tokens(llama, request.message_dicts))
            try:
                if request.n > 1 and not request.json_schema:
                    return self._sample_together(llama, request)
                return self._sample_each(llama, request, response_format)
            finally:
                states.save(llama)

    def _sample_each(self, llama, request: ChatRequest, response_format) -> list[RawSample]:
        samples = []
        for i in range(request.n):
            out = self._complete_one(llama, request, response_format, seed=request.seed + i)
            usage = out["usage"]
            samples.append(
                RawSample(
                    text=out["choices"][0]["message"]["content"] or "",
                    prompt_tokens=usage["prompt_tokens"],
                    completion_tokens=usage["completion_tokens"],
                )
            )
        return samples

    def _sample_together(self, llama, request: ChatRequest) -> list[RawSample]:
        """Several plain-text samples decoded in one batch; the prompt is evaluated (and counted) once."""
        prompt = chat_prompt_tokens(llama, request.message_dicts)
        samples = []
        for first in range(0, request.n, PARALLEL_SEQUENCES):
            count = min(PARALLEL_SEQUENCES, request.n - first)
            with self._context_errors():
                outputs = sample_batch(
                    llama, prompt, n=count, temperature=request.temperature, top_p=request.top_p,
                    max_tokens=request.max_tokens, stop=request.stop, seed=request.seed + first,
                )
            samples += [
                RawSample(text=text, prompt_tokens=len(prompt) if first + i == 0 else 0, completion_tokens=tokens)
                for i, (text, tokens) in enumerate(outputs)
            ]
        return samples

    def _complete_one(self, llama, request: ChatRequest, response_format, seed: int) -> dict:
        with self._context_errors():
            return llama.create_chat_completion(
                messages=request.message_dicts,
                temperature=request.temperature,
                top_p=request.top_p,
                max_tokens=request.max_tokens,
                stop=list(request.stop) or None,
                seed=seed,
                response_format=response_format,
            )

    @contextlib.contextmanager
    def _context_errors(self):
        try:
            yield
        except ValueError as exc:
            if "context window" not in str(exc):
                raise
            raise ConfigError(
                f"{self.model_id}: the prompt does not fit the {self.context_tokens}-token context "
                "(raise llm.context_tokens, or let schema linking shorten the schema)"
            ) from exc
