"""What the scheduler-output sweeps (tests/test_outputs_unseen20.py and later) share: the
dialects' command readers set to UTC, the moment `NOW` an LSF reader takes as now, and
the small readers of their results."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest

from diamond_jupyter.dialects.flux_commands import FluxCommands
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.model import JobStatus, Node, SiteError
from diamond_jupyter.placement_fit import node_returning, node_usable

UTC = timezone.utc
NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
slurm = SlurmCommands(tz=UTC)
pbs = PbsCommands(tz=UTC)
torque = PbsCommands(flavor="torque", tz=UTC)
lsf = LsfCommands(tz=UTC, now=lambda: NOW)
flux = FluxCommands()
sge = SgeCommands(tz=UTC)


def at(*parts: int) -> datetime:
    """datetime(*parts) in UTC."""
    return datetime(*parts, tzinfo=UTC)


def epoch(*parts: int) -> int:
    """The Unix time of datetime(*parts) in UTC."""
    return int(at(*parts).timestamp())


def sge_job_xml(number: int, state: str, name: str, *, slots: int = 1, queue: str = "",
                tasks: str = "") -> str:
    """One `<job_list>` of Grid Engine's `qstat -xml` (a start time of 2026-12-06 08:00)."""
    return (f'<job_list state="running"><JB_job_number>{number}</JB_job_number>'
            f"<JAT_prio>0.5</JAT_prio><JB_name>{name}</JB_name><JB_owner>ana</JB_owner>"
            f"<state>{state}</state><JAT_start_time>2026-12-06T08:00:00</JAT_start_time>"
            f"<queue_name>{queue}</queue_name><slots>{slots}</slots>"
            + (f"<tasks>{tasks}</tasks>" if tasks else "") + "</job_list>")


def qacct(*records: list[str]) -> str:
    """`qacct -j` of RECORDS (each its lines, as `qacct_record` gives them)."""
    return "\n".join(line for r in records for line in ["=" * 62, *r])


def qacct_record(number: int, name: str, qsub: str, start: str, end: str, *rest: str
                 ) -> list[str]:
    """The lines of one `qacct -j` record of all.q on n9 (`rest`: the lines after end_time)."""
    return ["qname        all.q", "hostname     n9", "owner        ana",
            f"jobname      {name}", f"jobnumber    {number}", "taskid       undefined",
            f"qsub_time    {qsub}", f"start_time   {start}", f"end_time     {end}", *rest]


def ended(jobs: list[JobStatus]) -> list[tuple]:
    """(id, state, exit code, reason) of each record."""
    return [(j.native_id, j.state.value, j.exit_code, j.reason) for j in jobs]


def error_of(run: Callable[[], Any]) -> str:
    """The SiteError `run` raises (its text up to the sample), or a note that it raised
    none."""
    try:
        run()
    except SiteError as e:
        return str(e).split(" (got ")[0]
    return "no error"


def wrapped(n: int, *, set_: bool = True, infinite: bool = False) -> dict:
    """A number as slurmrestd v0.0.39 and later print it."""
    return {"set": set_, "infinite": infinite, "number": n}


def node_verdicts(state: str) -> tuple[bool, tuple[float, bool] | None]:
    """Whether placement takes a node in Slurm state `state` as usable, and as returning."""
    node = Node(name="n", state=state)
    return node_usable(node), node_returning(node)


def sweep_output_tests(outputs: list[tuple[str, Callable[[], Any], Any]], *, at_least: int = 20
                       ) -> tuple[Callable[..., None], Callable[[], None]]:
    """An output sweep's two tests over its OUTPUTS rows (what, read, expected): each row
    reads what it expects, and there are at least `at_least`. Assign them to module-level
    `test_*` names."""

    @pytest.mark.parametrize(("what", "run", "expected"), outputs, ids=[o[0] for o in outputs])
    def test_output_read(what: str, run: Callable[[], Any], expected: Any) -> None:
        assert run() == expected, what

    def test_the_sweep_has_enough_outputs() -> None:
        assert len(outputs) >= at_least

    return test_output_read, test_the_sweep_has_enough_outputs
