"""An engine (a real `Federation` and store) over one site a test builds (a local site whose
scheduler commands are fakes: tests/local_slurm.py and the like), and the fixtures the
lost-answer submit tests share (test_submit_answer_lost*.py).

A module takes a fixture by binding it under the name its tests ask for, e.g.
`fed = one_site_engine.answer_lost_fed`, as with tests/sweep_helpers.py; the fixture's own
`site_cfg` is the module's (the one site's SiteConfig)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec
from diamond_jupyter.store import Store


def one_site_federation(tmp_path: Path, site: SiteConfig | dict[str, Any],
                        **engine: Any) -> Federation:
    """An engine over `site` alone: its sites file and store in `tmp_path`; `engine`, the
    Federation's own settings (poll intervals, settle time ...)."""
    sites = tmp_path / "sites.yaml"
    entry = site.model_dump(mode="json") if isinstance(site, SiteConfig) else site
    sites.write_text(yaml.safe_dump({"sites": [entry]}))
    return Federation(sites, store=Store(tmp_path / "store.sqlite"), **engine)


@pytest.fixture
async def answer_lost_fed(tmp_path, site_cfg):
    """An engine over the module's `site_cfg` that never polls on its own, and closes a
    submit whose answer was lost as never submitted after 0.5 s."""
    fed = one_site_federation(tmp_path, site_cfg, poll_interval_s=3600, min_poll_s=3600,
                              unsure_submit_settle_s=0.5)
    yield fed
    await fed.close()


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
