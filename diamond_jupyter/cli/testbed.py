"""`diamond testbed ...` subcommands (the real local Slurm federation)."""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from collections.abc import Callable

from .common import EXIT_CODES, out


def _seconds(what: str, examples: str, *, least: float | None = None, above: bool = False
             ) -> Callable[[str], float]:
    """An argparse type: a finite number of `what` seconds on the command line ("3600",
    "1.5e5"), `least` or more (above it, if `above`); argparse's own refusal ("invalid float
    value") says neither what it wanted nor that a unit is not taken, and a range checked
    after parsing was reported in another form than the rest."""
    bound = "" if least is None else f" above {least:g}" if above else f", {least:g} or more,"
    wanted = f"expected a number of {what}{bound} such as {examples}, without a unit"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or (least is not None and (
                value <= least if above else value < least)):
            raise argparse.ArgumentTypeError(f"{wanted} (got {text!r})")
        return value
    return parse


def _time_scale(text: str) -> float:
    """An argparse type: `--scale`, center seconds per real second, a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"expected a number of center seconds per real second above 0, such as 60 or 0.5 "
            f"(got {text!r})")
    return value


def _seed(text: str) -> int:
    """An argparse type: `--seed`, a whole number (argparse's "invalid int value" said not
    what it takes)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as 1 or 42 (got {text!r}); the same seed plans "
            "the same jobs") from None


def _tb_up(args: argparse.Namespace) -> int:
    from .. import testbed

    info = testbed.up()
    started = info.get("started") or []
    what = f"started {', '.join(started)}" if started else "nothing to start"
    sites = ", ".join(s["name"] if s["transport"] == "ssh" and s["scheduler"] == "slurm"
                      else f"{s['name']} ({s['scheduler']} over {s['transport']}"
                      + (f", files over {s['files']})" if s.get("files") else ")")
                      for s in info["sites"])
    left = "".join(f"\nleft out: {x['name']}: {x['why']}" for x in info.get("left_out", []))
    guarded = (f"\none-time code and certificate doors: "
               f"{', '.join(s['name'] for s in info['mfa_sites'])} in {info['mfa_config']}"
               if info.get("mfa_config") else "")
    out(args, info, f"test bed up in {info['seconds']:.2f}s ({what}); sites: {sites}{left}\n"
                     f"config: {info['config']}  (export DIAMOND_CONFIG={info['config']})"
                     f"{guarded}")
    return 0


def _tb_stop(args: argparse.Namespace) -> int:
    from .. import testbed

    info = testbed.stop_site(args.site, tuple(args.only) if args.only else None)
    out(args, info, f"stopped {', '.join(info['stopped'])}" if info["stopped"]
         else f"{info['site']}: nothing was running")
    return 0


def _tb_start(args: argparse.Namespace) -> int:
    from .. import testbed

    info = testbed.start_site(args.site, tuple(args.only) if args.only else None)
    out(args, info, f"started {', '.join(info['started'])}" if info["started"]
         else f"{info['site']}: already running")
    return 0


def _tb_down(args: argparse.Namespace) -> int:
    from .. import testbed

    info = testbed.down()
    left = info["leftovers"]
    out(args, info, f"test bed down in {info['seconds']:.2f}s" +
         (f"; LEFT BEHIND: {left}" if left else "; nothing left behind"))
    return 1 if left else 0


def _tb_status(args: argparse.Namespace) -> int:
    from .. import testbed

    st = testbed.status()
    lines = [f"test bed {'UP' if st['up'] else 'DOWN'} ({st['base']}); munged "
             f"{'running' if st['munged'] else 'stopped'}"]
    for s in st["sites"]:
        ctl, node = ("qmaster", "execd") if s.get("scheduler") == "sge" else ("slurmctld",
                                                                              "slurmd")
        nodes = sum(s[node].values())
        lines.append(f"  {s['name']:<6} {s['ip']:<12} netns={'yes' if s['netns'] else 'no'} "
                     f"{ctl}={'up' if s[ctl] else 'down'} "
                     f"{node}={nodes}/{len(s[node])} sshd={'up' if s['sshd'] else 'down'}"
                     + ("" if s.get("rest") is None else
                        f" slurmrestd={'up' if s['rest'] else 'down'}"))
    out(args, st, "\n".join(lines))
    return 0


