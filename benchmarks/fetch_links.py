"""A fetch's symbolic links resolved over SSH: one SFTP channel (the engine before its pool)
against the pool of SFTP channels on the same one connection (the engine now): its extra
channels open from an earlier fetch, and opened within the fetch (`pooled_cold`: they close
after 30 s idle).

The engine's own path, `Federation.fetch_choice` (what `diamond fetch` and `%diamond fetch`
run before copying): the job directory listed over SFTP, then each result link asked where
it leads (SFTP READLINK, REALPATH, LSTAT), LINKS_AT_ONCE at a time. The site is a private
real OpenSSH sshd on 127.0.0.1 (tests/sshd_helper.py; no test bed), reached through a
proxy in this process (`common.DelayProxy`) that holds each chunk `rtt/2` in each
direction (this machine's kernel has no netem), so a round trip costs what it would to a
cluster that far away.
The engines run in the same process against the same directory, one after another in a
shuffled order each round; each round's ratio is the one-channel engine's time over a
pooled one's, and all must name every link alike.

With `--tree deep` the job directory also holds 4 subdirectories, each with 4 of its own,
a file in each (20 more result files): the listing then asks 21 directories, a level at a
time on the pool's channels (one after another on one channel).

    python -m benchmarks.fetch_links --json [--links 48 --rtt-ms 0 --rtt-ms 10 --rounds 15]
        [--tree flat --tree deep]
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

from . import common

SITE = "far"


# the job directory: results, and links inside, out of it and nowhere (a job's usual mix)
MAKE_DIR = r"""set -e
mkdir -p "$1/run" "$1/data"; cd "$1"
printf 'result\n' > result.txt; printf '1 2 3\n' > run/out.dat; : > data/x
i=0
while [ "$i" -lt "$2" ]; do
  case $((i % 4)) in
    0) ln -s run/out.dat "link$i" ;;
    1) ln -s /etc/hostname "link$i" ;;
    2) ln -s "missing$i" "link$i" ;;
    3) ln -s ../data/x "run/link$i" ;;
  esac
  i=$((i + 1))
done
"""


# the deep case's subdirectories: 4 a level, 2 levels below the job directory, a file in each
MAKE_DEEP = r"""set -e
cd "$1"
for a in d0 d1 d2 d3; do for b in e0 e1 e2 e3; do
  mkdir -p "$a/$b"; printf "$a$b" > "$a/$b/part.dat"
