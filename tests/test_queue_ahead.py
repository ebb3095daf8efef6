"""What stood ahead of a real-log run's probes (benchmarks/queue_ahead.py): the parts of the
recorded estimates over lost rounds, the change-point cut's share of a class, and which
rounds the play-out rebuilds."""

from __future__ import annotations

from benchmarks import queue_ahead
from diamond_jupyter.calibration import RunSample


def est(start, raw, bound, model=None, **more):
    return {"start_s": start, "raw_start_s": raw, "bound_s": bound, "model_start_s": model,
            "samples": 100, "borrowed": False, **more}


def round_(k, beta, gamma, started, lost, chosen="beta", fastest="gamma"):
    return {"round": k, "estimate": {"beta": beta, "gamma": gamma}, "started_s": started,
            "choice": {"diamond": chosen}, "fastest": fastest,
            "additional_s": {"diamond": lost}}


def test_recorded_parts_say_where_the_plan_itself_was_too_soon():
    run = {"seed": 1, "max_wait_s": 240.0, "per_round": [
        # the walltime plan said 0 and nothing started: the view's, not the ratios'
        round_(0, est(0.9, 0.0, 313.0, model=0.0), est(313.5, 1739.0, 1739.0),
               {"gamma": 67.8}, 162.2),
        # the plan said 692 s, the ratios 32 s, it started after 103 s: the ratios'
        round_(1, est(32.3, 692.3, 692.3), est(185.3, 1771.3, 1771.3),
               {"beta": 103.0, "gamma": 84.1}, 22.2),
        # won, or lost to another site: not counted
        round_(2, est(1.0, 5.0, 5.0), est(50.0, 60.0, 60.0), {"beta": 1.0, "gamma": 9.0}, 0.0),
        round_(3, est(1.0, 5.0, 5.0), est(50.0, 60.0, 60.0), {"beta": 30.0}, 20.0,
               fastest="alpha")]}
    got = queue_ahead.recorded_parts([run], "beta", "gamma")
    assert got["rounds"] == 2 and got["lost_s"] == 184.4 and got["none_started"] == 1
    beta = got["beta"]
    assert beta["raw_too_soon"] == 1 and beta["raw_zero_too_soon"] == 1
    assert beta["own_jobs_moved_s"] == [0.9]
    assert beta["bound_covered"] == 2  # 313 s over a start counted at the 240 s bound
    assert got["gamma"]["raw_too_soon"] == 0 and got["gamma"]["bound_covered"] == 2
    assert queue_ahead.recorded_parts([run], "alpha", "gamma") == {"rounds": 0}


def test_a_class_cut_to_a_burst_of_short_jobs_says_how_many_are_the_windows():
    old = [RunSample(None, 1, 1200.0, 600.0 * (1 + (i * 0.618) % 1), float(i))
           for i in range(300)]  # ratios about 0.5-1.0
    burst = [RunSample(None, 1, 1200.0, 1.0, 1000.0 + i) for i in range(30)]  # 0.0008
    got = queue_ahead._class_means(old + burst, "1", window_from=1015.0)
    assert got["n"] == 330 and got["kept"] < 60 and got["kept_window"] == 15
    assert got["mean_cut"] < 0.01 < 0.5 < got["mean_uncut"]
    assert queue_ahead._class_means(old, "2-4") == {"n": 0}


def test_a_round_is_rebuilt_when_the_play_out_starts_the_probe_as_the_site_did():
    def r(recorded, playout):
        return {"recorded_start_s": recorded, "playout_start_s": playout}
    assert queue_ahead.faithful(r(205.0, 194.5), 240.0)
    assert queue_ahead.faithful(r(None, 900.0), 240.0)  # neither within the bound
    assert not queue_ahead.faithful(r(110.0, 406.5), 240.0)
    assert not queue_ahead.faithful(r(None, 182.5), 240.0)
    assert not queue_ahead.faithful(r(5.0, 60.0), 240.0)  # both within it, far apart


def test_seed_123_alpha_round_3_rebuilt_waits_behind_six_whole_machine_jobs():
    """`depth_misleads` seed 123, round 3: the run recorded alpha's walltime plan as 0 s (a
    start now, bound 0) with 6 jobs waiting; it started the probe after 56 s. Rebuilt from the
    seed (`bed_oracle`'s play-out), the six waiting jobs each ask all four nodes, two earlier
    probes hold an1 and an2, and the plan of that view starts the probe after all six: the
    scheduler did as the right view says. A view without the running probes would say 0 s."""
    from test_view_fault import planned_start_s

    from benchmarks import probe_oracle as po
    from benchmarks.bed_oracle import jobs_of
    from diamond_jupyter.testbed.load import LoadJob

    jobs = [LoadJob(at_s=j.at_s, site="alpha", nodes=j.nodes, cpus_per_node=j.slots,
                    runtime_s=j.runtime_s + 0.5, name=j.name, gpus=j.gpus,
                    walltime_min=max(1, round(j.walltime_s / 60)))
            for j in jobs_of(123, "alpha", rounds=10, interval=12.0, base_s=20.0,
                             duration_s=145.0, time_scale=150.0)]
    starts, nodes_of = po.playout(jobs, "alpha")
    probes = [i for i, j in enumerate(jobs) if j.name.startswith("probe")]
    t = jobs[probes[3]].at_s - 0.01
    view = po.rebuilt_view(jobs, "alpha", starts, nodes_of, t)
    waiting = [j for j in view.jobs if j.state.value == "PENDING"]
    assert len(waiting) == 6 and {j.nodes for j in waiting} == {4}
    assert sorted(j.name for j in view.jobs if j.state.value == "RUNNING") == ["probe1", "probe2"]
    assert starts[probes[3]] - jobs[probes[3]].at_s > 40.0  # the play-out: after the six

    # the same probe as test_view_fault's (1 node, 8 CPUs, 60 s)
    assert planned_start_s(view, now=po.NOW) > 10000.0  # after the six jobs' walltimes
    no_probes = view.model_copy(update={"jobs": [j for j in view.jobs
                                                 if not j.name.startswith("probe")]})
    assert planned_start_s(no_probes, now=po.NOW) == 0.0
