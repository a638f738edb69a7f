"""`askchain speed`: the llama.cpp model's prompt and generation speed through askchain's own path, beside llama.cpp's
own `llama-batched-bench` on the same model file, threads and batch size, in one run. A question's time is its token
count divided by these speeds; a gap between the two columns is time askchain loses that the machine would give."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from askchain.errors import ConfigError

console = Console()

#: A request whose greedy reply is long and regular: every sequence generates its full budget, as the benchmark's do.
GENERATE = "Count from one to two thousand in English words, separated by commas, with nothing else."
N_BATCH = 512  # the batch size askchain's llama.cpp context is created with (askchain.llm.llamacpp)


@dataclass(frozen=True)
class Speed:
    """Tokens per second at one number of parallel sequences: prompt (evaluated once, shared by the sequences) and
    generation (summed over the sequences)."""

    parallel: int
    prompt_tokens: int
    prompt_tps: float
    generated_tokens: int
    generation_tps: float


def askchain_speeds(model, prompt_tokens: int, generate: int, parallel: list[int]) -> list[Speed]:
    """Through `ChatModel.complete`, as the pipeline calls it: a fresh prompt of about `prompt_tokens` (a new prefix,
    so nothing is restored) timed alone, then `generate` tokens on each of n sequences from that prompt."""
    from askchain.llm.base import track_usage

    speeds = []
    for n in parallel:
        messages = [{"role": "user", "content": f"{_filler(model, prompt_tokens)}\n\n{GENERATE}"}]
        with track_usage() as first:
            started = time.perf_counter()
            model.complete(messages, max_tokens=1)
            prompt_s = time.perf_counter() - started
        evaluated = first.prompt_tokens - first.restored_tokens
        with track_usage() as usage:
            started = time.perf_counter()
            model.complete(messages, max_tokens=generate, n=n, temperature=0.0)
            generation_s = time.perf_counter() - started
        speeds.append(Speed(n, evaluated, round(evaluated / prompt_s, 2), usage.completion_tokens,
                            round(usage.completion_tokens / generation_s, 2)))
    return speeds


def _filler(model, tokens: int) -> str:
    """About `tokens` tokens of text that no earlier prompt starts with (a new id first): phrases of ten tokens or more,
    a quarter as many as the tokens wanted, cut to length."""
    words = " ".join(f"row {i} of table t{i % 7} has value {i * 37 % 1000};" for i in range(tokens // 4 + 1))
    ids = model.llama.tokenize(f"{uuid.uuid4().hex} {words}".encode(), add_bos=False)[: max(tokens - 40, 1)]
    return model.llama.detokenize(ids).decode(errors="ignore")


def llama_speeds(binary: Path, model, prompt_tokens: int, generate: int, parallel: list[int],
                 flash_attention: bool) -> list[Speed]:
    """llama.cpp's own figures: `llama-batched-bench` with a shared prompt (-pps) in one KV buffer for every sequence
    (-kvu), the model's file, context size, threads and flash-attention choice as askchain's context has them, and
    askchain's batch size."""
    command = [str(binary), "-m", str(model.path), "-c", str(model.context_tokens),
               "-fa", "on" if flash_attention else "off", "-b", str(N_BATCH), "-ub", str(N_BATCH),
               "-t", str(model.thread_count), "-npp", str(prompt_tokens), "-ntg", str(generate),
               "-npl", ",".join(map(str, parallel)), "-pps", "-kvu", "--output-format", "jsonl"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConfigError(f"{binary.name} failed (exit {done.returncode}): {last}")
    return parse_batched_bench(done.stdout)


def parse_batched_bench(output: str) -> list[Speed]:
    """The JSONL lines `llama-batched-bench --output-format jsonl` prints, one per number of sequences."""
    speeds = []
    for line in output.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            speeds.append(Speed(row["pl"], row["pp"], round(row["speed_pp"], 2), row["pl"] * row["tg"],
                                round(row["speed_tg"], 2)))
    if not speeds:
        raise ConfigError("llama-batched-bench printed no JSONL results (is it older than --output-format jsonl?)")
    return speeds


def find_batched_bench(given: Path | None) -> Path | None:
    """The benchmark named, else the one `make llama-batched-bench` puts beside this Python, else one on PATH."""
    if given is not None:
        if not given.is_file():
            raise ConfigError(f"--llama-bench: {given} does not exist")
        return given
    beside = Path(sys.executable).parent / "llama-batched-bench"
    found = beside if beside.is_file() else shutil.which("llama-batched-bench")
    return Path(found) if found else None


def gap(ours: float, theirs: float) -> str:
    return f"{(ours - theirs) / theirs * 100:+.1f} %" if theirs else "-"


def speed(
    model_name: Optional[str] = typer.Option(None, "--model", help="A llama.cpp model (default from settings)."),
    prompt_tokens: int = typer.Option(512, "--prompt", min=64, help="Prompt tokens evaluated."),
    generate: int = typer.Option(128, "--generate", min=8, help="Tokens generated per sequence."),
    parallel: str = typer.Option("1,6", "--parallel", help="Numbers of sequences decoded side by side."),
    llama_bench: Optional[Path] = typer.Option(None, "--llama-bench", help="llama-batched-bench to compare with "
                                               "(default: the one `make llama-batched-bench` builds, or on PATH)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the figures as JSON."),
):
    """Prompt and generation tokens/s of the model through askchain, beside llama.cpp's own llama-batched-bench."""
    import llama_cpp

    from askchain.config import get_settings
    from askchain.llm.llamacpp import LlamaCppModel
    from askchain.llm.llamacpp_batch import PARALLEL_SEQUENCES
    from askchain.llm.registry import get_model

    try:
        counts = sorted({int(part) for part in parallel.split(",")})
    except ValueError:
        raise ConfigError(f"--parallel: expected numbers separated by commas, got {parallel!r}") from None
    if not counts or counts[0] < 1 or counts[-1] > PARALLEL_SEQUENCES:
        raise ConfigError(f"--parallel: between 1 and {PARALLEL_SEQUENCES} sequences")
    binary = find_batched_bench(llama_bench)
    # no response cache and no saved prompt states: every prompt token is evaluated, every reply generated
    settings = get_settings().with_overrides(llm={"cache": False, "prompt_states_disk_mb": 0})
    model = get_model(model_name, settings)
    if not isinstance(model, LlamaCppModel):
        raise ConfigError(f"askchain speed measures llama.cpp models; {model.model_id} is served elsewhere")
    ours = askchain_speeds(model, prompt_tokens, generate, counts)
    flash_attention = model.llama.context_params.flash_attn_type == llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
    model.close()  # the benchmark loads the model itself: two copies would share the cores' caches
    theirs = llama_speeds(binary, model, prompt_tokens, generate, counts, flash_attention) if binary else []
    table = Table("sequences", "prompt tok/s", "llama.cpp", "gap", "generation tok/s", "llama.cpp", "gap",
                  title=f"{model.model_id}, {model.thread_count} threads, prompt {prompt_tokens}, generate {generate}")
    by_count = {s.parallel: s for s in theirs}
    for s in ours:
        ref = by_count.get(s.parallel)
        table.add_row(str(s.parallel), str(s.prompt_tps), str(ref.prompt_tps) if ref else "-",
                      gap(s.prompt_tps, ref.prompt_tps) if ref else "-", str(s.generation_tps),
                      str(ref.generation_tps) if ref else "-", gap(s.generation_tps, ref.generation_tps) if ref else "-")
    console.print(table)
    if binary is None:
        console.print("llama-batched-bench not found: `make llama-batched-bench` builds it from the installed "
                      "llama.cpp version with this machine's flags, or pass --llama-bench PATH")
    if out:
        out.write_text(json.dumps({"model": model.model_id, "askchain": [asdict(s) for s in ours],
                                   "llama_batched_bench": [asdict(s) for s in theirs]}, indent=1))


def register(app: typer.Typer) -> None:
    app.command()(speed)
