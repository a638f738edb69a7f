"""Decoding `n` samples of one prompt together: one prompt evaluation, then one llama.cpp batch per step.

llama-cpp-python's chat API samples sequentially, paying the decode of every token once per sample; decoding the
sequences side by side in one batch costs little more than one (the step is memory-bound), which is what makes
self-consistency and the pipeline's draft samples affordable on a CPU. The prompt's KV cells are shared by all
sequences (unified KV cache), and afterwards the context is left holding just the prompt, so the next call still
reuses the longest shared prefix like any other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PARALLEL_SEQUENCES = 8  # sequences the context is created for: the most samples one batch decodes
TOP_K, MIN_P = 40, 0.05  # llama-cpp-python's chat defaults, so batched and sequential samples match in kind


def context_params_for_batches(params) -> None:
    """Let one context decode up to PARALLEL_SEQUENCES sequences sharing one KV buffer (for prefix sharing)."""
    params.n_seq_max = PARALLEL_SEQUENCES
    params.kv_unified = True


@dataclass
class _Sequence:
    seq_id: int
    sampler: object
    tokens: list[int] = field(default_factory=list)
    text: str = ""
    done: bool = False


def chat_prompt_tokens(llama, messages: list[dict[str, str]]) -> list[int]:
    """The tokens llama-cpp-python's chat handler would feed for these messages (the GGUF's own chat template)."""
    from llama_cpp import llama_chat_format

    model = llama._model
    eos_id, bos_id = model.token_eos(), model.token_bos()
    formatter = llama_chat_format.Jinja2ChatFormatter(
        template=llama.metadata["tokenizer.chat_template"],
        eos_token=model.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=model.token_get_text(bos_id) if bos_id != -1 else "",
    )
    result = formatter(messages=messages)
    return llama.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)


def _evaluate_prompt(llama, tokens: list[int]) -> None:
    """Bring sequence 0 to exactly `tokens`, reusing the longest prefix already in the KV cache."""
    shared = 0
    for cached, wanted in zip(llama.input_ids[: llama.n_tokens], tokens):
        if cached != wanted:
            break
        shared += 1
    shared = min(shared, len(tokens) - 1)  # re-decode at least the last token: its logits start every sample
    llama._ctx.kv_cache_seq_rm(-1, shared, -1)
    llama.n_tokens = shared
    llama.eval(tokens[shared:])


def _sampler(temperature: float, top_p: float, seed: int):
    from llama_cpp._internals import LlamaSampler

    sampler = LlamaSampler()
    if temperature <= 0:
        sampler.add_greedy()
        return sampler
    sampler.add_top_k(TOP_K)
    sampler.add_top_p(top_p, 1)
    sampler.add_min_p(MIN_P, 1)
    sampler.add_temp(temperature)
    sampler.add_dist(seed)
    return sampler


def sample_batch(
    llama,
    prompt: list[int],
    *,
    n: int,
    temperature: float,
    top_p: float,
    max_tokens: int,
    stop: tuple[str, ...],
    seed: int,
) -> list[tuple[str, int]]:
    """`n` completions of `prompt` decoded side by side, as (text, completion tokens) pairs."""
    import llama_cpp
    from llama_cpp._internals import LlamaBatch

    if n > PARALLEL_SEQUENCES:
        raise ValueError(f"at most {PARALLEL_SEQUENCES} samples per batch, asked for {n}")
    if len(prompt) + n * max_tokens > llama.n_ctx():
        raise ValueError("Requested tokens exceed context window")
    _evaluate_prompt(llama, prompt)
    context, vocab = llama._ctx, llama._model.vocab
    start = len(prompt)
    for seq_id in range(1, n):
        context.kv_cache_seq_cp(0, seq_id, 0, start)
    sequences = [_Sequence(seq_id, _sampler(temperature, top_p, seed + seq_id)) for seq_id in range(n)]
    batch = LlamaBatch(n_tokens=n, embd=0, n_seq_max=1, verbose=False)
    try:
        logit_rows = {sequence.seq_id: -1 for sequence in sequences}  # every sequence starts from the prompt's logits
        for step in range(max_tokens):
            active = []
            for sequence in sequences:
                if sequence.done:
                    continue
                token = sequence.sampler.sample(context, logit_rows[sequence.seq_id])
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    sequence.done = True
                    continue
                sequence.tokens.append(token)
                sequence.text = llama.detokenize(sequence.tokens).decode("utf-8", errors="ignore")
                if any(marker in sequence.text for marker in stop) or step == max_tokens - 1:
                    sequence.done = True
                    continue
                active.append((sequence, token))
            if not active:
                break
            b = batch.batch
            b.n_tokens = len(active)
            for row, (sequence, token) in enumerate(active):
                b.token[row], b.pos[row] = token, start + len(sequence.tokens) - 1
                b.seq_id[row][0], b.n_seq_id[row], b.logits[row] = sequence.seq_id, 1, True
                logit_rows[sequence.seq_id] = row
            context.decode(batch)
    finally:
        batch.close()
        for sequence in sequences:
            sequence.sampler.close()
        for seq_id in range(1, n):
            context.kv_cache_seq_rm(seq_id, -1, -1)
        context.kv_cache_seq_rm(0, start, -1)
        llama.n_tokens = start
        llama._requires_eval = True  # the last logits belong to a sample, not to the prompt
    return [(_cut_at_stop(sequence.text, stop), len(sequence.tokens)) for sequence in sequences]


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    cut = min((text.index(marker) for marker in stop if marker in text), default=len(text))
    return text[:cut]
