"""Shared helpers: statistics, JSON / markdown / PNG outputs, the test bed's config."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def median(xs: Sequence[float]) -> float | None:
    return float(statistics.median(xs)) if xs else None


def mean(xs: Sequence[float]) -> float | None:
    return float(statistics.fmean(xs)) if xs else None


def pct(xs: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear interpolation between closest ranks."""
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return float(s[lo] + (s[hi] - s[lo]) * (k - lo))


def ratio(a: float | None, b: float | None, floor: float = 0.0) -> float | None:
    """a / max(b, floor); None when undefined."""
    if a is None or b is None:
        return None
    d = max(b, floor)
    return a / d if d > 0 else None


def rnd(x: Any, nd: int = 4) -> Any:
    if isinstance(x, float):
        return round(x, nd)
    if isinstance(x, dict):
        return {k: rnd(v, nd) for k, v in x.items()}
    if isinstance(x, list):
        return [rnd(v, nd) for v in x]
    return x


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--config", help="sites file (default: bring the test bed up, use its)")
    p.add_argument("--out", default=str(RESULTS),
                   help="directory for NAME.json/.md/.png ('' to write nothing)")
    p.add_argument("--tag", default="", help="suffix for the output file names")
    return p


def config_path(given: str | None) -> str:
    """The sites file: given, $DIAMOND_CONFIG, or the test bed's (brought up if needed)."""
    if given or os.environ.get("DIAMOND_CONFIG"):
        return given or os.environ["DIAMOND_CONFIG"]
    from diamond_jupyter import testbed

    testbed.lock.hold()
    return testbed.up()["config"]


def primary_sites(config: str) -> list[str]:
    """The sites `--site auto` ranks: one entry per cluster, without the test bed's second
    doors to them (alpha-pbs, beta-rest), which would count a cluster twice."""
    from diamond_jupyter.config import load_config

    return [s.name for s in load_config(config).sites if s.auto]


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 100 else f"{v:.1f}"
        return "-" if v is None else str(v)
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def emit(name: str, args: argparse.Namespace, data: dict[str, Any], md: str,
         plot: Callable[[Any], None] | None = None) -> None:
    """Write NAME.json, NAME.md and NAME.png under --out; print JSON or the table."""
    data = rnd(data)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        stem = name + (f"-{args.tag}" if args.tag else "")
        (out / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
        (out / f"{stem}.md").write_text(md)
        if plot is not None:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
            plot(ax)
            fig.tight_layout()
            fig.savefig(out / f"{stem}.png")
            plt.close(fig)
    print(json.dumps(data, indent=2) if args.json else md, flush=True)
