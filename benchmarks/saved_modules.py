"""The profilers' `--save DIR` / `--against DIR`: each game's generated module written to
DIR/<game>.py before a change, and read back after it for an A/B in one process."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from throughput import Game

from gymwright.atomic import write_atomic


def add_arguments(ap: argparse.ArgumentParser, modules: str) -> None:
    """`--save DIR` and `--against DIR` for a profiler of `modules` (e.g. "batch modules")."""
    ap.add_argument("--save", type=Path, metavar="DIR", help=f"write the generated {modules} to DIR/<game>.py")
    ap.add_argument("--against", type=Path, metavar="DIR",
                    help="A/B: the modules saved in DIR vs today's (DIR's files run as Python code without the "
                         "audit, which would refuse the older runtime they carry: point it at modules you saved)")


def save_sources(games: list[Game], folder: Path, source_of: Callable[[Game], str], say: bool = False) -> list[Path]:
    """Write `source_of(game)` of each game to folder/<game>.py (`say`: print each path)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [write_atomic(folder / f"{g.key}.py", source_of(g)) for g in games]
    for path in paths if say else ():
        print(f"wrote {path}")
    return paths


def saved_source(ap: argparse.ArgumentParser, folder: Path, game: Game) -> str:
    """The module saved for `game` in `folder`, or the parser's error naming the command that saves it."""
    path = folder / f"{game.key}.py"
    if not path.is_file():
        ap.error(f"--against {folder}: no {path.name} there (write it first with --save {folder})")
    return path.read_text()