def _tb_ssh(args: argparse.Namespace) -> int:
    from ..config import load_config
    from ..testbed import base_dir
    from ..transports import make_transport

    cmd = list(args.cmd)
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        raise SystemExit("diamond testbed ssh SITE -- CMD [ARGS...]")
    cfg = load_config(args.config or base_dir() / "sites.yaml").site(args.site)

    async def go():
        t = make_transport(cfg.transport, site=cfg.name)
        try:
            return await t.run(cmd)
        finally:
            await t.close()
    res = asyncio.run(go())
    sys.stdout.write(res.stdout)
    sys.stderr.write(res.stderr)
    return res.exit_status


def _tb_load(args: argparse.Namespace) -> int:
    from ..model import BadInput
    from ..testbed import base_dir, load

    replays = []
    if args.trace:
        jobs, plans, replays = _trace_jobs(args)
    else:
        if args.site or args.start is not None or args.partition or args.history:
            raise BadInput("--site, --start, --partition and --history go with --trace FILE "
                           "(a profile loads every site)")
        try:
            jobs = load.plan(args.profile or "busy", args.seed, args.duration, args.time_scale)
        except ValueError as e:
            raise BadInput(str(e)) from None
        plans = []
    # what reading each log changed or assumed, said with the plan and with the run
    notes = [f"{p['site']}: {n}" for p in plans for n in p["notes"]]
    if args.dry_run:
        out(args, {"jobs": load.describe(jobs), "traces": plans} if plans
             else load.describe(jobs), "\n".join(
            [f"{j.at_s:7.2f}s {j.site:<6} N={j.nodes} c={j.cpus_per_node} run={j.runtime_s}s "
             f"wall={j.walltime_min}min" + (f" after={j.after}" if j.after else "")
             + (f" think={j.think_s:g}s" if j.think_s else "")
             for j in jobs] + notes
            + ([] if jobs else ["no jobs to submit"])))
        return 0
    history = load.write_history(replays) if args.history else {}
    res = asyncio.run(load.run(str(args.config or base_dir() / "sites.yaml"), jobs))
    res |= ({"traces": plans} if plans else {}) | ({"history": history} if history else {})
    out(args, res, f"submitted {sum(res['submitted'].values())} jobs "
                    f"({res['submitted']}), {res['failed']} refused"
                    + (f", {res['released']} held their think time after their predecessor"
                       if res.get("released") else "") + "".join(f"\n{n}" for n in notes))
    return 0


def _trace_jobs(args: argparse.Namespace) -> tuple[list, list[dict], list]:
    """`--trace F --site S` pairs (one log per site) -> the jobs of every replay, in time."""
    from ..model import BadInput
    from ..testbed import trace
    from ..testbed.clusters import CLUSTERS
    from ..testbed.load import LOADED_SCHEDULERS  # replayed with sbatch or qsub

    if args.profile:
        raise BadInput("give --profile or --trace, not both")
    if len(args.site) != len(args.trace):
        raise BadInput(f"each --trace needs its --site (got {len(args.trace)} traces and "
                       f"{len(args.site)} sites)")
    if args.partition and len(args.partition) != len(args.trace):
        raise BadInput(f"give each --trace its --partition, or none (got {len(args.trace)} "
                       f"traces and {len(args.partition)} partitions; 'all' replays a whole "
                       "log)")
    known = {c.name: c for c in CLUSTERS if c.scheduler in LOADED_SCHEDULERS}
    for site in args.site:
        if site not in known:
            raise BadInput(f"unknown test-bed site {site!r} (accepted: {', '.join(known)})")
    plans = trace.plan_replays([(path, known[site]) for path, site in
                                zip(args.trace, args.site, strict=True)],
                               scale=args.time_scale, duration_s=args.duration,
                               seed=args.seed, start=args.start,
                               partitions=[None if p.strip().lower() == "all" else p
                                           for p in args.partition],
                               history_s=args.history or 0.0)
    return (sorted((j for p in plans for j in p.jobs), key=lambda j: j.at_s),
            [p.summary() for p in plans], plans)


