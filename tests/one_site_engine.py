"""An engine (a real `Federation` and store) over one site a test builds (a local site whose
scheduler commands are fakes: tests/local_slurm.py and the like), and the fixtures the
lost-answer submit tests share (test_submit_answer_lost*.py); and one site's monitor alone
following one running job (`one_followed_job`).

A module takes a fixture by binding it under the name its tests ask for, e.g.
`fed = one_site_engine.answer_lost_fed`, as with tests/sweep_helpers.py; the fixture's own
`site_cfg` is the module's (the one site's SiteConfig); `lookout_fed`'s, the module's `queue`
(`lookout_queue`) and `settle_s` (`lookout_settle_s`, parametrized where a test needs
another)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from local_slurm import LocalSlurmQueue

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.journal import Journal
from diamond_jupyter.model import Event, Job, JobSpec, JobState, utcnow
from diamond_jupyter.sites import Site
from diamond_jupyter.store import Store

# sbatch's answer when the controller may have queued the job all the same
SBATCH_ANSWER_LOST = ("sbatch: error: Batch job submission failed: Socket timed out on "
                      "send/recv operation")
LOOKOUT_WAIT_S = 60  # a guard: each change the lost-answer tests wait for comes within seconds


@asynccontextmanager
async def one_followed_job(site: Site, store_path: Path, native_id: str
                           ) -> AsyncIterator[tuple[Store, Any]]:
    """A store at `store_path` holding `site`'s job `native_id` (named sim), RUNNING and
    submitted an hour ago, and the site's monitor following it, polling only when a test
    asks (`poll_once`); the journal stopped after."""
    store = Store(store_path)
    job_id = f"{site.name}:{native_id}"
    store.upsert_job(Job(id=job_id, site=site.name, native_id=native_id, name="sim",
                         submitted_at=utcnow() - timedelta(hours=1)))
    store.apply_state(job_id, JobState.RUNNING)
    journal = Journal(store, {site.name: site}, poll_interval_s=3600, min_poll_s=3600)
    monitor = journal.monitors[site.name]
    try:
        monitor.track(store.get_job(job_id))
        yield store, monitor
    finally:
        await journal.stop()


def one_site_federation(tmp_path: Path, site: SiteConfig | dict[str, Any],
                        **engine: Any) -> Federation:
    """An engine over `site` alone: its sites file and store in `tmp_path`; `engine`, the
    Federation's own settings (poll intervals, settle time ...)."""
    sites = tmp_path / "sites.yaml"
    entry = site.model_dump(mode="json") if isinstance(site, SiteConfig) else site
    sites.write_text(yaml.safe_dump({"sites": [entry]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite"), **engine)


def local_home_federation(tmp_path: Path, home: str = "home",
                          scheduler: str = "slurm") -> Federation:
    """An engine of one site, `here`, a `scheduler` site on the local transport, its
    commands run in tmp_path/HOME (made here; never the real home) and its work directory
    HOME/.diamond; its store in tmp_path."""
    from diamond_jupyter.config import FederationConfig, TransportConfig
    from diamond_jupyter.sites import Site
    from diamond_jupyter.transports.local import LocalTransport

    root = tmp_path / home
    root.mkdir(exist_ok=True)
    cfg = SiteConfig(name="here", scheduler=scheduler, transport=TransportConfig(kind="local"),
                     workdir=str(root / ".diamond"))
    fed = Federation(FederationConfig(sites=[cfg]), store=Store(tmp_path / "store.sqlite"))
    fed.sites["here"] = Site(cfg, transport=LocalTransport("here", workdir=str(root)))
    fed.monitors["here"].site = fed.sites["here"]
    return fed


@pytest.fixture
async def answer_lost_fed(tmp_path, site_cfg):
    """An engine over the module's `site_cfg` that never polls on its own, and closes a
    submit whose answer was lost as never submitted after 0.5 s."""
    fed = one_site_federation(tmp_path, site_cfg, poll_interval_s=3600, min_poll_s=3600,
                              unsure_submit_settle_s=0.5)
    yield fed
    await fed.close()


@pytest.fixture
def lookout_queue(tmp_path) -> LocalSlurmQueue:
    """The one local Slurm site whose `sbatch` and `squeue` are fakes."""
    return LocalSlurmQueue(tmp_path)


@pytest.fixture
def lookout_settle_s() -> float:
    """How long a job whose submit answer was lost is looked for."""
    return 60.0


@pytest.fixture
async def lookout_fed(tmp_path, queue, settle_s, data_dir):
    """A started engine over the module's `queue` site that never polls on its own and looks
    for a lost-answer job `settle_s` long."""
    fed = one_site_federation(tmp_path, queue.site.cfg, poll_interval_s=3600, min_poll_s=3600,
                              unsure_submit_settle_s=settle_s)
    await fed.start(recover=False)
    yield fed
    await fed.close()


def journal_waiter(fed: Federation, wait_s: float = LOOKOUT_WAIT_S
                   ) -> tuple[list[Event], Callable[[Callable[[Event], bool]], Awaitable[Event]]]:
    """Every event `fed` publishes from now on, and a wait (up to `wait_s`) for the first that
    matches a predicate."""
    seen: list[Event] = []
    changed = asyncio.Event()

    def on(ev: Event) -> None:
        seen.append(ev)
        changed.set()
    fed.journal.subscribe(on)

    async def wait(pred: Callable[[Event], bool]) -> Event:
        async def first() -> Event:
            while True:
                changed.clear()
                if found := next((ev for ev in seen if pred(ev)), None):
                    return found
                await changed.wait()
        try:
            return await asyncio.wait_for(first(), wait_s)
        except asyncio.TimeoutError:
            raise AssertionError(f"no such event within {wait_s}s; saw "
                                 f"{[(e.kind, e.job_id, e.data) for e in seen]}") from None
    return seen, wait


def lost_spec(tmp_path: Path) -> JobSpec:
    """The job the lost-answer tests submit."""
    return JobSpec(name="lost", command="true", working_directory=str(tmp_path))


def one_site_server_config(tmp_path: Path, site: SiteConfig, settle_s: float) -> dict[str, Any]:
    """The configuration of a Jupyter server whose diamond extension runs the engine over
    `site` alone (its sites file, with `unsure_submit_settle_s: settle_s`, and its store in
    `tmp_path`)."""
    from server_conftest import diamond_config

    sites = tmp_path / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [site.model_dump(mode="json")],
                                     "unsure_submit_settle_s": settle_s}))
    return diamond_config(str(sites), str(tmp_path / "store.sqlite3"))
