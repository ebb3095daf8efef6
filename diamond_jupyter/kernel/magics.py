"""`%diamond` / `%%diamond`: the kernel face. Every command goes through `client.Engine`
(the user's Jupyter server when it runs the diamond extension, else the engine in-process)."""

from __future__ import annotations

import argparse
import html
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class

from ..job_dependencies import dependency_line
from ..model import (
    BadInput,
    DiamondError,
    Job,
    SiteError,
    array_tasks_said,
    check_request,
    one_line,
    visible,
)
from ..option_types import (
    MAX_LISTED,
    StoreOnce,
    count,
    filled,
    hedge_count,
    job_state,
    list_limit,
    near_choice,
    pasted_dash,
    too_many_arguments,
    unknown_option,
)
from ..wording import cancel_note, more_jobs_note
from .connect import connect
from .engine import Engine
from .handle import JobHandle

RED, RESET = "\x1b[31m", "\x1b[0m"
LLM_HELP = ("diamond: no agent is configured. Set ANTHROPIC_API_KEY in the environment of the "
            "kernel (or of the Jupyter server), or configure the server's DiamondApp.llm_* "
            "traitlets (e.g. c.DiamondApp.llm_provider, c.DiamondApp.llm_model), then retry.")
USAGE = """%diamond sites | queue [SITE] | jobs [--site S] [--state S] | status JOB | cancel JOB
%diamond release JOB  (a job submitted held; one whose stage-in copies: once its input is there)
%diamond card JOB  (a live card for a job, e.g. after a kernel or server restart)
%diamond logs JOB [--lines N] | fetch JOB [DEST] [--file REL]... [--overwrite]
%diamond place [FILE] | translate --to D [FILE]
%diamond transfer SRC DST [--via sftp|globus] [-r] [--overwrite] | transfer cancel ID
%diamond submit FILE [options] | approve TASK [--plan SHA256] | reject TASK | engine
%%diamond submit [--site auto|NAME] [--hedge N] [--name N] [--nodes N] [--time HH:MM:SS] [--gpus N]
                 [--partition P] [--arch A] [--software NAME[/VERSION]]... [--container IMAGE]
                 [--gpu-type T] [--memory 64G] [--force] [--hold]
                                     (cell body: the job script, any dialect or none)
%%diamond place | translate --to D | ask [--approval ask|auto|dry-run]
%%diamond workflow  (cell body: the workflow YAML; a live DAG card) | %diamond workflow FILE
%diamond workflow --status ID | --cancel ID"""


class _HelpShown(Exception):
    """`--help` printed a command's usage: the magic is done (argparse would exit)."""


