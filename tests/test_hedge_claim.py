"""Hedged submission without the test bed: the claim (store), the decision rules, and the
wrapper's gate run by a real shell (the job body must run exactly once)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diamond_jupyter.federation_hedge import FORBIDDEN, NO_CHANNEL, hedge_actions, hedge_sites
from diamond_jupyter.model import BadInput, JobSpec, JobState
from diamond_jupyter.store import Store
from diamond_jupyter.wrapper import hedge_gate_file, parse_event_line, wrapper_prologue

STATES = list(JobState)


# -- the decision rules (pure) --------------------------------------------------------------

@given(st.lists(st.tuples(st.text("abcdef0123456789", min_size=6, max_size=8),
                          st.sampled_from(STATES)), min_size=1, max_size=6, unique_by=lambda
                x: x[0]), st.data())
def test_only_the_winner_ever_gets_go(copies, data):
    winner = data.draw(st.sampled_from([None, *(t for t, _ in copies)]))
    acts = hedge_actions(winner, copies)
    if winner is None:
        assert acts == []  # undecided: nobody runs, nobody is stopped
        return
    assert [a.token for a in acts if a.kind == "go"] == [winner]
    stopped = {a.token for a in acts if a.kind == "stop"}
    assert stopped == {t for t, s in copies if t != winner and not s.terminal}


def test_sites_whose_policy_forbids_hedging_are_skipped_and_named():
    chosen, skipped = hedge_sites(["gamma", "beta", "alpha"], {"beta": FORBIDDEN}, 2)
    assert chosen == ["gamma", "alpha"]
    assert "hedge: false" in skipped["beta"]
    chosen, skipped = hedge_sites(["gamma", "beta"], {"beta": FORBIDDEN, "gamma": NO_CHANNEL},
                                  2)
    assert chosen == [] and set(skipped) == {"beta", "gamma"}
    chosen, skipped = hedge_sites(["a", "b", "c", "d"], {"c": FORBIDDEN}, 2)
    assert chosen == ["a", "b"] and skipped == {}  # sites past the copies are not asked


# -- the claim in the store ------------------------------------------------------------------

def _group(store: Store, n: int, group: str = "g0123456") -> list[str]:
    store.create_hedge(group, {"sites": [f"s{i}" for i in range(n)]})
    tokens = []
    for i in range(n):
        tok = f"{i:02d}" + "ab" * 8
        store.record_intent(f"s{i}", tok, JobSpec(script="true"), hedge_group=group)
        store.bind_native_id(tok, str(100 + i))
        tokens.append(tok)
    return tokens


def test_first_claim_wins_and_later_claims_see_it(tmp_path):
    store = Store(tmp_path / "s.db")
    a, b = _group(store, 2)
    assert store.claim_hedge("g0123456", b) == (b, True)
    assert store.claim_hedge("g0123456", a) == (b, False)
    assert store.claim_hedge("g0123456", b) == (b, False)  # again: still b, not decided again
    rec = store.hedge("g0123456")
    assert rec.winner_job is not None and rec.winner_job.site == "s1"
    assert [j.site for j in rec.copies] == ["s0", "s1"]  # the placement's order
    decided = store.events_since(0, kinds=["hedge.decided"])
    assert len(decided) == 1 and decided[0].data["submission"] == b


def test_a_token_outside_the_group_cannot_claim(tmp_path):
    store = Store(tmp_path / "s.db")
    _group(store, 2)
    store.record_intent("s9", "ff" * 8, JobSpec(script="true"))
    with pytest.raises(BadInput, match="not a copy"):
        store.claim_hedge("g0123456", "ff" * 8)
    assert store.hedge("g0123456").winner is None


def _claim_in_process(path: str, group: str, token: str, go: multiprocessing.Event,
                      out: multiprocessing.Queue) -> None:
    store = Store(path)
    go.wait()
    out.put((token, store.claim_hedge(group, token)))


def test_claims_racing_from_separate_processes_have_exactly_one_winner(tmp_path):
    """Engines in different processes (server, CLI, kernels) share the store file."""
    path = tmp_path / "s.db"
    store = Store(path)
    tokens = _group(store, 4)
    ctx = multiprocessing.get_context("fork")
    go, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_claim_in_process, args=(str(path), "g0123456", t, go, out))
             for t in tokens]
    for p in procs:
        p.start()
    go.set()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(60)
    winners = {w for _, (w, _) in results}
    decided = [t for t, (_, won) in results if won]
    assert len(winners) == 1 and len(decided) == 1 and decided[0] in winners
    assert store.hedge("g0123456").winner == decided[0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 3)), min_size=1, max_size=12))
def test_any_interleaving_of_starts_seen_by_two_engines_decides_once(tmp_path_factory, seq):
    """Each (engine, copy) in `seq` is one engine seeing one copy start (a copy may be seen
    by both, or twice); the first one seen wins, for both engines, once."""
    path = tmp_path_factory.mktemp("h") / "s.db"
    engines = [Store(path), Store(path)]
    tokens = _group(engines[0], 4)
    decisions = []
    for eng, copy in seq:
        winner, won = engines[eng].claim_hedge("g0123456", tokens[copy])
        decisions.append(won)
        assert winner == tokens[seq[0][1]]
    assert decisions.count(True) == 1 and decisions[0]
    assert len(engines[1].events_since(0, kinds=["hedge.decided"])) == 1


def test_threads_claiming_at_once_have_one_winner(tmp_path):
    path = tmp_path / "s.db"
    tokens = _group(Store(path), 3)
    barrier = threading.Barrier(len(tokens))
    won: list[str] = []

    def claim(tok: str) -> None:
        store = Store(path)
        barrier.wait()
        if store.claim_hedge("g0123456", tok)[1]:
            won.append(tok)
    threads = [threading.Thread(target=claim, args=(t,)) for t in tokens]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1


def test_open_hedges_lists_undecided_and_unsettled_groups(tmp_path):
    store = Store(tmp_path / "s.db")
    a, b = _group(store, 2)
    assert [r.id for r in store.open_hedges()] == ["g0123456"]
    store.claim_hedge("g0123456", a)
    assert [r.id for r in store.open_hedges()] == ["g0123456"]  # b not ended yet
    store.apply_state("s1:101", JobState.CANCELLED, source="hedge")
    # a settle cut short here: the winner not told "go", b's cancel not finished
    assert [r.id for r in store.open_hedges()] == ["g0123456"]
    store.hedge_event("hedge.go", "g0123456", {}, "s0:100", "s0")
    assert [r.id for r in store.open_hedges()] == ["g0123456"]  # b's cancel unfinished
    store.hedge_event("hedge.cancelled", "g0123456", {}, "s1:101", "s1")
    assert store.open_hedges() == []
    store.apply_state("s0:100", JobState.COMPLETED, source="poll")
    assert store.open_hedges() == []


def test_an_ended_winner_never_told_go_leaves_no_open_group(tmp_path):
    store = Store(tmp_path / "s.db")
    a, _ = _group(store, 2)
    store.claim_hedge("g0123456", a)
    store.apply_state("s0:100", JobState.CANCELLED, source="poll")  # the user cancelled it
    store.apply_state("s1:101", JobState.CANCELLED, source="hedge")
    store.hedge_event("hedge.cancelled", "g0123456", {}, "s1:101", "s1")
    assert store.open_hedges() == []


def test_jobs_json_carries_the_hedge_group(tmp_path):
    store = Store(tmp_path / "s.db")
    _group(store, 2)
    assert {j.hedge_group for j in store.list_jobs()} == {"g0123456"}
    assert store.get_job("s0:100").model_dump(mode="json")["hedge_group"] == "g0123456"


# -- the wrapper's gate, run by a real shell ------------------------------------------------

def _copy(tmp: Path, token: str, payload_log: Path) -> tuple[subprocess.Popen, Path]:
    jd = tmp / token
    jd.mkdir()
    (jd / "secret").write_text("ab" * 32 + "\n")
    script = wrapper_prologue(str(tmp / "events.log"), token, str(jd / "secret"),
                              hedge_gate_file(str(jd)))
    script += f"echo payload {token} >> {payload_log}\n"
    proc = subprocess.Popen(["bash", "-c", script], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "SLURM_JOB_ID": token[:4]})
    return proc, jd


def _started(events: Path, n: int, timeout: float = 30.0) -> list[str]:
    """Wait for n start lines (the wrapper writes them before waiting at the gate)."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        lines = events.read_text().splitlines() if events.exists() else []
        starts = [p.token for p in map(parse_event_line, lines) if p and p.kind == "start"]
        if len(starts) >= n:
            return starts
        time.sleep(0.02)
    raise AssertionError(f"fewer than {n} copies reported their start")


