"""The sync's progress on stderr: blocks done of the range, blocks per second and the time left."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn, TimeRemainingColumn


class Progress:
    """A rich bar when `enabled`; `advance` after each written batch, `restart` after a reorganization."""

    def __init__(self, total: int, enabled: bool):
        self.bar = RichProgress(
            TextColumn("[bold]sync[/bold] blocks"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} blocks/s"), TextColumn("ETA"), TimeRemainingColumn(),
            console=Console(stderr=True), disable=not enabled)
        self.task = self.bar.add_task("sync", total=max(total, 0), rate="-")

    def __enter__(self) -> "Progress":
        self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.stop()

    def advance(self, blocks: int) -> None:
        self.bar.advance(self.task, blocks)
        speed = self.bar.tasks[0].speed
        self.bar.update(self.task, rate=f"{speed:,.1f}" if speed else "-")

    def restart(self, total: int) -> None:
        self.bar.reset(self.task, total=max(total, 0))