class _Parser(argparse.ArgumentParser):
    commands: list[str] = []  # the top parser's: its subcommands
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # no option read from a prefix of its name (`jobs --stat X` was `--state X`): the
        # command line refuses those too
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)  # `--site a --site b`: refused, as the CLI does
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if args is not None and (why := pasted_dash(list(args), self._option_string_actions,
                                                    every=self._subparsers is None)):
            self.error(why)
        self._given = list(args or [])
        ns, extra = super().parse_known_args(args, namespace)
        unknown = next((a for a in extra if a.startswith("-") and a != "-"), None)
        if unknown is not None and self._subparsers is None:  # the CLI's words for it
            self.error(unknown_option(unknown.split("=", 1)[0], self._option_string_actions))
        if extra and self._subparsers is None:  # `status a:1 a:2`: said as the CLI says it
            self.error(too_many_arguments(self.prog, self._positionals._group_actions, extra))
        return ns, extra

    def error(self, message: str) -> Any:  # no SystemExit inside a kernel
        if ": invalid choice: " in message:  # `%diamond sitez`: the command meant, named
            message = near_choice(message, self._actions, getattr(self, "_given", []))
        raise BadInput(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        # `%diamond submit --help` ended the cell in "SystemExit: 0" after the usage
        if status or message:
            raise BadInput(f"{self.prog}: {(message or 'failed').strip()}")
        raise _HelpShown


def walltime(text: str) -> int:
    """Any sbatch --time form (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S) -> seconds."""
    from ..federation import Federation

    return Federation.walltime_seconds(text)


def _parser() -> _Parser:
    ap = _Parser(prog="%diamond", add_help=False)
    sub = ap.add_subparsers(dest="cmd", parser_class=_Parser)
    sub.add_parser("sites")
    sub.add_parser("engine")
    sub.add_parser("help")
    sub.add_parser("queue").add_argument("site", nargs="?")
    p = sub.add_parser("jobs")
    p.add_argument("--site")
    p.add_argument("--state", type=job_state)
    p.add_argument("--limit", type=list_limit(), default=20)
    for name in ("status", "cancel", "release", "card"):
        sub.add_parser(name).add_argument("job")
    p = sub.add_parser("logs")
    p.add_argument("job")
    p.add_argument("--lines", type=count(1), default=100)
    p = sub.add_parser("fetch")
    p.add_argument("job")
    p.add_argument("dest", nargs="?")
    p.add_argument("--file", action="append")  # only this result file; names a hidden one
    p.add_argument("--overwrite", action="store_true")  # replace files no fetch of it wrote
    p = sub.add_parser("place")
    p.add_argument("file", nargs="?")
    # the command line's spelling; the magic always explains
    p.add_argument("--explain", action="store_true")
    p = sub.add_parser("translate")
    p.add_argument("file", nargs="?")
    p.add_argument("--to", required=True)
    p.add_argument("--from", dest="from_")
    p = sub.add_parser("submit")
    p.add_argument("file", nargs="?")
    p.add_argument("--site", default="auto")
    p.add_argument("--name", type=filled("a name"))
    p.add_argument("--nodes", type=count(1))
    p.add_argument("--time", type=walltime)
    p.add_argument("--gpus", type=count(0))
    p.add_argument("--partition", type=filled("a partition or queue name"))
    p.add_argument("--arch", type=filled("an architecture"))
    p.add_argument("--software", action="append", type=filled("NAME or NAME/VERSION"))
    p.add_argument("--container", type=filled("an image"))
    p.add_argument("--gpu-type", type=filled("a GPU model"))
    p.add_argument("--memory", "--mem", type=filled("a size such as 4G"))
    p.add_argument("--force", action="store_true")
    p.add_argument("--hold", action="store_true", help="submit held; `release` starts it")
    p.add_argument("--hedge", type=hedge_count, help="copies on the N best sites; the first to "
                   "start runs, the others are cancelled")
    p = sub.add_parser("transfer")
    p.add_argument("src")
    p.add_argument("dst")
    p.add_argument("--via", choices=["sftp", "globus"])
    p.add_argument("-r", "--recursive", action="store_true")
    p.add_argument("--overwrite", action="store_true", help="replace files in the "
                   "destination directory that no earlier copy there wrote")
    p = sub.add_parser("ask")
    p.add_argument("text", nargs="*")
    p.add_argument("--approval", choices=("ask", "auto", "dry-run"), default=None,
                   help="default: ask (or the server's DiamondApp.agent_approval)")
    p = sub.add_parser("workflow")
    p.add_argument("file", nargs="?")
    p.add_argument("--status", metavar="ID", help="show a workflow's card again")
    p.add_argument("--cancel", metavar="ID", help="cancel a workflow: every step's job")
    p = sub.add_parser("approve")
    p.add_argument("task")
    p.add_argument("--plan", metavar="SHA256", help="approve only while the task awaits this "
                   "plan (its card's pending plan_sha256)")
    sub.add_parser("reject").add_argument("task")
    ap.commands = list(sub.choices)
    return ap


# a command of the command line that no magic has -> the magic that does its work
MAGIC_FOR = {"wait": ("status", "its card follows the job live until it ends")}


def unknown_command(given: str, commands: list[str]) -> str:
    """`%diamond wait`: no such magic, with the nearest one and the ones there are."""
    import difflib

    near, why = MAGIC_FOR.get(given, (None, ""))
    near = near or next(iter(difflib.get_close_matches(given, commands, n=1, cutoff=0.6)), None)
    hint = f" (did you mean %diamond {near}?{f' {why}' if why else ''})" if near else ""
    return (f"no command {given!r}{hint}; the commands: {', '.join(commands)} "
            "(`%diamond help` shows each)")


class Table:
    """Rows shown as an HTML table in a notebook and aligned text in a terminal."""

    def __init__(self, columns: list[str], rows: list[list[Any]], empty: str = "",
                 note: str = "") -> None:
        self.columns, self.empty, self.note = columns, empty, one_line(note)
        # names and reasons come from schedulers: shown, never acted on by a terminal
        # (one line per row: a tab or newline in a cell is written out too)
        self.rows = [["" if c is None else one_line(str(c)) for c in r] for r in rows]

    def __repr__(self) -> str:
        if not self.rows:
            return self.empty
        w = [max(len(r[i]) for r in [self.columns, *self.rows]) for i in range(len(self.columns))]
        return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip()
                         for r in [self.columns, *self.rows]) \
            + (f"\n({self.note})" if self.note else "")

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<i>{html.escape(self.empty)}</i>"
        e = html.escape
        head = "".join(f"<th>{e(c)}</th>" for c in self.columns)
        body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>"
                       for r in self.rows)
        foot = f"<caption style='caption-side:bottom'>{e(self.note)}</caption>" \
            if self.note else ""
        return f"<table>{foot}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _when(t: Any) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") if t else ""


