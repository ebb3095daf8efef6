"""Log tails are bounded in bytes, whatever the number of lines asked for: a progress bar
that rewrites one "line" with carriage returns made a 15 MB line that came back whole."""

from __future__ import annotations

import pytest

from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
from diamond_jupyter.federation import Federation
from diamond_jupyter.model import JobSpec
from diamond_jupyter.sites import TAIL_MAX_BYTES, last_lines
from diamond_jupyter.store import Store

BAR = "".join(f"\r[{'#' * (i % 60):<60}] {i}" for i in range(250_000))  # ~17 MB, no newline


@pytest.fixture
async def fed(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # the local site works in $HOME

    def make(**kw) -> Federation:
        cfg = FederationConfig(sites=[SiteConfig(name="here", scheduler="slurm",
                                                 transport=TransportConfig(kind="local"))],
                               **kw)
        return Federation(cfg, store=Store(tmp_path / "store.sqlite3"))
    made: list[Federation] = []
    yield lambda **kw: made.append(make(**kw)) or made[-1]
    for f in made:
        await f.close()


def record_job(f: Federation, out: str) -> str:
    spec = JobSpec(name="bar", command="true", stdout=out, stderr=out + ".err")
    f.store.record_intent("here", "tok1", spec, None, None)
    return f.store.bind_native_id("tok1", "101").id


async def test_a_15mb_progress_bar_line_comes_back_bounded(fed, tmp_path):
    f = fed()
    (tmp_path / "out.log").write_text("start\n" + BAR + "\n")
    job = record_job(f, str(tmp_path / "out.log"))
    logs = await f.logs(job, lines=1)
    assert len(logs["stdout"].encode()) <= TAIL_MAX_BYTES  # was the whole 17 MB
    assert logs["stdout"].endswith("] 249999\n")


async def test_the_bound_is_configurable(fed, tmp_path):
    f = fed(log_tail_bytes=4096)
    (tmp_path / "out.log").write_text(BAR[:100_000])
    logs = await f.logs(record_job(f, str(tmp_path / "out.log")), lines=5)
    assert 0 < len(logs["stdout"].encode()) <= 4096


async def test_short_logs_and_line_counts_are_as_before(fed, tmp_path):
    f = fed()
    (tmp_path / "out.log").write_text("".join(f"line {i}\n" for i in range(50)))
    logs = await f.logs(record_job(f, str(tmp_path / "out.log")), lines=3)
    assert logs["stdout"] == "line 47\nline 48\nline 49\n"
    # the stderr file is not there: said by its path (a pending job's: "not there yet")
    assert "stderr log" in logs["missing"] and "out.log.err" in logs["missing"]
    assert logs["stderr"] == ""


def test_last_lines_counts_like_tail():
    assert last_lines("a\nb\nc\n", 2) == "b\nc\n"
    assert last_lines("a\nb\nc", 2) == "b\nc"
    assert last_lines("", 3) == "" and last_lines("\n\n", 1) == "\n"
