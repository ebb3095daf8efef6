"""A hedged copy that lost is recorded CANCELLED ("hedged: WINNER started first") and shows
no exit code, whatever its scheduler reported (a loser told "no" exits 0 without running
the body): every face (`diamond jobs --json`, REST, the sidebar) reads the store's record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from diamond_jupyter.model import JobSpec, JobState, hedge_winner_of, job_json
from diamond_jupyter.store import Store

GROUP = "g0123456"


def _pair(store: Store) -> tuple[str, str]:
    """Two copies of one hedged submission at alpha (native 100) and beta (native 200)."""
    store.create_hedge(GROUP, {"sites": ["alpha", "beta"]})
    tokens = []
    for site, native, tok in (("alpha", "100", "aa" * 8), ("beta", "200", "bb" * 8)):
        store.record_intent(site, tok, JobSpec(script="true"), hedge_group=GROUP)
        store.bind_native_id(tok, native)
        tokens.append(tok)
    return tokens[0], tokens[1]


def _beta_wins(tmp_path: Path) -> Store:
    store = Store(tmp_path / "store.sqlite3")
    _, beta = _pair(store)
    assert store.claim_hedge(GROUP, beta) == (beta, True)
    store.apply_state("beta:200", JobState.RUNNING, source="poll")
    return store


def test_a_loser_the_scheduler_reports_completed_with_exit_0_shows_no_exit_code(tmp_path):
    store = _beta_wins(tmp_path)
    store.apply_state("alpha:100", JobState.COMPLETED, exit_code=0, source="poll")
    loser = store.get_job("alpha:100")
    assert (loser.state, loser.reason, loser.exit_code) == (
        JobState.CANCELLED, "hedged: beta:200 started first", None)
    assert hedge_winner_of(loser) == "beta:200"
    assert job_json(loser)["exit_code"] is None


def test_a_loser_recorded_cancelled_first_gains_no_exit_code_from_a_later_poll(tmp_path):
    """The engine records its cancel (no exit code); the poll that then sees the copy gone
    reports the scheduler's exit 0: a later terminal observation fills a missing exit code
    for other jobs, never for a loser."""
    store = _beta_wins(tmp_path)
    store.apply_state("alpha:100", JobState.CANCELLED, reason="hedged: beta:200 started first",
                      source="hedge")
    for state, code in ((JobState.COMPLETED, 0), (JobState.CANCELLED, 0), (JobState.FAILED, 1)):
        assert store.apply_state("alpha:100", state, exit_code=code, source="poll") is None
    assert store.get_job("alpha:100").exit_code is None


def test_the_winner_keeps_its_exit_code(tmp_path):
    store = _beta_wins(tmp_path)
    store.apply_state("beta:200", JobState.COMPLETED, exit_code=0, source="poll")
    store.apply_state("alpha:100", JobState.FAILED, exit_code=1, source="poll")
    assert (store.get_job("beta:200").state, store.get_job("beta:200").exit_code) == (
        JobState.COMPLETED, 0)
    assert store.get_job("alpha:100").exit_code is None


def test_a_loser_stored_with_an_exit_code_by_an_older_engine_is_corrected(tmp_path):
    """A store written before this rule: one loser COMPLETED with exit 0, another already
    CANCELLED but with the scheduler's exit 0. The correction clears both exit codes."""
    store = _beta_wins(tmp_path)
    with store._write() as c:
        c.execute("UPDATE jobs SET state = 'COMPLETED', exit_code = 0 WHERE id = 'alpha:100'")
    [fixed] = store.correct_losers_completed()
    assert fixed.job_id == "alpha:100" and fixed.data["state"] == "CANCELLED"
    assert store.get_job("alpha:100").exit_code is None
    with store._write() as c:
        c.execute("UPDATE jobs SET exit_code = 0 WHERE id = 'alpha:100'")
    [fixed] = store.correct_losers_completed()
    assert fixed.data["changed"] == ["exit_code"] and fixed.data["exit_code"] is None
    loser = store.get_job("alpha:100")
    assert (loser.state, loser.exit_code) == (JobState.CANCELLED, None)
    assert store.correct_losers_completed() == []  # nothing left: nothing written


def test_diamond_jobs_json_shows_the_loser_without_an_exit_code(tmp_path):
    store = _beta_wins(tmp_path)
    store.apply_state("alpha:100", JobState.COMPLETED, exit_code=0, source="poll")
    store.apply_state("beta:200", JobState.COMPLETED, exit_code=0, source="poll")
    (tmp_path / "sites.yaml").write_text(
        "sites:\n"
        "  - name: alpha\n    scheduler: slurm\n    transport: {kind: local}\n"
        "  - name: beta\n    scheduler: slurm\n    transport: {kind: local}\n"
        f"store: {tmp_path / 'store.sqlite3'}\n")
    env = {**os.environ, "DIAMOND_DATA_DIR": str(tmp_path / "data"),
           "DIAMOND_CONFIG": str(tmp_path / "sites.yaml"), "DIAMOND_HANDOVER": "0"}
    res = subprocess.run([sys.executable, "-m", "diamond_jupyter.cli", "jobs", "--json"],
                         capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    shown = {j["id"]: (j["state"], j["exit_code"]) for j in json.loads(res.stdout)}
    assert shown == {"alpha:100": ("CANCELLED", None), "beta:200": ("COMPLETED", 0)}