def _decide(jd: Path, verdict: str, token: str) -> None:
    tmp = jd / "claim.tmp"
    tmp.write_text(f"{verdict} {token}\n")
    tmp.rename(jd / "claim")


def test_both_copies_start_but_only_the_one_told_go_runs_the_payload(tmp_path):
    log = tmp_path / "payload.log"
    (a, ja), (b, jb) = (_copy(tmp_path, t, log) for t in ("aaaa1111", "bbbb2222"))
    _started(tmp_path / "events.log", 2)  # both are waiting at their gate
    assert not log.exists()  # nothing ran before a decision
    _decide(jb, "go", "bbbb2222")
    _decide(ja, "no", "aaaa1111")
    assert b.wait(30) == 0 and a.wait(30) == 0
    assert log.read_text().splitlines() == ["payload bbbb2222"]
    assert "another copy" in a.stderr.read()
    ends = [p for p in map(parse_event_line, (tmp_path / "events.log").read_text()
                           .splitlines()) if p and p.kind == "end"]
    assert [e.token for e in ends] == ["bbbb2222"]  # the loser reports no run of its own


def test_a_go_for_another_token_is_not_a_go(tmp_path):
    log = tmp_path / "payload.log"
    a, ja = _copy(tmp_path, "aaaa1111", log)
    _started(tmp_path / "events.log", 1)
    _decide(ja, "go", "bbbb2222")  # a decision that is not this copy's own
    assert a.wait(30) == 0
    assert not log.exists()


def test_a_copy_cancelled_while_waiting_never_runs_the_payload(tmp_path):
    log = tmp_path / "payload.log"
    a, _ = _copy(tmp_path, "aaaa1111", log)
    _started(tmp_path / "events.log", 1)
    a.terminate()  # what scancel does to a running copy
    assert a.wait(30) == 143
    assert not log.exists()
    ends = [p for p in map(parse_event_line, (tmp_path / "events.log").read_text()
                           .splitlines()) if p and p.kind == "end"]
    assert [e.rc for e in ends] == [143]
