"""`diamond sites|queue|place|submit|status|wait|cancel|logs|fetch|jobs|translate|transfer`:
the subcommands about jobs and data. Every one calls the Federation facade."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from collections.abc import Callable
from typing import Any

from ..model import (
    BadInput,
    DiamondError,
    JobState,
    SiteError,
    SubmitUnsure,
    job_json,
    one_line,
    visible,
)
from ..option_types import MAX_LISTED, count, filled, hedge_count, job_state, list_limit
from ..wording import cancel_note, more_jobs_note
from .common import (
    byte_size,
    job_line,
    out,
    read_script,
    seconds,
    site_row,
    spec_from_file,
    walltime,
    with_fed,
    with_fed_interruptible,
)

Adder = Callable[..., argparse.ArgumentParser]


def cmd_sites(args: argparse.Namespace) -> int:
    async def go(fed):
        return [site_row(s) for s in await fed.site_summaries(offline=args.offline)]
    rows = asyncio.run(with_fed(args, go))
    width = max([10, *(len(r["name"]) for r in rows)])  # a long site name keeps the columns
    text = "\n".join(f"{r['name']:<{width}} {r['scheduler']:<6} {_site_state(r)}"
                     for r in rows)
    out(args, rows, text)
    return 0


def _site_state(row: dict[str, Any]) -> str:
    if row["reachable"] is False:
        return "unreachable: " + one_line(row["error"] or "")
    if row["reachable"] is None:  # --offline: "nodes=None running=None" read as a fault
        where = f" on {row['host']}" if row.get("host") else ""
        return f"not asked (--offline){where}"
    jobs = f"running={row['running']} pending={row['pending']}" if not row.get("queue_error") \
        else "queue unknown: " + one_line(row["queue_error"])
    # partition names are the site's text (JSON over slurmrestd, PBS, LSF, Flux): one line
    return f"nodes={row['nodes']} {jobs} partitions={','.join(map(one_line, row['partitions']))}"


def cmd_queue(args: argparse.Namespace) -> int:
    snap = asyncio.run(with_fed(args, lambda fed: fed.snapshot(args.site, max_age_s=0)))
    if not snap.reachable:
        raise DiamondError(f"{args.site} unreachable: {snap.error}")
    if snap.queue_error:  # the site answered, but its queue is unknown (not empty)
        raise DiamondError(f"{args.site}: {snap.queue_error}")
    data = snap.model_dump(mode="json")
    for warning in snap.warnings:  # records of the site's outputs left out of this view
        print(f"diamond: warning: {one_line(warning)}", file=sys.stderr)
    # ids, users, partitions and names are the scheduler's and other users' text: each cell
    # on its line, with what is invisible or reorders text written out
    lines = [f"{one_line(j.native_id):>10} {j.state.value:<9} {one_line(j.user or ''):<10} "
             f"{one_line(j.partition or ''):<8} nodes={j.nodes} {one_line(j.name or '')}"
             for j in snap.jobs]
    out(args, data, "\n".join(lines) or f"{args.site}: queue is empty")
    return 0


def _needs(args: argparse.Namespace) -> dict[str, Any]:
    """The options that state what the job needs beyond what its script says (the magic's
    `%%diamond submit` options, under the same names)."""
    return {"arch": args.arch, "software": args.software, "container": args.container,
            "gpu_type": args.gpu_type, "memory": args.memory, "nodes": args.nodes,
            "walltime_s": args.time, "gpus_per_node": args.gpus, "queue": args.partition}


def add_need_options(p: argparse.ArgumentParser) -> None:
    # as `%%diamond submit` takes them (`--time 90` was read as --timeout, a prefix of it)
    p.add_argument("--nodes", type=count(1), help="number of nodes")
    p.add_argument("--time", type=walltime, metavar="TIME",
                   help="time limit, as sbatch --time: minutes (90), H:M:S (1:30:00), "
                        "D-H[:M[:S]]")
    p.add_argument("--gpus", type=count(0), metavar="N", help="GPUs per node")
    p.add_argument("--partition", type=filled("a partition or queue name"),
                   help="the site's partition or queue")
    p.add_argument("--arch", type=filled("an architecture"),
                   help="CPU architecture the job needs (x86_64, aarch64, ...)")
    p.add_argument("--software", action="append", metavar="NAME[/VERSION]",
                   type=filled("NAME or NAME/VERSION"),
                   help="software the job needs, as any site names it (repeat, or "
                        "comma-separated); the script's `module load` lines count too")
    p.add_argument("--container", metavar="IMAGE", type=filled("an image"),
                   help="run the job's body in this container image (with the site's runtime)")
    p.add_argument("--gpu-type", type=filled("a GPU model"),
                   help="GPU model the job needs (e.g. a100)")
    p.add_argument("--memory", "--mem", type=filled("a size such as 4G"),
                   help="memory per node (e.g. 64G; --mem as sbatch)")


def cmd_place(args: argparse.Namespace) -> int:
    spec = spec_from_file(args.file, args.dialect, overrides=_needs(args), command="place")
    pl = asyncio.run(with_fed(args, lambda fed: fed.place(spec, policy=args.policy)))
    out(args, pl.model_dump(mode="json"), pl.explain() if args.explain else
           (pl.choice or "no site can run this job\n" + pl.explain()))
    if pl.choice:
        return 0
    # exit 2 (every site refused the job) or 1 (a site may yet run it), with the reason on
    # stderr as every other failure: `place --explain` ended 1 without a word
    from ..federation import Federation

    refusal = pl.no_choice()  # a site's words: its secrets ***
    print(visible(f"diamond: {one_line(Federation.error_said(refusal))}"), file=sys.stderr)
    return refusal.exit_code


def cmd_submit(args: argparse.Namespace) -> int:
    spec = spec_from_file(args.file, args.dialect, name=args.name, overrides=_needs(args))

    async def go(fed):
        _site_holding_a_partition(args, [c["name"] for c in fed.site_configs()])
        try:
            job = await fed.submit(spec, args.site, hold=args.hold, force=args.force,
                                   hedge=args.hedge)
        except SubmitUnsure as e:  # the scheduler may have the job: look for it here
            job = await _find_lost_submit(args, fed, e)
        args.started = job.id  # what a Ctrl-C from here on names
        if job.hedge_group:  # the copy that started first, once one has (the others end)
            job = await fed.hedge_winner(job.hedge_group)
        else:  # as submitted, with the start predicted on a site given by name
            job = job.model_copy(update={"placement": (await fed.predicted(job.id)).placement})
        # each module or name changed, each directive the site's dialect could not carry
        # (a PBS script sent to a Slurm site said nothing of what it lost)
        for line in fed.submit_notes(job.id):
            print(f"diamond: {visible(line)}", file=sys.stderr)
        if args.wait:  # then as it ended
            job = await fed.wait(job.id, timeout=args.timeout, on_trouble=say_trouble)
        return job
    if args.timeout is not None and not args.wait:
        raise BadInput("--timeout is for --wait: give both, or neither")
    job = asyncio.run(with_fed(args, go, **({"min_poll_s": 1.0, "poll_interval_s": args.poll}
                                            if args.wait else {})))
    out(args, job_json(job), job.id)  # only the id: `id=$(diamond submit FILE)` composes
    return 0


def _site_holding_a_partition(args: argparse.Namespace, known: list[str]) -> None:
    """`--site alpha:gpu` (or `alpha/gpu`, PBS's `gpu@alpha`): BadInput naming the site and
    the partition, each in its own option (before, "unknown site 'alpha:gpu'")."""
    from ..config import site_and_partition

    split = site_and_partition(args.site, known)
    if split is None:
        return
    site, partition = split
    also = f" (--partition {args.partition} is given too: keep one)" \
        if args.partition and args.partition != partition else ""
    raise BadInput(visible(f"--site {args.site!r} names site {site} and partition "
                           f"{partition}: a partition goes in its own option, --site {site} "
                           f"--partition {partition}{also}"))


async def _find_lost_submit(args: argparse.Namespace, fed: Any, lost: SubmitUnsure) -> Any:
    """The job of a submit whose answer was lost, once its token finds it in the queue
    (looked for until the intent's settle time, saying so on stderr); SiteError when it did
    not show: closed as never submitted, or left open when the site could not be asked."""
    args.unsure = lost.job_id  # what a Ctrl-C from here on names
    said: list[bool] = []

    def on_look(left: float) -> None:
        if not said:
            print(f"diamond: {one_line(str(lost))}", file=sys.stderr)  # the site's words
            print(visible(f"diamond: checking for {lost.job_id} in the queue by its token "
                          f"(up to {left:.0f}s; Ctrl-C stops checking, the job is kept)"),
                  file=sys.stderr, flush=True)
            said.append(True)

    job = await fed.find_lost_submit(lost.job_id, on_look=on_look)
    if job.native_id is not None:
        print(visible(f"diamond: {job.site} had taken the job: found in its queue as "
                      f"{job.id}"), file=sys.stderr)
        return job
    if job.state.terminal:  # the settle time passed, the token found nothing
        raise SiteError(f"{job.site}: no job carrying the submit's token showed in the queue "
                        f"within {lost.settle_s:g}s: {job.id} is closed "
                        "as never submitted; nothing was submitted, so submitting it again "
                        "is safe")
    raise lost  # the site could not be asked: the intent is left open, as said


def cmd_status(args: argparse.Namespace) -> int:
    from ..job_dependencies import dependencies_json, dependency_line

    async def go(fed):
        try:
            job, trouble = await fed.status(args.job, refresh=True), None
        except SiteError as e:  # the site did not answer: the state as last seen, said so
            job, trouble = fed.job(args.job), e
        return job, fed.dependencies(job.id), trouble
    job, deps, trouble = asyncio.run(with_fed(args, go))
    # what it waits for: one line each under the job's line (none: the job's line alone)
    out(args, job_json(job) | {"depends_on": dependencies_json(deps)},
        "\n".join([job_line(job), *(f"  depends on {one_line(dependency_line(d))}"
                                     for d in deps)]))
    if trouble is None:
        return 0
    print(visible(f"diamond: {job.site} could not be asked about {job.id} ("
                  f"{' '.join(str(trouble).split())}); its state is shown as last seen"),
          file=sys.stderr)
    return 1


def say_trouble(note: str) -> None:
    """A site that stopped answering while a command waits: said once, on stderr; the
    command keeps waiting."""
    print(f"diamond: {one_line(note)} (Ctrl-C stops waiting; nothing is cancelled)",
          file=sys.stderr, flush=True)


def cmd_wait(args: argparse.Namespace) -> int:
    async def go(fed):
        return await fed.wait(args.job, timeout=args.timeout, refresh=True,
                              on_trouble=say_trouble)
    job = asyncio.run(with_fed(args, go, resume_held=True, min_poll_s=1.0,
                               poll_interval_s=args.poll))
    out(args, job_json(job), job_line(job))
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    """`diamond cancel JOB [JOB ...]`: each job cancelled in the order given (an id given
    twice once); an id that names no job, or whose site fails, is said on stderr and the
    others are still cancelled. Exit 0 when each was; else 2 when an id was bad input, 1
    when only a site failed. --json: for one id the Job (or the error's {"reason",
    "message"}); for several one object, {"cancelled": [Job ...], "failed": [{"job",
    "reason", "message"} ...]}."""
    from ..federation import Federation

    ids = list(dict.fromkeys(args.jobs))

    async def go(fed):
        done, failed = [], []
        for job_id in ids:
            try:
                before = fed.job(job_id)
                done.append((before, await fed.cancel(job_id)))
            except DiamondError as e:
                if len(ids) == 1:
                    raise
                failed.append((job_id, e))
        return done, failed
    done, failed = asyncio.run(with_fed(args, go))

    def said(text: str) -> str:  # an id typed may hold a secret of the environment
        return one_line(Federation.error_said(BadInput(text)))
    if args.json and len(ids) > 1:
        out(args, {"cancelled": [job_json(job) for _, job in done],
                   "failed": [{"job": said(job_id),
                               "reason": "bad-input" if isinstance(e, BadInput) else "failed",
                               "message": said(Federation.error_said(e))}
                              for job_id, e in failed]})
    for before, job in done:
        if not args.json or len(ids) == 1:
            out(args, job_json(job), job_line(job))
        # the line above shows the state as stored: say what the cancel did (a PENDING job
        # shown after `cancel` looked like a cancel that failed)
        note = cancel_note(job.id, job.site, before.state.value, before.state.terminal,
                           job.state.terminal)
        if note:
            print(visible(f"diamond: {note}"), file=sys.stderr)

    def shown(line: str) -> str:
        return visible(f"diamond: {said(line)}")
    for job_id, e in failed:
        print(shown(f"{job_id}: {Federation.error_said(e)}"), file=sys.stderr)
    if failed:
        bad = sum(isinstance(e, BadInput) for _, e in failed)
        print(shown(f"{len(done)} of {len(ids)} jobs cancelled; {len(failed)} not: "
                    + ", ".join(j for j, _ in failed)), file=sys.stderr)
        return 2 if bad else 1
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    async def go(fed):
        job = await fed.release(args.job)
        return job, fed.release_waiting(job.id)
    job, waiting = asyncio.run(with_fed(args, go))
    out(args, job_json(job), job_line(job))
    note = waiting or (f"release of {job.id} sent to {job.site}; it starts when "
                       f"{job.site} schedules it (`diamond status {job.id}`)")
    print(visible(f"diamond: {note}"), file=sys.stderr)
    return 0


def _write_output(stream: Any, text: str, plain: bool = False, after_return: bool = False
                  ) -> bool:
    """A job's output as it wrote it when piped or redirected (nothing lost); on a terminal,
    with its colours but no other escape sequence (it cannot move the cursor, retitle the
    window or write the clipboard) and no colour that hides text (`model._Colours`), reset
    after it; `plain`: every escape sequence written out, colours too. A carriage return
    ends its line there (a CRLF line end, a progress bar's redraws): each text it would
    have written over is shown on a line of its own, not hidden, and no line ends in a
    written-out \\x0d. `after_return`: the piece written before (of a followed log) ended
    in a carriage return, so a line feed starting this one ends that same line (a CRLF cut
    between two reads is one line end, not a blank line). Returns whether this piece, or
    with none the one before, ends in a carriage return on a terminal."""
    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        stream.write(text)
        return False
    if not text:
        return after_return
    lines = _CARRIAGE_RETURNS.sub("\n", text[1:] if after_return and text[0] == "\n"
                                  else text)
    stream.write(visible(lines, keep_colour=not plain))
    return text.endswith("\r")


_CARRIAGE_RETURNS = re.compile("\r+\n?")


def cmd_logs(args: argparse.Namespace) -> int:
    if getattr(args, "follow", False):
        return _follow_logs(args)
    if getattr(args, "stderr", False):
        raise BadInput("--stderr goes with --follow (`diamond logs JOB --follow --stderr`); "
                       "`diamond logs JOB` shows the end of both stdout and stderr")

    async def go(fed):
        logs = await fed.logs(args.job, lines=args.lines)
        return logs, fed.job(args.job)

    logs, job = asyncio.run(with_fed(args, go))
    if args.json:
        out(args, logs)
    else:
        _write_output(sys.stdout, logs["stdout"], plain=getattr(args, "plain", False))
        _write_output(sys.stderr, logs["stderr"], plain=getattr(args, "plain", False))
    for line in filter(None, logs.get("missing", "").splitlines()):
        print(f"diamond: {visible(line)}", file=sys.stderr)
    for line in filter(None, logs.get("notes", "").splitlines()):
        print(f"diamond: note: {visible(line)}", file=sys.stderr)
    if not args.json and not logs.get("missing") and not (logs["stdout"] or logs["stderr"]):
        # not a blank answer that looks like a broken command: say so, on stderr
        print(visible(f"diamond: {args.job} has written nothing to its stdout or stderr "
                      f"(yet)"), file=sys.stderr)
    if logs.get("missing") and job.state.rank < JobState.RUNNING.rank:
        # nothing to show yet is the job's state, not a failure of the site (exit 1)
        print(visible(f"diamond: {job.id} has not started ({job.state.value}): no logs to "
                      f"show yet, not an error (exit 0); `diamond wait {job.id}` waits for it"),
              file=sys.stderr)
        return 0
    return 1 if logs.get("missing") else 0


def _follow_logs(args: argparse.Namespace) -> int:
    """`logs JOB --follow`: the job's stdout (with --stderr: its stderr log) as it grows,
    until the job ends, on stdout; then its end state on stderr, exit 0 when it COMPLETED,
    else 1 (as `workflow run --wait`). Ctrl-C stops following only (130)."""
    if args.json:
        raise BadInput("--follow writes the job's output as it comes; it takes no --json "
                       "(`diamond logs JOB --json` gives the end of the logs as JSON)")
    plain = getattr(args, "plain", False)

    after_return = False  # the last piece ended in a carriage return (`_write_output`)

    def write(text: str) -> None:
        nonlocal after_return
        after_return = _write_output(sys.stdout, text, plain=plain, after_return=after_return)
        sys.stdout.flush()

    def note(line: str) -> None:
        print(f"diamond: note: {one_line(line)}", file=sys.stderr, flush=True)

    stream = "stderr" if getattr(args, "stderr", False) else "stdout"
    job = with_fed_interruptible(args, lambda fed: fed.follow_logs(
        args.job, write, on_trouble=say_trouble, on_note=note, stream=stream),
        resume_held=True,
        min_poll_s=1.0, poll_interval_s=getattr(args, "poll", 30.0))
    print(f"diamond: {visible(job_line(job))}", file=sys.stderr)
    return 0 if job.state is JobState.COMPLETED else 1


def cmd_fetch(args: argparse.Namespace) -> int:
    got = asyncio.run(with_fed(args, lambda fed: fed.fetch(
        args.job, args.dest, files=args.file, overwrite=args.overwrite,
        max_file_bytes=args.max_size)))
    data = {"dest": str(got.dest), "paths": [str(p) for p in got.paths],
            "skipped": got.skipped}
    if args.json or got.paths:
        out(args, data, "\n".join(one_line(str(p)) for p in got.paths))  # one name a line
    elif got.skipped:  # not a blank line: say so, on stderr
        print(visible(f"diamond: no files written to {got.dest}"), file=sys.stderr)
    else:
        print(visible(f"diamond: {args.job} has no result files to fetch (yet)"),
              file=sys.stderr)
    if not args.json:  # the job's names: shown, never acted on by the terminal
        for line in got.skipped:  # a newline in a name starts no line of its own
            print(f"diamond: skipped {one_line(line)}", file=sys.stderr)
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    from ..federation import Federation
    from ..job_dependencies import dependencies_json
    from .handover import hand_over

    fed = Federation(args.config)
    states = args.state.split(",") if args.state else None
    jobs = fed.jobs(site=args.site, states=states, limit=min(args.limit + 1, MAX_LISTED))
    more = len(jobs) > args.limit
    jobs = jobs[:args.limit]
    hand_over(fed, args)
    if args.json or jobs:
        deps = fed.dependencies_of_jobs(jobs)  # one pass over them all
        out(args, [job_json(j) | {"depends_on": dependencies_json(deps[j.id])} for j in jobs],
            "\n".join(job_line(j) for j in jobs))
        if more:  # on stderr: stdout stays the list
            print(f"diamond: {more_jobs_note(args.limit, '--limit')}", file=sys.stderr)
    else:  # not a blank line: say so, on stderr (stdout stays a list of jobs, here none)
        print("diamond: no jobs" + (f" {' or '.join(states)}" if states else "")
              + (f" on {args.site}" if args.site else "") + " in the store", file=sys.stderr)
    return 0


def cmd_translate(args: argparse.Namespace) -> int:
    from ..federation import Federation

    text = read_script(args.file, "translate")
    script, warnings, spec = Federation.translate(
        text, args.to, args.from_,
        dependency_ids="target" if getattr(args, "target_job_ids", False) else "source")
    if args.json:
        out(args, spec.model_dump(mode="json"))
    else:
        sys.stdout.write(script)
    for w in warnings:
        print(visible(w), file=sys.stderr)
    return 0


def _transfer(args: argparse.Namespace) -> int:
    if args.src == "cancel":  # `diamond transfer cancel ID` (a file named cancel: ./cancel)
        return _cancel_transfer(args)
    rec = asyncio.run(with_fed(args, lambda fed: fed.transfer(
        args.src, args.dst, via=args.via, recursive=args.recursive,
        overwrite=args.overwrite, said_as={"recursive": "--recursive"})))
    data = rec.model_dump(mode="json")
    rate = rec.data.get("mb_per_s")
    out(args, data, f"{rec.state} {rec.src} -> {rec.dst} ({rec.kind}) bytes={rec.bytes} "
                     f"{rec.checksum or ''}" + (f" {rate} MB/s" if rate else "")
                     + (f"\n{one_line(rec.error)}" if rec.error else ""))
    if not args.json:  # what was left as it was (links, files not replaced): said
        for line in rec.data.get("skipped") or []:
            print(f"diamond: skipped {one_line(line)}", file=sys.stderr)
    if rec.state != "SUCCEEDED":
        print(f"diamond: transfer {rec.state.lower()}: {one_line(rec.error or '')}",
              file=sys.stderr)
        return 1
    return 0


def _cancel_transfer(args: argparse.Namespace) -> int:
    """`diamond transfer cancel ID`: 0 with the record CANCELLED; BadInput (2) for an
    unknown id or a transfer that had ended otherwise, saying how it ended."""
    copy_only = [o for o, given in (("--via", args.via), ("--recursive", args.recursive),
                                    ("--overwrite", args.overwrite)) if given]
    if copy_only:
        raise BadInput(f"transfer cancel ID takes no {', '.join(copy_only)} (options of a "
                       "copy); to copy a local file named cancel, write ./cancel")
    try:
        rec = asyncio.run(with_fed(args, lambda fed: fed.cancel_transfer(args.dst)))
    except BadInput as e:
        if str(e).startswith("unknown transfer"):  # perhaps a copy of a file named cancel
            raise BadInput(f"{e} (`diamond transfer cancel ID` cancels a transfer by its "
                           "id; to copy a local file named cancel, write ./cancel)") from None
        raise
    out(args, rec.model_dump(mode="json"),
        f"{rec.state} {rec.id} {rec.src} -> {rec.dst} ({rec.kind})")
    return 0


def add_job_commands(add: Adder) -> None:
    """The job subcommands, each added with `add(name, fn, help)` (common options included)."""
    p = add("sites", cmd_sites, "list the sites and their live state")
    p.add_argument("--offline", action="store_true", help="configuration only, no SSH")
    job_help = "a job id, SITE:NUMBER (as printed by submit)"
    dialect_help = "the script's dialect: slurm, pbs, lsf, flux or sge (default: detected)"
    p = add("queue", cmd_queue, "a site's queue")
    p.add_argument("site", help="a site name from the sites file")
    p = add("place", cmd_place, "rank the sites for a job script")
    p.add_argument("file", help="a batch script (- reads it from standard input)")
    p.add_argument("--explain", action="store_true",
                   help="a table of every site: estimates, or why it cannot run the job")
    p.add_argument("--policy", default="diamond",
                   help="ranking: diamond (earliest finish, then cheapest), min_cost, "
                        "fewest_pending, first_ready, random, fixed")
    p.add_argument("--dialect", type=filled("a dialect"), help=dialect_help)
    add_need_options(p)
    p = add("submit", cmd_submit, "submit a job script; prints the job id")
    p.add_argument("file", help="a batch script (directives of any dialect, or none; - "
                   "reads it from standard input)")
    p.add_argument("--site", default="auto", help="a site name, or auto to let placement "
                   "choose (default)")
    p.add_argument("--name", type=filled("a name"),
                   help="the job's name (default: the script's, else the file's)")
    p.add_argument("--dialect", type=filled("a dialect"), help=dialect_help)
    p.add_argument("--hold", action="store_true", help="submit held; `release` starts it")
    add_need_options(p)
    p.add_argument("--force", action="store_true",
                   help="submit to the --site given even if it lacks what the job needs")
    p.add_argument("--hedge", type=hedge_count, metavar="N",
                   help="copies on the N best sites at once; the first to start runs, the "
                        "others are cancelled (waits until one starts; prints that one)")
    p.add_argument("--wait", action="store_true",
                   help="then wait until the job ends, as `diamond wait` (prints it then)")
    p.add_argument("--timeout", type=seconds, help="with --wait: give up after this many "
                   "seconds (exit 1)")
    p.add_argument("--poll", type=seconds, default=30.0,
                   help="with --wait: safety-net poll interval (s)")
    p = add("cancel", cmd_cancel, "cancel jobs")
    p.add_argument("jobs", nargs="+", metavar="JOB",
                   help=job_help + "; several cancel each (an unknown one is said, the "
                   "others still cancelled; exit 2 then). --json: one id, the job; several, "
                   '{"cancelled": [jobs], "failed": [{"job", "reason", "message"}]}')
    for name, fn, help in (("status", cmd_status, "a job's state"),
                           ("release", cmd_release, "release a job submitted with --hold "
                            "(one whose stage-in copies: once its input has arrived)")):
        add(name, fn, help).add_argument("job", help=job_help)
    p = add("wait", cmd_wait, "wait until a job ends")
    p.add_argument("job", help=job_help)
    p.add_argument("--timeout", type=seconds, help="give up after this many seconds (exit 1)")
    p.add_argument("--poll", type=seconds, default=30.0, help="safety-net poll interval (s)")
    p = add("logs", cmd_logs, "tail a job's stdout/stderr")
    p.add_argument("job", help=job_help)
    p.add_argument("--lines", type=count(1), default=100,
                   help="lines from the end (default 100)")
    p.add_argument("--plain", action="store_true",
                   help="on a terminal, write the job's colour sequences out as text too "
                   "(default: its colours are shown, none that hides text)")
    p.add_argument("--follow", "-f", action="store_true",
                   help="write the job's whole stdout, then what it adds, until the job ends "
                   "(its end state on stderr; exit 0 when COMPLETED, else 1); Ctrl-C stops "
                   "following, the job keeps running")
    p.add_argument("--stderr", action="store_true",
                   help="with --follow: follow the job's stderr log instead of its stdout "
                   "(written to stdout, so that it can be piped)")
    p.add_argument("--poll", type=seconds, default=30.0,
                   help="with --follow: safety-net poll interval of the job's state (s)")
    p = add("fetch", cmd_fetch, "copy a job's result files back")
    p.add_argument("job", help=job_help)
    p.add_argument("dest", nargs="?", help="local directory (default: ./SITE-NUMBER)")
    p.add_argument("--file", action="append", metavar="REL",
                   help="only this result file (repeatable); a hidden name (.x) is fetched "
                   "only when named so")
    p.add_argument("--overwrite", action="store_true",
                   help="replace local files no earlier fetch of this job wrote (default: "
                   "skip them, and say so)")
    p.add_argument("--max-size", type=byte_size, metavar="SIZE",
                   help="skip (and name) result files larger than this, e.g. 2G (default: "
                   "the sites file's fetch_max_file_bytes, 16G)")
    p = add("jobs", cmd_jobs, "jobs in the store")
    p.add_argument("--site", help="only this site's jobs")
    p.add_argument("--state", type=job_state,
                   help="only the jobs in these states, joined by commas (pending, running, "
                   "completed, ...)")
    p.add_argument("--limit", type=list_limit(), default=50,
                   help="at most this many (default 50)")
    p = add("translate", cmd_translate, "translate a batch script between dialects")
    p.add_argument("file", help="a batch script (- reads it from standard input)")
    p.add_argument("--to", required=True, help="target dialect: slurm, pbs, lsf, flux or sge")
    p.add_argument("--from", dest="from_", help=dialect_help)
    p.add_argument("--target-job-ids", action="store_true",
                   help="the job ids the script's dependencies name are jobs of the target's "
                   "site (else they are the source site's, and another scheduler gets none)")


def add_transfer_command(add: Adder) -> None:
    p = add("transfer", _transfer, "copy data: SITE:PATH or a server path, either side; "
            "`transfer cancel ID` cancels transfer ID")
    p.add_argument("src", help="SITE:PATH, or a path on this machine (`cancel`: cancel "
                   "transfer DST; a local file named cancel: ./cancel)")
    p.add_argument("dst", help="SITE:PATH, or a path on this machine (after `cancel`: a "
                   "transfer id)")
    p.add_argument("--via", choices=["sftp", "globus"], help="default: Globus when both sites "
                   "have a collection and you are logged in, else SFTP")
    p.add_argument("--recursive", "-r", action="store_true", help="copy a directory")
    p.add_argument("--overwrite", action="store_true",
                   help="copying into a directory, replace files no earlier copy there wrote "
                   "(default: leave them, and say so)")
