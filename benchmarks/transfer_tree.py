"""`diamond transfer -r` of a directory tree from an SSH site: the engine before (the tree
walked one directory at a time on the copy's own SFTP channel, then a stat of each file
for its size, then one file copied after another) against the engine now (the directories
the walk takes next listed several at once on the connection's pool of SFTP channels, each
file's size from its listing, FILES_AT_ONCE files copied at once, each on its own channel).

The copy is the engine's own, `transfer.sftp.sftp_copy` (what `diamond transfer -r` and a
job's stage-out run): the walk, then each file copied and checked by sha256 on both ends.
`list_*` times the walk alone. The site is a
private real OpenSSH sshd on 127.0.0.1 (tests/sshd_helper.py; no test bed), reached
through `common.DelayProxy`, which holds each chunk `rtt/2` in each direction. Both
engines run in the same process on their own connection against the same tree, in a
shuffled order each round, into a fresh local directory each time; each round's ratio is
the engine before's time over the engine now's, and both must copy the same files with
the same checksum.

    python -m benchmarks.transfer_tree --json [--rtt-ms 0 --rtt-ms 10 --rtt-ms 40]
        [--width 4 --depth 2 --rounds 15]
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import common

# `width` directories a level, `depth` levels, a small file in each directory
MAKE_TREE = r"""set -e
cd "$1"
level=0
while [ "$level" -lt "$2" ]; do
  for d in $(find . -mindepth "$level" -maxdepth "$level" -type d); do
    i=0; while [ "$i" -lt "$3" ]; do mkdir "$d/d$i"; i=$((i + 1)); done
  done
  level=$((level + 1))
done
for d in $(find . -type d); do printf '%s\n' "$d" > "$d/part.dat"; done
"""


@contextlib.contextmanager
def engine_before() -> Iterator[None]:
    """The copy as before this change: `SftpSide.walk` alone (one directory after another
    on the copy's own channel), its sizes dropped, so `copy_tree` asks a stat of each file,
    and one file copied after another (`files_at_once` 1)."""
    from diamond_jupyter.transfer import sftp

    walk, pooled, at_once = sftp.SftpSide.walk, sftp.SftpSide.walk_pooled, sftp.files_at_once

    def sizeless(self: Any, path: str, skip_hidden: bool = False) -> Any:
        return dataclasses.replace(walk(self, path, skip_hidden), sizes={})
    sftp.SftpSide.walk, sftp.SftpSide.walk_pooled = sizeless, None  # type: ignore[assignment]
    sftp.files_at_once = lambda *_: 1  # type: ignore[assignment]
    try:
        yield
    finally:
        sftp.SftpSide.walk, sftp.SftpSide.walk_pooled = walk, pooled  # type: ignore[method-assign]
        sftp.files_at_once = at_once


async def _measure(sshd: Any, rtt_ms: float, width: int, depth: int, rounds: int,
                   warmup: int, workdir: Path) -> dict[str, Any]:
    from diamond_jupyter.config import TransportConfig
    from diamond_jupyter.transfer.sftp import SftpSide, sftp_copy
    from diamond_jupyter.transports import make_transport

    proxy, door = common.delayed_door(sshd, rtt_ms, workdir)
    cfg = TransportConfig(**door, sftp_channels=4)
    engines = {name: make_transport(cfg, "far") for name in ("before", "pooled")}
    t = engines["pooled"]
    home = (await t.run(["sh", "-c", 'printf %s "$HOME"'], check=True)).stdout
    root = f"{home}/.diamond-bench-tree-{random.randrange(10**6)}"
    await t.run(["mkdir", "--", root], check=True)
    await t.run(["sh", "-c", MAKE_TREE, "mk", root, str(depth), str(width)], check=True)
    times: dict[str, list[float]] = {f"{k}_{n}": [] for k in ("copy", "list")
                                     for n in engines}
    ratios: dict[str, list[float]] = {"copy": [], "list": []}
    rng = random.Random(int(rtt_ms) * 100 + width * 10 + depth)
    files = 0
    try:
        for r in range(warmup + rounds):
            order = list(engines)
            rng.shuffle(order)
            took: dict[str, float] = {}
            answers = {}
            for name in order:
                dest = workdir / f"dest-{name}"
                shutil.rmtree(dest, ignore_errors=True)
                with engine_before() if name == "before" else contextlib.nullcontext():
                    t0 = time.perf_counter()
                    res = await sftp_copy(engines[name], root, None, str(dest),
                                          recursive=True, progress=lambda *_: None,
                                          cancel=threading.Event())
                    took[f"copy_{name}"] = time.perf_counter() - t0
                    side = await SftpSide.open(engines[name])
                    try:
                        t0 = time.perf_counter()
                        walk = side.walk_pooled  # None for the engine before
                        found = await walk(root) if walk is not None else \
                            await asyncio.to_thread(side.walk, root)
                        took[f"list_{name}"] = time.perf_counter() - t0
                    finally:
                        await side.close()
                answers[name] = (res.checksum, [f["path"] for f in res.files], found.files)
                files = len(res.files)
            if answers["before"] != answers["pooled"]:
                raise AssertionError("the engines copied different trees")
            if r >= warmup:
                for k, v in took.items():
                    times[k].append(v)
                for k in ratios:
                    ratios[k].append(took[f"{k}_before"] / took[f"{k}_pooled"])
    finally:
        await t.run(["rm", "-rf", "--", root])
        for e in engines.values():
            await e.close()
        proxy.close()
    dirs = sum(width ** i for i in range(depth + 1))
    return {"rtt_ms": rtt_ms, "width": width, "depth": depth, "directories": dirs,
            "files": files, "sftp_channels": 4, "rounds": rounds,
            **{f"{k}_median_s": common.median(v) for k, v in times.items()},
            **{f"{k}_p90_s": common.pct(v, 90) for k, v in times.items()},
            "copy_median_ratio": common.median(ratios["copy"]),
            "list_median_ratio": common.median(ratios["list"]),
            **{f"{k}_s": v for k, v in times.items()}}


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--rtt-ms", type=float, action="append",
                   help="round trip added by the proxy, ms (repeatable; default 0, 10, 40)")
    p.add_argument("--width", type=int, default=4, help="directories a level (default 4)")
    p.add_argument("--depth", type=int, default=2, help="levels below the top (default 2)")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args(argv)
    runs = []
    with common.private_sshd("diamond-bench-tree-") as (sshd, work):
        for rtt in args.rtt_ms or [0.0, 10.0, 40.0]:
            runs.append(asyncio.run(_measure(sshd, rtt, args.width, args.depth,
                                             args.rounds, args.warmup, work)))
    rows = [[r["rtt_ms"], r["directories"], r["files"], r["list_before_median_s"] * 1000,
             r["list_pooled_median_s"] * 1000, r["list_median_ratio"],
             r["copy_before_median_s"] * 1000, r["copy_pooled_median_s"] * 1000,
             r["copy_median_ratio"]] for r in runs]
    md = common.markdown_table(["rtt ms", "dirs", "files", "list before ms", "list now ms",
                                "ratio", "copy before ms", "copy now ms", "ratio"], rows)

    def plot(ax: Any) -> None:
        for key, label in (("list", "the walk"), ("copy", "the whole copy")):
            ax.plot([r["rtt_ms"] for r in runs], [r[f"{key}_median_ratio"] for r in runs],
                    marker="o", label=label)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel("round trip (ms)")
        ax.set_ylabel("before / now (median of rounds)")
        ax.legend()

    common.emit("transfer_tree", args, {"runs": runs}, md, plot)


if __name__ == "__main__":
    main()
