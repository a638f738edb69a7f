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
#: A sample whose last LOOP_TOKENS tokens end a unit written three times in a row is stuck in a loop (small models
#: repeat a condition until max_tokens): it is ended there instead of holding its whole batch to max_tokens.
LOOP_TOKENS = 16
#: The Qwen tokenizer writes each digit of a hex literal as one token, and a 32-byte value is 64 of them (the zero
#: address as a log topic is 64 zeros): a run of one repeated token, or of a 2-token unit, is a loop only past that.
LONGEST_RUN_IN_A_LITERAL = 66
#: Prompt lookup drafts what followed the latest earlier occurrence of a sequence's last LOOKUP_NGRAM tokens.
LOOKUP_NGRAM = 3


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


def evaluate_prompt(llama, tokens: list[int]) -> None:
    """Bring sequence 0 to exactly `tokens`, reusing the longest prefix already in the KV cache."""
    if not tokens:
        llama._ctx.kv_cache_seq_rm(-1, -1, -1)
        llama.n_tokens = 0
        return
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
    prompts: list[list[int]],
    *,
    temperature: float,
    top_p: float,
    max_tokens: int,
    stop: tuple[str, ...],
    seeds: list[int],
    draft_tokens: int = 0,
) -> list[tuple[str, int]]:
    """One completion per prompt, decoded side by side, as (text, completion tokens) pairs.

    Identical prompts (n samples of one prompt) share the prompt's cells and its last logits. Different prompts
    (e.g. revisions of several queries over one schema) share their common prefix, evaluated once; each sequence
    then evaluates its own suffix. Sequence 0 is left holding the first prompt.

    With `draft_tokens`, each step also decodes up to that many tokens a sequence would copy from its prompt or its
    own text (prompt lookup: what followed the last occurrence of its latest tokens, `LookupDrafts`). A drafted
    token is kept only while the sampler draws it from the model's own distribution at its place, so the samples
    are those of plain decoding; SQL copies addresses, names and whole clauses, which then cost one step.
    """
    from llama_cpp._internals import LlamaBatch

    n = len(prompts)
    if not 0 < n <= PARALLEL_SEQUENCES:
        raise ValueError(f"1 to {PARALLEL_SEQUENCES} sequences per batch, asked for {n}")
    draft_tokens = max(0, min(draft_tokens, llama.n_batch // n - 1))  # one decode holds every sequence's drafts
    same = all(p == prompts[0] for p in prompts)
    shared = len(prompts[0]) if same else min(min(len(p) for p in prompts) - 1, _common_prefix(prompts))
    if shared + sum(len(p) - shared + max_tokens for p in prompts) > llama.n_ctx():
        raise ValueError("Requested tokens exceed context window")
    evaluate_prompt(llama, prompts[0][:shared] if not same else prompts[0])
    context = llama._ctx
    for seq_id in range(1, n):
        context.kv_cache_seq_cp(0, seq_id, 0, shared)
    sequences = [_Sequence(seq_id, _sampler(temperature, top_p, seeds[seq_id])) for seq_id in range(n)]
    lookups = _lookups(prompts, same, draft_tokens)
    batch = LlamaBatch(n_tokens=max(n * (1 + draft_tokens), llama.n_batch), embd=0, n_seq_max=1, verbose=False)
    try:
        if same:
            logit_rows = {seq_id: [-1] for seq_id in range(n)}  # every sample starts from the prompt's logits
        else:
            logit_rows = {seq_id: [row] for seq_id, row in _evaluate_suffixes(context, batch, prompts, shared, llama.n_batch).items()}
        _decode_until_done(llama, batch, sequences, logit_rows, lookups, [len(p) for p in prompts], stop, max_tokens)
    finally:
        _release(llama, batch, sequences, prompts[0])
    return [(_cut_at_stop(sequence.text, stop), len(sequence.tokens)) for sequence in sequences]


def _lookups(prompts: list[list[int]], same: bool, draft_tokens: int) -> dict[int, "LookupDrafts"]:
    """Each sequence's prompt lookup (none without `draft_tokens`); identical prompts index their prompt once."""
    if not draft_tokens:
        return {}
    by_prompt = [LookupDrafts(p, draft_tokens) for p in (prompts[:1] if same else prompts)]
    return {seq_id: by_prompt[0 if same else seq_id].fork() for seq_id in range(len(prompts))}


def _decode_until_done(llama, batch, sequences: list[_Sequence], logit_rows: dict[int, list[int]],
                       lookups: dict[int, "LookupDrafts"], starts: list[int], stop: tuple[str, ...], max_tokens: int) -> None:
    """The decoding loop: sample each live sequence's next tokens from its logits rows, then decode every sequence's
    new token and drafts in one batch, until no sequence is live. `starts` are the prompts' lengths."""
    import llama_cpp

    context, vocab = llama._ctx, llama._model.vocab
    drafts: dict[int, list[int]] = {sequence.seq_id: [] for sequence in sequences}
    while True:
        rows = []
        for sequence in sequences:
            if sequence.done:
                continue
            seq_id = sequence.seq_id
            before = len(sequence.tokens)
            token = _sample_along(sequence, context, logit_rows[seq_id], drafts[seq_id], llama, vocab, stop,
                                  max_tokens, llama_cpp.llama_vocab_is_eog)
            if sequence.done:
                continue
            position = starts[seq_id] + len(sequence.tokens) - 1  # of `token`, the one sample not yet decoded
            if drafts[seq_id]:
                context.kv_cache_seq_rm(seq_id, position, -1)  # the drafted tokens it did not draw
                lookups[seq_id].judge(accepted=len(sequence.tokens) - before - 1, drafted=len(drafts[seq_id]))
            drafts[seq_id] = _draft(lookups.get(seq_id), sequence, max_tokens)
            first = len(rows)
            rows += [(t, position + i, seq_id, True) for i, t in enumerate([token, *drafts[seq_id]])]
            logit_rows[seq_id] = list(range(first, len(rows)))
        if not rows:
            break
        _fill(batch, rows)
        context.decode(batch)


def _draft(lookup: "LookupDrafts | None", sequence: _Sequence, max_tokens: int) -> list[int]:
    """The tokens to decode beside the sequence's new one: its lookup's draft, fed the tokens sampled since."""
    if lookup is None:
        return []
    lookup.extend(sequence.tokens[len(lookup.own):])
    return lookup.draft(max_tokens - len(sequence.tokens))


def _release(llama, batch, sequences: list[_Sequence], first: list[int]) -> None:
    """Free the batch and samplers and leave the context holding just the first prompt, so the next call reuses
    its prefix like any other (the last logits belong to a sample, so they must be evaluated again)."""
    batch.close()
    for sequence in sequences:
        sequence.sampler.close()
    context = llama._ctx
    for seq_id in range(1, len(sequences)):
        context.kv_cache_seq_rm(seq_id, -1, -1)
    context.kv_cache_seq_rm(0, len(first), -1)
    llama.input_ids[: len(first)] = first
    llama.n_tokens = len(first)
    llama._requires_eval = True  # the last logits belong to a sample, not to the prompt


def _sample_along(sequence: _Sequence, context, rows: list[int], drafted: list[int], llama, vocab, stop, max_tokens,
                  is_eog) -> int | None:
    """Sample the sequence's next tokens from its logits rows: the first row's, then, while each sample equals the
    token drafted there, the next row's. Returns the last token sampled (not decoded yet); marks the sequence done
    at an end-of-generation token, a stop marker, max_tokens or a loop."""
    for row, draft in zip(rows, [*drafted, None]):
        token = sequence.sampler.sample(context, row)
        if is_eog(vocab, token):
            sequence.done = True
            return None
        sequence.tokens.append(token)
        sequence.text = llama.detokenize(sequence.tokens).decode("utf-8", errors="ignore")
        if any(marker in sequence.text for marker in stop) or len(sequence.tokens) >= max_tokens or looping(sequence.tokens):
            sequence.done = True
            return None
        if token != draft:  # the last row has no draft: the loop always ends here
            break
    return token


class LookupDrafts:
    """Prompt lookup: the tokens that followed the latest earlier occurrence of a sequence's last LOOKUP_NGRAM
    tokens, in its own text first, then in its prompt. The prompt's index is built once and shared by the forks.

    A drafted token costs a row of the batch whether kept or not, so each sequence drafts at most `limit` tokens:
    halved when its first drafted token is not drawn, doubled (up to the maximum) when all of them are."""

    def __init__(self, prompt: list[int], maximum: int, prompt_index: dict[tuple[int, ...], int] | None = None):
        self.prompt = prompt
        self.prompt_index = _ngram_index(prompt) if prompt_index is None else prompt_index
        self.own: list[int] = []
        self.own_index: dict[tuple[int, ...], int] = {}
        self.maximum = self.limit = maximum

    def fork(self) -> "LookupDrafts":
        """A sequence of its own over the same prompt (its index is not built again)."""
        return LookupDrafts(self.prompt, self.maximum, self.prompt_index)

    def judge(self, accepted: int, drafted: int) -> None:
        if accepted == 0:
            self.limit = max(1, self.limit // 2)
        elif accepted >= drafted:
            self.limit = min(self.maximum, self.limit * 2)

    def extend(self, tokens: list[int]) -> None:
        for token in tokens:
            self.own.append(token)
            if len(self.own) > LOOKUP_NGRAM:  # the n-gram ending just before the new token, and where it continues
                self.own_index[tuple(self.own[-LOOKUP_NGRAM - 1 : -1])] = len(self.own) - 1

    def draft(self, room: int) -> list[int]:
        """Up to `limit` tokens (and at most `room`, what is left of max_tokens)."""
        limit = min(self.limit, room)
        tail = (self.prompt[-LOOKUP_NGRAM:] + self.own)[-LOOKUP_NGRAM:]
        if limit <= 0 or len(tail) < LOOKUP_NGRAM:
            return []
        key = tuple(tail)
        if key in self.own_index:
            at = self.own_index[key]
            return self.own[at : at + limit]
        at = self.prompt_index.get(key)
        return self.prompt[at : at + limit] if at is not None else []


def _ngram_index(tokens: list[int]) -> dict[tuple[int, ...], int]:
    """Each LOOKUP_NGRAM-gram -> the position right after its latest occurrence (followed by at least one token)."""
    return {tuple(tokens[i : i + LOOKUP_NGRAM]): i + LOOKUP_NGRAM for i in range(len(tokens) - LOOKUP_NGRAM)}


def looping(tokens: list[int]) -> bool:
    """Whether a sample is stuck: its last LOOP_TOKENS tokens end one unit written three times in a row (a condition
    repeated until max_tokens). An expression a query uses three times with other text between the uses
    (`SUM(x) AS volume, SUM(x) - LAG(SUM(x))`) is no loop. A run of one token or of a 2-token unit (a padded hex
    literal, one token per digit) is a loop only longer than any literal."""
    if len(tokens) < 3 * LOOP_TOKENS:
        return False
    tail = tokens[-LOOP_TOKENS:]
    period = next(p for p in range(1, LOOP_TOKENS + 1) if tail[p:] == tail[:-p])
    if period <= 2:  # zeros (or a 2-token unit) in a row: a padded address or hash, unless longer than any
        return _run_length(tokens, period) > LONGEST_RUN_IN_A_LITERAL
    if period == LOOP_TOKENS:  # no unit within the tail: the unit ends where the tail last occurred before
        last = next((i for i in range(len(tokens) - LOOP_TOKENS - 1, -1, -1) if tokens[i:i + LOOP_TOKENS] == tail), None)
        if last is None:
            return False
        period = len(tokens) - LOOP_TOKENS - last
    return _run_length(tokens, period) >= 2 * period + LOOP_TOKENS


def _run_length(tokens: list[int], period: int) -> int:
    """How many of the last tokens repeat with this period."""
    start = len(tokens) - period
    while start > 0 and tokens[start - 1] == tokens[start - 1 + period]:
        start -= 1
    return len(tokens) - start


def _common_prefix(prompts: list[list[int]]) -> int:
    n = 0
    for column in zip(*prompts):
        if any(token != column[0] for token in column):
            break
        n += 1
    return n


def _fill(batch, rows: list[tuple[int, int, int, bool]]) -> None:
    """Put (token, position, sequence, wants logits) rows into a llama.cpp batch."""
    b = batch.batch
    b.n_tokens = len(rows)
    for i, (token, pos, seq_id, logits) in enumerate(rows):
        b.token[i], b.pos[i], b.seq_id[i][0], b.n_seq_id[i], b.logits[i] = token, pos, seq_id, 1, logits


def _evaluate_suffixes(context, batch, prompts: list[list[int]], shared: int, limit: int) -> dict[int, int]:
    """Each sequence's tokens after the shared prefix, in chunks of at most `limit`; the last token of every
    sequence is decoded in one final batch so that all their logits are rows of it. Returns seq -> logits row."""
    body = [(p[pos], pos, seq_id, False) for seq_id, p in enumerate(prompts) for pos in range(shared, len(p) - 1)]
    for begin in range(0, len(body), limit):
        _fill(batch, body[begin : begin + limit])
        context.decode(batch)
    _fill(batch, [(p[-1], len(p) - 1, seq_id, True) for seq_id, p in enumerate(prompts)])
    context.decode(batch)
    return {seq_id: seq_id for seq_id in range(len(prompts))}


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    cut = min((text.index(marker) for marker in stop if marker in text), default=len(text))
    return text[:cut]
