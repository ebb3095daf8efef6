"""The soak benchmark's verdict (benchmarks.soak.check) on a store and scheduler records made
up here: each count finds exactly the jobs that break its rule, and none when all is well."""

from __future__ import annotations

from benchmarks.soak import Intended, check
from diamond_jupyter.model import JobState
from diamond_jupyter.store import Store


def acct(name: str, token: str, state: str, nodes: str = "an1") -> dict[str, str]:
    return {"name": name, "token": token, "state": state, "nodes": nodes, "source": "jobcomp"}


def test_each_count_catches_its_fault(tmp_path):
    path = tmp_path / "store.sqlite3"
    plan = {  # intended job -> what goes wrong with it
        0: "fine", 1: "wrong_state", 2: "no_running_event", 3: "ran_twice", 4: "unbound",
        5: "untracked", 6: "fine_cancelled_pending",
    }
    intended = [Intended(i, f"soak-x-{i:05d}", "alpha", "ok", 1.0) for i in plan]
    scheduler: dict[str, dict[str, str]] = {}
    with Store(path) as st:
        for job in intended:
            what, tok = plan[job.i], f"tok{job.i:09d}"
            st.record_intent("alpha", tok, {"name": job.name, "command": "true"})
            if what == "unbound":  # the store never learnt the job's id: not terminal
                continue
            native = str(100 + job.i)
            if what == "untracked":  # the scheduler ran it; the store closed it as never sent
                st.mark_never_submitted(tok, "the submit did not reach the scheduler")
                scheduler[native] = acct(job.name, tok, "COMPLETED")
                continue
            bound = st.bind_native_id(tok, native)
            final = "CANCELLED" if what == "fine_cancelled_pending" else "COMPLETED"
            if what not in ("no_running_event", "fine_cancelled_pending"):
                st.apply_state(bound.id, JobState.RUNNING)
            st.apply_state(bound.id, final)
            sched_state = "FAILED" if what == "wrong_state" else final
            nodes = "(null)" if what == "fine_cancelled_pending" else "an1"
            scheduler[native] = acct(job.name, tok, sched_state, nodes)
            if what == "ran_twice":
                scheduler[str(900 + job.i)] = acct(job.name, tok, "COMPLETED")
    found = check(intended, path, {"alpha": scheduler})

    def names(key: str) -> list[str]:
        return sorted(str(x["job"]) for x in found[key])
    assert names("wrong_state") == ["alpha:101", "alpha:103"]  # state; a second scheduler id
    assert names("events_missing") == ["alpha:102"]
    assert names("duplicated") == ["soak-x-00003"]
    assert names("lost") == ["soak-x-00004", "soak-x-00005"]
    assert found["events_repeated"] == []


def test_all_well_counts_nothing(tmp_path):
    path = tmp_path / "store.sqlite3"
    job = Intended(0, "soak-y-00000", "beta", "ok", 1.0)
    with Store(path) as st:
        st.record_intent("beta", "tokyyyyyyyy0", {"name": job.name, "command": "true"})
        bound = st.bind_native_id("tokyyyyyyyy0", "7")
        st.apply_state(bound.id, JobState.RUNNING)
        st.apply_state(bound.id, JobState.COMPLETED)
    found = check([job], path, {"beta": {"7": acct(job.name, "tokyyyyyyyy0", "COMPLETED")}})
    assert all(found[k] == [] for k in ("lost", "duplicated", "wrong_state", "events_missing",
                                         "events_repeated"))
