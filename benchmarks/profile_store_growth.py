"""cProfile of one workflow's submits on `store_growth`'s local site (no test bed): the
functions by cumulative time, to find what grows with the steps and the store."""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import shutil
import tempfile
from pathlib import Path

from benchmarks import store_growth


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=500, help="steps of the workflow")
    p.add_argument("--history", type=int, default=2000, help="finished jobs in the store")
    p.add_argument("--transfers", type=int, default=1000, help="finished copies in the store")
    p.add_argument("--top", type=int, default=40, help="functions to print")
    p.add_argument("--sort", default="cumulative", help="pstats sort key")
    p.add_argument("--save", help="write the raw profile here (for snakeviz, pstats)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="diamond-profile-store-growth-"))
    try:
        asyncio.run(store_growth._run(work / "warm-up", 3, 0, False))
        prof = cProfile.Profile()
        prof.enable()
        got = asyncio.run(store_growth._run(work / "run", args.steps, args.history, False,
                                            args.transfers))
        prof.disable()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(got)
    if args.save:
        prof.dump_stats(args.save)
    pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