def jobs_table(jobs: list[Job], limit: int | None = None) -> Table:
    """The jobs as a table; `limit`: the most asked for, when `jobs` holds one more (the
    store holds more than shown): the rows stop there, a note says so."""
    more = limit is not None and len(jobs) > limit
    jobs = jobs[:limit] if more else jobs
    rows = [[j.id, j.state.value, j.exit_code, j.name, _when(j.submitted_at),
             (j.origin or {}).get("path"),
             "; ".join(w for w in (j.reason, array_tasks_said(j)) if w)] for j in jobs]
    return Table(["JOB", "STATE", "EXIT", "NAME", "SUBMITTED", "NOTEBOOK", "REASON"], rows,
                 "no jobs", more_jobs_note(len(jobs), "--limit") if more else "")


@magics_class
class DiamondMagics(Magics):
    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._engine: Engine | None = None
        self.handles: dict[str, JobHandle] = {}

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = connect()
        return self._engine

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def call(self, coro: Any) -> Any:
        return self.engine.call(coro)

    @line_cell_magic
    def diamond(self, line: str, cell: str | None = None) -> Any:
        """Run HPC jobs across the configured sites. `%diamond help` lists the commands."""
        try:
            words, parser = shlex.split(line), _parser()
            if words and not words[0].startswith("-") and words[0] not in parser.commands:
                raise BadInput(f"%diamond: {unknown_command(words[0], parser.commands)}")
            args = parser.parse_args(words)
            if args.cmd in (None, "help"):
                print(USAGE)
                return None
            return getattr(self, "do_" + args.cmd)(args, cell)
        except _HelpShown:
            pass
        except DiamondError as e:  # bad input or a site's words: shown as every face does
            from ..federation import Federation

            _error(Federation.error_said(e))
        except ValueError as e:  # shlex: unbalanced quotes
            _error(f"cannot parse {line!r}: {e}")
        return None

    # -- helpers ------------------------------------------------------------------------------
    def handle(self, job: Job) -> JobHandle:
        h = self.handles.get(job.id)
        if h is None:
            h = self.handles[job.id] = JobHandle(self.engine, job)
        else:
            h._on_job(job)
        return h.follow()

    def text(self, args: argparse.Namespace, cell: str | None, what: str) -> str:
        if cell is not None and cell.strip():
            if getattr(args, "file", None):  # the FILE was passed over without a word
                raise BadInput(f"{what}: FILE {args.file!r} and a cell body both given; give "
                               f"one: the FILE with %diamond {what}, or the script as the "
                               "cell body without a FILE")
            return cell
        if getattr(args, "file", None):
            from ..federation import Federation

            return Federation.read_script(args.file)
        if cell is not None:  # a cell of blanks: refused where every face's script is
            return cell
        raise BadInput(f"{what}: give a FILE, or use %%diamond {what} with the script as "
                       "the cell body")

    def origin(self) -> dict[str, Any]:
        path = os.environ.get("JPY_SESSION_NAME") or self.shell.user_ns.get("__session__")
        cell_id = None
        try:
            cell_id = (self.shell.get_parent() or {}).get("metadata", {}).get("cellId")
        except Exception:  # a plain IPython shell has no parent message
            pass
        return {"path": path, "cell_id": cell_id}

    # -- commands -----------------------------------------------------------------------------
    def do_engine(self, args: argparse.Namespace, cell: str | None) -> None:
        e = self.engine
        print(f"{e.kind}: {e.note}")

    def do_sites(self, args: argparse.Namespace, cell: str | None) -> Table:
        rows = self.call(self.engine.sites())
        out = []
        for r in rows:
            reach = r.get("reachable")
            status = {True: "up", None: "?"}.get(reach, f"unreachable: {r.get('error')}")
            out.append([r.get("name"), r.get("scheduler"), status, r.get("nodes"),
                        r.get("running"), r.get("pending"), ",".join(r.get("partitions") or [])])
        return Table(["SITE", "SCHEDULER", "STATUS", "NODES", "RUNNING", "PENDING",
                      "PARTITIONS"], out, "no sites configured")

    def do_queue(self, args: argparse.Namespace, cell: str | None) -> Table:
        names = [args.site] if args.site else [r["name"] for r in self.call(self.engine.sites())]
        rows = []
        for name in names:
            snap = self.call(self.engine.snapshot(name))
            if not snap.get("reachable", True):
                raise DiamondError(f"{name} unreachable: {snap.get('error')}")
            rows += [[name, j.get("native_id"), j.get("state"), j.get("user"),
                      j.get("partition"), j.get("nodes"), j.get("name"), j.get("reason")]
                     for j in snap.get("jobs", [])]
        return Table(["SITE", "ID", "STATE", "USER", "PARTITION", "NODES", "NAME", "REASON"],
                     rows, "queue is empty")

    def do_jobs(self, args: argparse.Namespace, cell: str | None) -> Table:
        asked = min(args.limit + 1, MAX_LISTED)  # one more: whether the store holds more
        return jobs_table(self.call(self.engine.jobs(args.site, args.state, asked)), args.limit)

    def do_status(self, args: argparse.Namespace, cell: str | None) -> JobHandle:
        """The job's card, after a line for each thing it waits for (none: the card alone)."""
        job = self.call(self.engine.job(args.job, refresh=True))
        for dep in self.call(self.engine.dependencies(job.id)):
            print(visible(f"{job.id} depends on {one_line(dependency_line(dep))}"))
        return self.handle(job)

    def do_card(self, args: argparse.Namespace, cell: str | None) -> JobHandle:
        """A card that follows the job again (its handle was lost with the kernel)."""
        return self.handle(self.call(self.engine.job(args.job, refresh=True)))

    def do_cancel(self, args: argparse.Namespace, cell: str | None) -> None:
        before = self.call(self.engine.job(args.job))
        job = self.call(self.engine.cancel(args.job))
        self.handle(job)
        note = cancel_note(job.id, job.site, before.state.value, before.state.terminal,
                           job.state.terminal, look="%diamond status")
        print(f"{job.id}: {job.state.value}" + (f" ({note})" if note else ""))

    def do_release(self, args: argparse.Namespace, cell: str | None) -> None:
        job, waiting = self.call(self.engine.release(args.job))
        self.handle(job)
        print(f"{job.id}: {job.state.value} ("
              + (waiting or f"release of {job.id} sent to {job.site}") + ")")

    def do_logs(self, args: argparse.Namespace, cell: str | None) -> None:
        logs = self.call(self.engine.logs(args.job, args.lines))
        # a job's bytes: its colours shown, its other control sequences written out
        sys.stdout.write(visible(logs.get("stdout", ""), keep_colour=True))
        sys.stderr.write(visible(logs.get("stderr", ""), keep_colour=True))
        if logs.get("missing"):
            print(visible(logs["missing"]), file=sys.stderr)
        if logs.get("notes"):
            print(visible(logs["notes"]), file=sys.stderr)

    def do_fetch(self, args: argparse.Namespace, cell: str | None) -> list[Path]:
        got = self.call(self.engine.fetch(args.job, args.dest, files=args.file,
                                          overwrite=args.overwrite))
        # the names are the job's (untrusted): shown, never acted on by a terminal
        # one name a line: a newline in a name starts no line that looks like another file
        print("\n".join(one_line(p) for p in got["paths"]) or "no result files written")
        for line in got["skipped"]:
            print(f"skipped {one_line(line)}")
        return [Path(p) for p in got["paths"]]

    def do_place(self, args: argparse.Namespace, cell: str | None) -> None:
        from ..placement import Placement

        pl = Placement.model_validate(self.call(self.engine.place(self.text(args, cell,
                                                                           "place"))))
        print(visible(pl.explain()))  # sites' reasons: shown, never acted on

    def do_translate(self, args: argparse.Namespace, cell: str | None) -> None:
        script, warnings = self.call(self.engine.translate(self.text(args, cell, "translate"),
                                                           args.to, args.from_))
        sys.stdout.write(script)
        for w in warnings:
            print(visible(w), file=sys.stderr)

    def do_submit(self, args: argparse.Namespace, cell: str | None) -> JobHandle:
        text = self.text(args, cell, "submit")
        overrides = {"nodes": args.nodes, "walltime_s": args.time,
                     "gpus_per_node": args.gpus, "queue": args.partition,
                     "arch": args.arch, "software": args.software,
                     "container": args.container, "gpu_type": args.gpu_type,
                     "memory": args.memory, "force": args.force or None}
        name = args.name or (Path(args.file).stem if args.file and cell is None else None)
        hedge = {"hedge": args.hedge} if args.hedge and args.hedge > 1 else {}
        job = self.call(self.engine.submit(text, site=args.site, name=name,
                                           overrides=overrides, origin=self.origin(),
                                           hold=args.hold, **hedge))
        if (lookout := self.engine.lookout(job)) is not None:  # the submit's answer was lost
            print(f"diamond: {one_line(lookout['message'])} (the card below follows it)",
                  file=sys.stderr)
        # each directive the site's dialect could not carry, each module or name changed
        # (a PBS cell sent to a Slurm site lost its directives without a word)
        for note in self.call(self.engine.submit_notes(job.id)):
            print(f"diamond: {visible(note)}", file=sys.stderr)
        return self.handle(job)

    def do_transfer(self, args: argparse.Namespace, cell: str | None) -> dict[str, Any]:
        if args.src == "cancel":  # `%diamond transfer cancel ID` (a file named cancel: ./cancel)
            return self.cancel_transfer(args)
        rec = self.call(self.engine.transfer(args.src, args.dst, args.via, args.recursive,
                                             overwrite=args.overwrite))
        size = f"{rec.get('bytes')} bytes" if rec.get("bytes") is not None else ""
        print(visible(f"{rec['id']}: {rec['src']} -> {rec['dst']} {rec['state']} {size} "
                      f"{rec.get('checksum') or ''}".rstrip()))
        for left in (rec.get("data") or {}).get("skipped") or []:  # names the job chose
            print(f"skipped {one_line(left)}", file=sys.stderr)
        if rec.get("error"):
            raise SiteError(f"transfer {rec['id']} failed: {rec['error']}")
        return rec

    def cancel_transfer(self, args: argparse.Namespace) -> dict[str, Any]:
        if args.via or args.recursive or args.overwrite:
            raise BadInput("%diamond transfer cancel ID takes no --via, --recursive or "
                           "--overwrite (options of a copy); to copy a local file named "
                           "cancel, write ./cancel")
        rec = self.call(self.engine.cancel_transfer(args.dst))
        print(visible(f"{rec['id']}: {rec['src']} -> {rec['dst']} {rec['state']}"))
        return rec

    def do_workflow(self, args: argparse.Namespace, cell: str | None) -> Any:
        """`%%diamond workflow` (the YAML in the cell) starts a workflow and shows its live
        DAG card; `%diamond workflow FILE`; `--status ID` or `--cancel ID` for one."""
        from .workflowcard import WorkflowHandle

        if args.cancel:
            wf = self.call(self.engine.cancel_workflow(args.cancel))
        elif args.status:
            wf = self.call(self.engine.workflow(args.status))
        else:
            wf = self.call(self.engine.run_workflow(self.text(args, cell, "workflow"),
                                                    origin=self.origin()))
        return WorkflowHandle(self.engine, wf).follow()

    def do_ask(self, args: argparse.Namespace, cell: str | None) -> Any:
        text = (cell or "").strip() or " ".join(args.text)
        if not text:
            raise BadInput("ask: write the request in the cell body (%%diamond ask)")
        check_request(text)
        return self._agent("ask", text, approval=args.approval)

    def do_approve(self, args: argparse.Namespace, cell: str | None) -> Any:
        return self._agent("approve", args.task, plan_sha256=args.plan)

    def do_reject(self, args: argparse.Namespace, cell: str | None) -> Any:
        return self._agent("reject", args.task)

    def _agent(self, verb: str, arg: str, approval: str | None = None,
               plan_sha256: str | None = None) -> Any:
        """The agent is optional: without it (or an LLM) say how to configure one."""
        try:
            import diamond_jupyter.agent as agent
        except ImportError:
            agent = None
        fn = getattr(agent, verb, None) if agent is not None else None
        llm = any(os.environ.get(k) for k in ("ANTHROPIC_API_KEY", "DIAMOND_LLM_PROVIDER"))
        if fn is None or (self.engine.kind == "local" and not llm):
            print(LLM_HELP, file=sys.stderr)
            return None
        if verb == "ask":
            return fn(self.engine, arg, approval=approval, origin=self.origin())
        if verb == "approve":
            return fn(self.engine, arg, plan_sha256)
        return fn(self.engine, arg)


def _error(message: str) -> None:
    """One red line in the cell (plain when NO_COLOR is set), no traceback (a site's text in
    it shown, never acted on)."""
    message = visible(message)
    first = message.strip().splitlines()[0] if message.strip() else "error"
    more = " …" if len(message.strip().splitlines()) > 1 else ""
    red, reset = ("", "") if os.environ.get("NO_COLOR") else (RED, RESET)  # no-color.org
    print(f"{red}diamond: {first}{more}{reset}", file=sys.stderr)
    if more:  # e.g. a placement explanation: useful, so keep it, but after the red line
        print("\n".join(message.strip().splitlines()[1:]), file=sys.stderr)


_magics: DiamondMagics | None = None


def load_ipython_extension(ipython: Any) -> None:
    global _magics
    if _magics is not None and _magics.shell is not ipython:
        _magics.close()  # bound to a shell that is gone, and to the engine it connected then
        _magics = None
    if _magics is None:
        _magics = DiamondMagics(ipython)
    ipython.register_magics(_magics)


def unload_ipython_extension(ipython: Any) -> None:
    global _magics
    if _magics is not None:
        _magics.close()
        _magics = None
