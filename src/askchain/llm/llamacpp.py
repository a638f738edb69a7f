"""The embedded provider: a GGUF model run in-process by llama.cpp; a model object loads its weights on first use
and frees them on `close()` (askchain.resources keeps one per model and settings in a process)."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from askchain.errors import ConfigError
from askchain.llm.base import ChatModel, ChatRequest, RawSample
from askchain.llm.llamacpp_batch import (
    PARALLEL_SEQUENCES, chat_prompt_tokens, context_params_for_batches, evaluate_prompt, sample_batch,
)
from askchain.llm.prompt_states import PromptStates, StateFiles, file_sha256, shared_prefix, state_key


@dataclass
class _Loaded:
    """One loaded model and what belongs to its single context: the lock serialising its calls (its KV cache is
    the prompt cache every call reuses) and the saved states of earlier prompts."""

    llama: object
    states: PromptStates
    lock: threading.Lock = field(default_factory=threading.Lock)


#: Models holding loaded weights, freed before interpreter shutdown tears down the modules llama.cpp's finaliser needs.
_live: "weakref.WeakSet[LlamaCppModel]" = weakref.WeakSet()


@atexit.register
def _close_models() -> None:
    for model in list(_live):
        model.close()


def _load(model: "LlamaCppModel") -> _Loaded:
    import llama_cpp  # a core dependency, imported on first use: loading it is slow

    try:
        llama = llama_cpp.Llama(
            model_path=str(model.path),
            n_ctx=model.context_tokens,
            n_threads=model.thread_count,
            n_batch=512,
            verbose=False,
        )
    except ValueError as exc:
        raise ConfigError(f"llama.cpp cannot load {model.path}: {exc}") from exc
    _allow_parallel_sequences(llama)
    files = None
    if model.prompt_states_disk_mb > 0:
        directory = model.prompt_states_dir
        sha256 = model.sha256 or file_sha256(model.path, directory)
        files = StateFiles(directory, model.prompt_states_disk_mb << 20, state_key(sha256, llama.context_params))
    return _Loaded(llama, PromptStates(model.prompt_states_mb << 20, files))


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
        self, path: Path, *, name: str, context_tokens: int, threads: int | None, prompt_states_mb: int,
        prompt_states_dir: Path, prompt_states_disk_mb: int, sha256: str | None = None, cache=None,
        lookup_draft_tokens: int = 0,
    ):
        """`sha256` is the model file's, when known (embedded models); otherwise it is computed once per file, as
        the key of the prompt states saved on disk (`prompt_states_disk_mb` in `prompt_states_dir`, 0 = none)."""
        super().__init__(cache)
        self.model_id = f"llamacpp:{name}"
        self.path = path
        self.context_tokens = context_tokens
        self.threads = threads
        self.prompt_states_mb = prompt_states_mb
        self.prompt_states_dir = prompt_states_dir
        self.prompt_states_disk_mb = prompt_states_disk_mb
        self.sha256 = sha256
        self.lookup_draft_tokens = lookup_draft_tokens
        self._loaded: _Loaded | None = None
        self._load_lock = threading.Lock()

    @property
    def thread_count(self) -> int:
        """The threads llama.cpp computes with: the setting, else every core."""
        return self.threads or os.cpu_count() or 1

    @property
    def loaded(self) -> _Loaded:
        """The weights and context, loaded on first use and kept until `close()` (askchain.resources owns models)."""
        with self._load_lock:
            if self._loaded is None:
                self._loaded = _load(self)
                _live.add(self)
            return self._loaded

    def close(self) -> None:
        with self._load_lock:
            if self._loaded is not None:
                self._loaded.llama.close()
                self._loaded = None

    @property
    def llama(self):
        return self.loaded.llama

    def _sample(self, request: ChatRequest) -> list[RawSample]:
        return self._sample_many([request])[0]

    def prefill(self, messages) -> int:
        loaded = self.loaded
        with loaded.lock:
            llama, states = loaded.llama, loaded.states
            prompt = chat_prompt_tokens(llama, list(messages))
            if len(prompt) > llama.n_ctx():
                raise self._too_long()
            reused = states.restore_best(llama, prompt)
            evaluate_prompt(llama, prompt)
            states.save(llama, prompt, reused)
        return len(prompt) - reused

    def _sample_many(self, requests: list[ChatRequest]) -> list[list[RawSample]]:
        loaded = self.loaded
        # llama.cpp reuses the longest prefix its KV cache (or a saved state) shares with the prompt, so calls are
        # serialised and callers put the stable part (schema, instructions) first.
        with loaded.lock:
            llama, states = loaded.llama, loaded.states
            prompts = [chat_prompt_tokens(llama, request.message_dicts) for request in requests]
            if any(r.json_schema for r in requests):
                return [self._sample_each(llama, states, request, prompt) for request, prompt in zip(requests, prompts)]
            return self._sample_side_by_side(llama, states, requests, prompts)

    def _sample_each(self, llama, states: PromptStates, request: ChatRequest, prompt: list[int]) -> list[RawSample]:
        """Samples one after another through llama-cpp-python's chat API, for its schema-constrained decoding."""
        response_format = {"type": "json_object", "schema": request.schema} if request.json_schema else None
        reused = states.restore_best(llama, prompt)
        samples = []
        try:
            for i in range(request.n):
                restored = _reusable(llama, prompt)
                out = self._complete_one(llama, request, response_format, seed=request.seed + i)
                usage = out["usage"]
                samples.append(
                    RawSample(
                        text=out["choices"][0]["message"]["content"] or "",
                        prompt_tokens=usage["prompt_tokens"],
                        completion_tokens=usage["completion_tokens"],
                        restored_tokens=restored,
                    )
                )
        finally:
            states.save(llama, prompt, reused)
        return samples

    def _sample_side_by_side(
        self, llama, states: PromptStates, requests: list[ChatRequest], prompts: list[list[int]]
    ) -> list[list[RawSample]]:
        """Every sample of every request decoded in batches of up to PARALLEL_SEQUENCES sequences; shared prompt
        prefixes are evaluated once, and each request's prompt tokens are counted once."""
        sequences = [(r, i) for r, request in enumerate(requests) for i in range(request.n)]
        samples: list[list[RawSample]] = [[] for _ in requests]
        states.restore_best(llama, prompts[0])
        held = 0  # the request whose prompt sequence 0 holds after a batch
        restored = {held: _reusable(llama, prompts[held])}  # request -> prompt tokens in the context before its batch
        try:
            for first in range(0, len(sequences), PARALLEL_SEQUENCES):
                chunk = sequences[first : first + PARALLEL_SEQUENCES]
                held = chunk[0][0]
                options = requests[held]
                for r, _ in chunk:
                    restored.setdefault(r, _reusable(llama, prompts[r]))
                with self._context_errors():
                    outputs = sample_batch(
                        llama, [prompts[r] for r, _ in chunk], temperature=options.temperature, top_p=options.top_p,
                        max_tokens=options.max_tokens, stop=options.stop, seeds=[requests[r].seed + i for r, i in chunk],
                        draft_tokens=self.lookup_draft_tokens,
                    )
                for (r, i), (text, tokens) in zip(chunk, outputs):
                    first_sample = i == 0  # a request's prompt is counted with its first sample
                    samples[r].append(
                        RawSample(
                            text, prompt_tokens=len(prompts[r]) if first_sample else 0, completion_tokens=tokens,
                            restored_tokens=restored[r] if first_sample else 0,
                        )
                    )
        finally:
            states.save(llama, prompts[held], restored[held])
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
            raise self._too_long() from exc

    def _too_long(self) -> ConfigError:
        return ConfigError(
            f"{self.model_id}: the prompt does not fit the {self.context_tokens}-token context "
            "(raise llm.context_tokens, or let schema linking shorten the schema)"
        )


def _reusable(llama, prompt: list[int]) -> int:
    """Prompt tokens the context already holds: they are not evaluated again (the last one always is, for its logits)."""
    return min(shared_prefix(llama.input_ids[: llama.n_tokens].tolist(), prompt), len(prompt) - 1)
