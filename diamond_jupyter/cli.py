"""`diamond`: the command-line face. Every subcommand calls the Federation facade."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from .model import BadInput, DiamondError, Job, JobSpec


def _print(args: argparse.Namespace, data: Any, text: str | None = None) -> None:
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    elif text is not None:
        print(text)
    else:
        print(json.dumps(data, indent=2, default=str))


def job_json(job: Job) -> dict[str, Any]:
    return job.model_dump(mode="json", exclude={"spec"})


def job_line(job: Job) -> str:
    extra = f" exit={job.exit_code}" if job.exit_code is not None else ""
    said = job.reason and job.reason != f"exit code {job.exit_code}"
    reason = f" ({job.reason})" if said else ""
    if job.reused_by:
        reason += f" [native id reused by {job.reused_by}]"
    return f"{job.id}\t{job.state.value}{extra}\t{job.name or ''}{reason}"


def _read(path: str) -> str:
    from .federation import Federation

    return Federation.read_script(path)


def spec_from_file(path: str, dialect: str | None = None) -> JobSpec:
    """A batch script in any dialect; a script without directives is run as is."""
    from .federation import Federation

    spec = Federation.parse(_read(path), dialect)
    return spec if spec.name else spec.model_copy(update={"name": Path(path).stem})


def _federation(args: argparse.Namespace, **kw: Any):
    from .federation import Federation

    return Federation(args.config, **kw)


async def _with_fed(args: argparse.Namespace, fn, **kw: Any):
    fed = _federation(args, **kw)
    try:
        await fed.start(recover=False)
        return await fn(fed)
    finally:
        await fed.close()


# -- subcommands -------------------------------------------------------------------------------

def cmd_sites(args: argparse.Namespace) -> int:
    async def go(fed):
        snaps = await fed.snapshots() if not args.offline else {}
        rows = []
        for cfg in fed.config.sites:
            if cfg.name not in fed.sites:
                continue
            snap = snaps.get(cfg.name)
            rows.append({
                "name": cfg.name, "scheduler": cfg.scheduler, "host": cfg.transport.host,
                "reachable": snap.reachable if snap else None,
                "error": snap.error if snap else None,
                "nodes": len(snap.nodes) if snap else None,
                "partitions": [p.name for p in snap.partitions] if snap else [],
                "running": len(snap.running) if snap else None,
                "pending": len(snap.pending) if snap else None,
                "speed_factor": cfg.speed_factor, "charge_factor": cfg.charge_factor,
                "metadata": cfg.metadata,
            })
        return rows
    rows = asyncio.run(_with_fed(args, go))
    text = "\n".join(
        f"{r['name']:<10} {r['scheduler']:<6} "
        + ("unreachable: " + (r["error"] or "") if r["reachable"] is False else
           f"nodes={r['nodes']} running={r['running']} pending={r['pending']} "
           f"partitions={','.join(r['partitions'])}")
        for r in rows)
    _print(args, rows, text)
    return 0


def cmd_queue(args: argparse.Namespace) -> int:
    snap = asyncio.run(_with_fed(args, lambda fed: fed.snapshot(args.site, max_age_s=0)))
    if not snap.reachable:
        raise DiamondError(f"{args.site} unreachable: {snap.error}")
    data = snap.model_dump(mode="json")
    lines = [f"{j.native_id:>10} {j.state.value:<9} {j.user or '':<10} {j.partition or '':<8} "
             f"nodes={j.nodes} {j.name or ''}" for j in snap.jobs]
    _print(args, data, "\n".join(lines) or f"{args.site}: queue is empty")
    return 0


def cmd_place(args: argparse.Namespace) -> int:
    spec = spec_from_file(args.file, args.dialect)
    pl = asyncio.run(_with_fed(args, lambda fed: fed.place(spec, policy=args.policy)))
    _print(args, pl.model_dump(mode="json"), pl.explain() if args.explain else
           (pl.choice or "no site can run this job\n" + pl.explain()))
    return 0 if pl.choice else 2


def cmd_submit(args: argparse.Namespace) -> int:
    spec = spec_from_file(args.file, args.dialect)
    if args.name:
        spec = spec.model_copy(update={"name": args.name})
    job = asyncio.run(_with_fed(args, lambda fed: fed.submit(spec, args.site, hold=args.hold)))
    _print(args, job_json(job), job.id)  # only the id: `id=$(diamond submit FILE)` composes
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    job = asyncio.run(_with_fed(args, lambda fed: fed.status(args.job, refresh=True)))
    _print(args, job_json(job), job_line(job))
    return 0


def cmd_wait(args: argparse.Namespace) -> int:
    async def go(fed):
        await fed.status(args.job, refresh=True)
        return await fed.wait(args.job, timeout=args.timeout)
    job = asyncio.run(_with_fed(args, go, min_poll_s=1.0, poll_interval_s=args.poll))
    _print(args, job_json(job), job_line(job))
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    job = asyncio.run(_with_fed(args, lambda fed: fed.cancel(args.job)))
    _print(args, job_json(job), job_line(job))
    return 0


def cmd_logs(args: argparse.Namespace) -> int:
    logs = asyncio.run(_with_fed(args, lambda fed: fed.logs(args.job, lines=args.lines)))
    if args.json:
        _print(args, logs)
    else:
        sys.stdout.write(logs["stdout"])
        sys.stderr.write(logs["stderr"])
    for line in filter(None, logs.get("missing", "").splitlines()):
        print(f"diamond: {line}", file=sys.stderr)
    return 1 if logs.get("missing") else 0


def cmd_fetch(args: argparse.Namespace) -> int:
    paths = asyncio.run(_with_fed(args, lambda fed: fed.fetch(args.job, args.dest)))
    _print(args, [str(p) for p in paths], "\n".join(str(p) for p in paths))
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    from .federation import Federation

    fed = Federation(args.config)
    jobs = fed.jobs(site=args.site, limit=args.limit)
    _print(args, [job_json(j) for j in jobs], "\n".join(job_line(j) for j in jobs))
    return 0


def cmd_translate(args: argparse.Namespace) -> int:
    from .federation import Federation

    text = _read(args.file)
    script, warnings, spec = Federation.translate(text, args.to, args.from_)
    if args.json:
        _print(args, spec.model_dump(mode="json"))
    else:
        sys.stdout.write(script)
    for w in warnings:
        print(w, file=sys.stderr)
    return 0


# -- parser ---------------------------------------------------------------------------------

def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--config", help="sites file (else $DIAMOND_CONFIG, else the default)")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .cli_extra import add_extra_commands

    ap = argparse.ArgumentParser(prog="diamond", description=__doc__)
    ap.add_argument("--version", action="version", version=__version__)
    sub = ap.add_subparsers(dest="command", required=True)

    def add(name: str, fn, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help)
        _common(p)
        p.set_defaults(fn=fn)
        return p

    p = add("sites", cmd_sites, "list the sites and their live state")
    p.add_argument("--offline", action="store_true", help="configuration only, no SSH")
    job_help = "a job id, SITE:NUMBER (as printed by submit)"
    dialect_help = "the script's dialect: slurm, pbs, lsf or flux (default: detected)"
    p = add("queue", cmd_queue, "a site's queue")
    p.add_argument("site", help="a site name from the sites file")
    p = add("place", cmd_place, "rank the sites for a job script")
    p.add_argument("file", help="a batch script")
    p.add_argument("--explain", action="store_true",
                   help="a table of every site: estimates, or why it cannot run the job")
    p.add_argument("--policy", default="diamond",
                   help="ranking: diamond (earliest finish, then cheapest), min_cost, "
                        "fewest_pending, first_ready, random, fixed")
    p.add_argument("--dialect", help=dialect_help)
    p = add("submit", cmd_submit, "submit a job script; prints the job id")
    p.add_argument("file", help="a batch script (directives of any dialect, or none)")
    p.add_argument("--site", default="auto", help="a site name, or auto to let placement "
                   "choose (default)")
    p.add_argument("--name", help="the job's name (default: the script's, else the file's)")
    p.add_argument("--dialect", help=dialect_help)
    p.add_argument("--hold", action="store_true", help="submit held; `release` starts it")
    for name, fn, help in (("status", cmd_status, "a job's state"),
                           ("cancel", cmd_cancel, "cancel a job")):
        add(name, fn, help).add_argument("job", help=job_help)
    p = add("wait", cmd_wait, "wait until a job ends")
    p.add_argument("job", help=job_help)
    p.add_argument("--timeout", type=float, help="give up after this many seconds (exit 1)")
    p.add_argument("--poll", type=float, default=30.0, help="safety-net poll interval (s)")
    p = add("logs", cmd_logs, "tail a job's stdout/stderr")
    p.add_argument("job", help=job_help)
    p.add_argument("--lines", type=int, default=100, help="lines from the end (default 100)")
    p = add("fetch", cmd_fetch, "copy a job's result files back")
    p.add_argument("job", help=job_help)
    p.add_argument("dest", nargs="?", help="local directory (default: ./SITE-NUMBER)")
    p = add("jobs", cmd_jobs, "jobs in the store")
    p.add_argument("--site", help="only this site's jobs")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p = add("translate", cmd_translate, "translate a batch script between dialects")
    p.add_argument("file", help="a batch script")
    p.add_argument("--to", required=True, help="target dialect: slurm, pbs, lsf or flux")
    p.add_argument("--from", dest="from_", help=dialect_help)
    add_extra_commands(sub, _common)
    return ap


def _quiet_logs() -> None:
    """Failures reach the user as one line; library chatter only with DIAMOND_LOG=debug."""
    import logging
    import os

    level = os.environ.get("DIAMOND_LOG", "").upper()
    logging.basicConfig(level=getattr(logging, level, logging.CRITICAL) if level else
                        logging.CRITICAL, format="%(levelname)s %(name)s: %(message)s")


def _one_line(e: BaseException) -> str:
    """Errors are one line on stderr, whatever text a library put in them."""
    return " | ".join(part.strip() for part in str(e).splitlines() if part.strip())


def main(argv: list[str] | None = None) -> int:
    _quiet_logs()
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args) or 0
    except BadInput as e:
        print(f"diamond: {_one_line(e)}", file=sys.stderr)
        return 2
    except DiamondError as e:
        print(f"diamond: {_one_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `diamond jobs | head`: the reader left; not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        print(f"diamond: {_one_line(e)}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