done; printf "$a" > "$a/sum.txt"; done
"""
DEEP_FILES = 4 + 16


def _federation(store: Path, door: dict[str, Any], channels: int) -> Any:
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    cfg = SiteConfig(name=SITE, transport=TransportConfig(**door, sftp_channels=channels))
    return Federation(FederationConfig(sites=[cfg]), store=Store(store))


async def _measure(sshd: Any, links: int, rtt_ms: float, rounds: int, warmup: int,
                   workdir: Path, tree: str = "flat") -> dict[str, Any]:
    from diamond_jupyter.federation import LINKS_AT_ONCE
    from diamond_jupyter.model import JobSpec

    proxy, door = common.delayed_door(sshd, rtt_ms, workdir)
    run = f"{tree}-{rtt_ms}"  # a store of its own: each run's jobs name its own directory
    engines = {"one_channel": _federation(workdir / f"one-{run}.sqlite", door, 1),
               "pooled": _federation(workdir / f"pool-{run}.sqlite", door, 4),
               "pooled_cold": _federation(workdir / f"cold-{run}.sqlite", door, 4)}
    t = engines["pooled"].sites[SITE].transport
    home = (await t.run(["sh", "-c", 'printf %s "$HOME"'], check=True)).stdout
    wd = f"{home}/.diamond-bench-links-{links}-{random.randrange(10**6)}"
    await t.run(["sh", "-c", MAKE_DIR, "mk", wd, str(links)], check=True)
    if tree == "deep":
        await t.run(["sh", "-c", MAKE_DEEP, "deep", wd], check=True)
    results = 3 + (DEEP_FILES if tree == "deep" else 0)
    jobs = {}
    for name, fed in engines.items():
        token = f"bench{name[:3]}{links:05d}"
        fed.store.record_intent(SITE, token, JobSpec(script="true\n", working_directory=wd))
        jobs[name] = fed.store.bind_native_id(token, "7").id
    times: dict[str, list[float]] = {n: [] for n in engines}
    ratios: dict[str, list[float]] = {"pooled": [], "pooled_cold": []}
    answers: dict[str, list[str]] = {}
    rng = random.Random(links * 1000 + int(rtt_ms))
    try:
        for r in range(warmup + rounds):
            order = list(engines)
            rng.shuffle(order)
            took = {}
            for name in order:
                if name == "pooled_cold":  # its extra channels open within the fetch
                    conn = engines[name].sites[SITE].transport._conn
                    if conn is not None and conn.sftp is not None:
                        conn.sftp.shed()
                t0 = time.perf_counter()
                _, chosen, skipped = await engines[name].fetch_choice(
                    jobs[name], workdir / f"dest-{name}")
                took[name] = time.perf_counter() - t0
                answers[name] = sorted(skipped)
                assert len(chosen) == results, chosen  # the regular files
            if len({tuple(a) for a in answers.values()}) != 1:
                raise AssertionError("the engines named the links differently")
            if r >= warmup:
                for name in engines:
                    times[name].append(took[name])
                for name in ratios:
                    ratios[name].append(took["one_channel"] / took[name])
        channels = engines["pooled"].sites[SITE].transport.describe()["sftp_channels"]
    finally:
        await t.run(["rm", "-rf", "--", wd])
        for fed in engines.values():
            await fed.close()
        proxy.close()
    return {"links": links, "rtt_ms": rtt_ms, "tree": tree, "links_at_once": LINKS_AT_ONCE,
            "sftp_channels_pooled": channels, "skipped_lines": len(answers["pooled"]),
            "rounds": rounds,
            **{f"{n}_median_s": common.median(v) for n, v in times.items()},
            **{f"{n}_p90_s": common.pct(v, 90) for n, v in times.items()},
            "median_ratio": common.median(ratios["pooled"]),
            "median_ratio_cold": common.median(ratios["pooled_cold"]),
            **{f"{n}_s": v for n, v in times.items()}}


def main(argv: list[str] | None = None) -> None:
    p = common.parser(__doc__.splitlines()[0])
    p.add_argument("--links", type=int, action="append",
                   help="links in the job's directory (repeatable; default 12 and 48)")
    p.add_argument("--rtt-ms", type=float, action="append",
                   help="round trip added by the proxy, ms (repeatable; default 0, 10, 40)")
    p.add_argument("--tree", choices=["flat", "deep"], action="append",
                   help="the job directory: flat (2 subdirectories) or deep (21 directories "
                        "listed); repeatable; default both")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args(argv)
    runs = []
    with common.private_sshd("diamond-bench-links-") as (sshd, work):
        for tree in args.tree or ["flat", "deep"]:
            for rtt in args.rtt_ms or [0.0, 10.0, 40.0]:
                for n in args.links or [12, 48]:
                    runs.append(asyncio.run(_measure(sshd, n, rtt, args.rounds,
                                                     args.warmup, work, tree)))
    rows = [[r["tree"], r["links"], r["rtt_ms"], r["one_channel_median_s"] * 1000,
             r["pooled_median_s"] * 1000, r["median_ratio"],
             r["pooled_cold_median_s"] * 1000, r["median_ratio_cold"]] for r in runs]
    md = common.markdown_table(["tree", "links", "rtt ms", "one channel ms", "pooled ms",
                                "ratio", "pooled, extras opened ms", "ratio"], rows)

    def plot(ax: Any) -> None:
        for tree, n in sorted({(r["tree"], r["links"]) for r in runs}):
            mine = [r for r in runs if r["links"] == n and r["tree"] == tree]
            ax.plot([r["rtt_ms"] for r in mine], [r["median_ratio"] for r in mine],
                    marker="o", label=f"{tree}, {n} links")
            ax.plot([r["rtt_ms"] for r in mine], [r["median_ratio_cold"] for r in mine],
                    marker="x", ls="--", label=f"{tree}, {n} links, extra channels opened")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xlabel("round trip (ms)")
        ax.set_ylabel("one channel / pooled (median of rounds)")
        ax.legend()

    common.emit("fetch_links", args, {"runs": runs}, md, plot)


if __name__ == "__main__":
    main()
