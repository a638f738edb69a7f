"""Top-level commands about runs: `askchain trace RUN_ID`."""

from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

console = Console()


def trace(
    run_id: str = typer.Argument(..., help="The run_id printed by `askchain ask --json`."),
    as_json: bool = typer.Option(False, "--json", help="Print the raw trace."),
):
    """Print a run's trace: each stage with its seconds, tokens, candidates, revisions and tournament."""
    from askchain.config import get_settings
    from askchain.pipeline.trace import load_trace

    data = load_trace(get_settings().paths.traces(), run_id)
    if as_json:
        print(json.dumps(data, indent=1))
        return
    console.print(f"[bold]{data['question']}[/bold]\n[dim]{data['run_id']} · {data['method']} · {data['model']} · {data['db']}[/dim]")
    summary = Table("stage", "seconds", "prompt tok", "completion tok", "calls")
    for st in data["stages"]:
        u = st.get("usage", {})
        summary.add_row(st["stage"], f"{st['seconds']:.2f}", str(u.get("prompt_tokens", 0)), str(u.get("completion_tokens", 0)), str(u.get("calls", 0)))
    console.print(summary)
    for st in data["stages"]:
        if st.get("candidates"):
            console.print(f"[bold]{st['stage']}[/bold] candidates:")
            for sql, why in zip(st["candidates"], st.get("reasoning", [""] * len(st["candidates"]))):
                if why:
                    console.print(f"[dim]{why}[/dim]")
                console.print(Syntax(sql, "sql", word_wrap=True))
        if st["stage"] == "revise":
            for i, rnd in enumerate(st.get("rounds", [])):
                console.print(f"[bold]round {i}[/bold]")
                for ex in rnd:
                    status = ex["status"] + (f": {ex['error']}" if ex.get("error") else f" ({ex['rows']} rows)")
                    console.print(f"  [{'green' if ex['status'] == 'success' else 'red'}]{status}[/] [dim]{ex['generator']}[/dim]  {ex['sql']}")
        for number, step in enumerate(st.get("steps", []) if st["stage"] == "steps" else [], 1):
            outcome = f"failed: {step['error']}" if step.get("error") else f"{step['row_count']} rows"
            console.print(f"[bold]step {number}[/bold] {step['question']} [dim]({outcome})[/dim]")
            console.print(Syntax(step.get("sql") or "-- no SQL", "sql", word_wrap=True))
        if st["stage"] == "select":
            console.print(f"[bold]selection[/bold] ({st.get('reason')}):")
            for g in st.get("groups", []):
                console.print(f"  group of {g['size']} (score {g['score']}, {', '.join(g['generators'])}): {g['sql']}")
            for m in st.get("matches", []):
                console.print(f"  match: winner {m['winner']}\n    A: {m['a']}\n    B: {m['b']}")
            console.print(Syntax(st.get("chosen") or "-- nothing chosen", "sql", word_wrap=True))


def graph(out: str = typer.Option("docs", "--out", help="Folder for pipeline.md (Mermaid) and pipeline.png (Graphviz).")):
    """Draw the pipeline graph from the code into docs/."""
    import shutil
    import subprocess
    from pathlib import Path

    from askchain.config import get_settings
    from askchain.pipeline.graph import drawable_graph, graph_dot

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    drawn = drawable_graph(get_settings().pipeline)
    (folder / "pipeline.md").write_text(
        "# The pipeline graph\n\nGenerated from `askchain.pipeline.graph` by `askchain graph`; do not edit.\n\n"
        "![pipeline](pipeline.png)\n\n```mermaid\n" + drawn.draw_mermaid() + "```\n"
    )
    (folder / "pipeline.dot").write_text(graph_dot(drawn))
    if shutil.which("dot"):
        subprocess.run(["dot", "-Tpng", "-Gdpi=110", str(folder / "pipeline.dot"), "-o", str(folder / "pipeline.png")], check=True)
    console.print(f"wrote {folder / 'pipeline.md'}, {folder / 'pipeline.dot'}" + (", pipeline.png" if shutil.which("dot") else ""))


def register(app: typer.Typer) -> None:
    app.command()(trace)
    app.command()(graph)
