"""Helpers of the browser tests of submits whose answer was lost (test_lookout_*.py): the
store and sites file such submits leave, each started as an engine starts it, that engine
then closed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from diamond_jupyter.store import Store

if TYPE_CHECKING:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import Job

SETTLE_S = 600  # the server keeps looking for the open ones all through a test
LOST = ("alpha: the scheduler's answer to the submit was lost (sbatch: error: Socket timed "
        "out on send/recv operation)")
Kept = TypeVar("Kept")


def lost_submits(tmp: Path, site: Any, names: list[str],
                 kept: Callable[[Federation, Job], Kept]) -> tuple[Path, Path, list[str],
                                                                  list[Kept]]:
    """The sites file (the one `site`, settle time SETTLE_S), the store, and the tokens of
    submits to alpha whose answer was lost, one for each of `names`, each started as the
    engine starts it (`Federation.start_looking_for`); with what `kept` takes of each job
    while that engine is open."""
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.federation_plan import new_token
    from diamond_jupyter.model import JobSpec, SubmitUnsure

    sites = tmp / "sites.yaml"
    sites.write_text(yaml.safe_dump({"sites": [site.cfg.model_dump(mode="json")],
                                     "unsure_submit_settle_s": SETTLE_S}))
    store_path = tmp / "store.sqlite3"

    async def submitted() -> tuple[list[str], list[Kept]]:
        fed = Federation(sites, store=Store(store_path))
        tokens, taken = [], []
        try:
            for name in names:
                tokens.append(new_token())
                spec = JobSpec(name=name, command="true", working_directory=str(tmp))
                intent = fed.store.record_intent("alpha", tokens[-1], spec)
                job = fed.start_looking_for(SubmitUnsure(LOST, intent.id, SETTLE_S))
                taken.append(kept(fed, job))
        finally:
            await fed.close()
            fed.store.close()
        return tokens, taken

    with ThreadPoolExecutor(1) as pool:  # Playwright's own loop runs in this thread
        tokens, taken = pool.submit(asyncio.run, submitted()).result()
    return sites, store_path, tokens, taken


def close_as_never_submitted(store_path: Path, token: str, why: str) -> None:
    """Close the submit of `token` as never submitted, as another engine sharing the store
    does once its settle time has passed."""
    other = Store(store_path)
    try:
        other.mark_never_submitted(token, why)
    finally:
        other.close()