def add_testbed_commands(sub, common) -> None:
    tb = sub.add_parser("testbed", help="the local federation of real clusters (Slurm, and "
                                         "Grid Engine on delta)",
                        epilog=EXIT_CODES)
    tsub = tb.add_subparsers(dest="tb_command", required=True)
    for name, fn, help in (("stop", _tb_stop, "stop one site's daemons (jobs are kept)"),
                           ("start", _tb_start, "start one site's stopped daemons")):
        p = tsub.add_parser(name, help=help)
        common(p)
        p.add_argument("site", help="a test-bed site: alpha, beta, gamma or delta (Grid Engine)")
        p.add_argument("--only", action="append", choices=("sshd", "slurm", "rest"),
                       help="only this part (repeatable; default: all; slurm: the "
                            "scheduler's daemons, Grid Engine's on delta; rest: slurmrestd)")
        p.set_defaults(fn=fn)
    for name, fn, help in (("up", _tb_up, "start what is not running (repairs; jobs and "
                                          "job ids survive); writes the sites file"),
                           ("down", _tb_down, "stop it and leave nothing behind"),
                           ("status", _tb_status, "what runs")):
        p = tsub.add_parser(name, help=help)
        common(p)
        p.set_defaults(fn=fn)
    p = tsub.add_parser("ssh", help="run a command on a site as the test user")
    common(p)
    p.add_argument("site", help="a test-bed site: alpha, beta, gamma or delta (Grid Engine)")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    p.set_defaults(fn=_tb_ssh)
    p = tsub.add_parser("load", help="keep the queues busy with a reproducible job stream")
    common(p)
    p.add_argument("--profile", help="a synthetic load profile for every site (default busy)")
    p.add_argument("--trace", action="append", default=[], metavar="FILE.swf[.gz]",
                   help="replay a Standard Workload Format log as --site's load (repeat the "
                        "pair for one log per site)")
    p.add_argument("--site", action="append", default=[],
                   help="the test-bed site the matching --trace loads")
    p.add_argument("--partition", action="append", default=[],
                   help="with --trace: replay only this partition of the log (SWF field 16, "
                        "a number or its name in the header), sized by its own processors; "
                        "one per --trace when given ('all': the whole log)")
    p.add_argument("--seed", type=_seed, default=1,
                   help="random seed: the profile's jobs, or the trace window and thinning")
    p.add_argument("--start", type=_seconds("log seconds", "3600 or 1.5e5"),
                   help="with --trace: the window's start, log seconds (instead of --seed)")
    p.add_argument("--duration", type=_seconds("real seconds", "60 or 1.5e3", least=0,
                                                  above=True),
                   default=60.0, help="real seconds of arrivals")
    p.add_argument("--time-scale", "--scale", type=_time_scale, default=60.0, dest="time_scale",
                   help="center seconds per real second (a trace's times are divided by it)")
    p.add_argument("--history", type=_seconds("real seconds", "600", least=0), metavar="SECONDS",
                   help="with --trace: write the log's jobs that ended in these real seconds "
                        "before the window (times --scale log seconds) into the Slurm site's "
                        "accounting in place of what it held, as if it had replayed the log that "
                        "long already")
    p.add_argument("--dry-run", action="store_true", help="print the plan only")
    p.set_defaults(fn=_tb_load)
