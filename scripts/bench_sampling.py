"""Sequential vs side-by-side sampling with the embedded model: `n` samples of one prompt, tokens per second.

    .venv/bin/python scripts/bench_sampling.py [--model qwen2.5-coder-1.5b] [--n 6] [--max-tokens 80]
"""

from __future__ import annotations

import argparse
import time

from askchain.config import get_settings, shared_data_dir
from askchain.llm.registry import get_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--n", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=80)
    args = parser.parse_args()
    model = get_model(args.model, get_settings().with_overrides(llm={"cache": False}))
    schema = (shared_data_dir() / "spider" / "tables.json").read_text()[:6000]
    messages = [
        {"role": "system", "content": "You write SQLite SQL. Schema:\n" + schema},
        {"role": "user", "content": "How many singers are there? Answer with one SQL query in a ```sql block."},
    ]
    model.complete(messages, max_tokens=1)  # the prompt is evaluated once and cached for both runs

    def timed(label: str, **kwargs) -> None:
        started = time.perf_counter()
        reply = model.complete(messages, temperature=0.8, top_p=0.95, max_tokens=args.max_tokens, **kwargs)
        seconds = time.perf_counter() - started
        tokens = reply.usage.completion_tokens
        print(f"{label}: {tokens} tokens in {seconds:.1f} s = {tokens / seconds:.1f} tokens/s")

    timed(f"{args.n} samples side by side", n=args.n, seed=1)
    started, tokens = time.perf_counter(), 0
    for i in range(args.n):
        tokens += model.complete(messages, temperature=0.8, top_p=0.95, max_tokens=args.max_tokens, seed=100 + i).usage.completion_tokens
    seconds = time.perf_counter() - started
    print(f"{args.n} samples one after another: {tokens} tokens in {seconds:.1f} s = {tokens / seconds:.1f} tokens/s")


if __name__ == "__main__":
    main()
