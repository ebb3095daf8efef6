"""A workflow step given a list of sites (`site: [alpha, beta]`, or `Step(site=[...])`):
`auto`, but only among those sites, for its placement, its queue-ahead move and its
`resubmit-elsewhere` retries (which go round the list again once every site of it was
tried, and say so). Refused until session 26 ("site is one site's name"). Checked like a
single site: an empty list, a site named twice, `auto` inside it or an unknown site is
refused naming the step (and its line; `diamond workflow run` exits 2). The status shows the
chosen site, as for `auto`; the plan lists the list's sites only. The engine runs on a real
store with recorded operations below it (tests/test_workflow_gate.py's)."""

from __future__ import annotations

import textwrap

import pytest
from sweep_helpers import SITES, refused
from test_workflow_gate import CHAIN, Filling, analyse_events, complete, engine_with, phase

from diamond_jupyter.cli import main
from diamond_jupyter.kernel.workflowcard import render_text
from diamond_jupyter.model import BadInput, JobState
from diamond_jupyter.workflow.model import Step, Workflow, load_workflow, parse_workflow

# -- reading and checking it ----------------------------------------------------------------

def test_a_list_of_sites_is_auto_among_them_in_a_file_and_in_python():
    wf = load_workflow("name: w\nsteps:\n  - {name: a, site: [gamma, alpha], script: ./a}\n"
                       "  - {name: b, site: beta, script: ./b}\n", sites=SITES)
    a, b = wf.step("a"), wf.step("b")
    assert (a.site, a.among, a.is_auto) == (["gamma", "alpha"], ["gamma", "alpha"], True)
    assert (b.among, b.is_auto) == (None, False)
    assert wf.step("a").model_dump()["site"] == ["gamma", "alpha"]  # stored as written
    made = Workflow(name="w", steps=[Step(name="a", script="./a", site=("beta", "alpha"))])
    assert made.check(SITES).step("a").among == ["beta", "alpha"]
    with pytest.raises(BadInput, match=r"step 'a': unknown site 'delta' in its list of sites "
                                       r"\[alpha, delta\]"):
        Workflow(name="w", steps=[Step(name="a", script="./a", site=["alpha", "delta"])]
                 ).check(SITES)


@pytest.mark.parametrize("site, why", [
    ("[]", "site: [] lists no site: name at least one ([alpha, beta]), or write auto "
           "(placement chooses among all sites)"),
    ("[alpha, beta, alpha]", "site lists 'alpha' twice: name each site once"),
    ("[alpha, auto]", "auto in a list of sites: write site: auto alone (every site), or list "
                      "only the sites placement may choose"),
    ("[alpha, 12]", "12 is a number, not text (YAML reads unquoted digits as numbers); quote "
                    "it as written, e.g. '12'"),
    ("[alpha, [beta]]", "site[1] is ['beta']: a list of sites holds site names ([alpha, "
                        "beta])"),
])
def test_a_bad_list_of_sites_is_refused_naming_the_step_and_line(site, why):
    assert refused(f"""\
        name: w
        steps:
          - name: a
            script: ./a
            site: {site}
        """) == f"the workflow: steps['a'].site: {why} (line 5)"


def test_an_unknown_site_in_the_list_is_named_with_the_one_meant():
    assert refused("""\
        name: w
        steps:
          - name: prep
            script: ./a
            site:
              - alpha
              - gamm
        """) == ("step 'prep': unknown site 'gamm' in its list of sites [alpha, gamm] (did "
                 "you mean gamma? known: alpha, beta, gamma, or auto) (line 7)")


def test_a_mapping_as_the_python_api_list_says_what_a_site_is():
    with pytest.raises(BadInput) as e:
        parse_workflow({"name": "w", "steps": [{"name": "a", "script": "./a", "site": []}]},
                       sites=SITES)
    assert "steps['a'].site: site: [] lists no site" in str(e.value)


@pytest.mark.parametrize("site, said", [
    ("[alpha, alpha]", "wf.yaml: steps['a'].site: site lists 'alpha' twice: name each "
                       "site once (line 3)"),
    ("[alpha, delta]", "step 'a': unknown site 'delta' in its list of sites [alpha, delta] "
                       "(known: alpha, beta, or auto) (line 3)"),
])
def test_workflow_run_exits_2_naming_the_step(tmp_path, capsys, site, said):
    f = tmp_path / "wf.yaml"
    f.write_text(f"name: w\nsteps:\n  - {{name: a, site: {site}, script: ./a}}\n")
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("sites:\n  - {name: alpha, transport: {kind: local}}\n"
                   "  - {name: beta, transport: {kind: local}}\n")
    code = main(["--config", str(cfg), "workflow", "run", str(f), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err


# -- the engine: placement, moves and retries stay within the list ---------------------------

@pytest.fixture
async def filling(tmp_path):
    async for pair in engine_with(Filling, tmp_path):
        yield pair


ONE = textwrap.dedent("""\
    name: listed
    steps:
      - name: analyse
        site: [alpha, torque]
        retries: 3
        on_failure: resubmit-elsewhere
        script: "#!/bin/bash\\necho analyse\\n"
    """)


async def fail_last(eng, ops, wid: str) -> None:
    job = ops.store.job_by_token(ops.of("analyse")[-1]["token"])
    ops.store.apply_state(job.id, JobState.FAILED, exit_code=1)
    await eng.advance(wid)


async def test_resubmit_elsewhere_stays_within_the_list_and_says_when_it_is_spent(filling):
    """gamma would end it first, but is not in its list: alpha, then torque (the one of the
    list not tried), then the list is spent: alpha and torque again, said in the step's
    reason and its submit event; gamma never."""
    eng, ops = filling
    ops.ends = {"gamma": 1.0, "alpha": 10.0, "torque": 20.0}
    wid = await eng.run(load_workflow(ONE, sites=["alpha", "gamma", "torque"]))
    st = eng.store.get_workflow(wid).step("analyse")
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"] and st.reason is None
    view = eng.view(wid).contract()
    assert view["steps"][0]["site"] == "alpha"  # the chosen site, as for auto
    assert "  analyse: PENDING alpha " in render_text(view)  # and on the DAG card
    await fail_last(eng, ops, wid)
    assert [s["site"] for s in ops.of("analyse")] == ["alpha", "torque"]
    assert eng.store.get_workflow(wid).step("analyse").reason == (
        "attempt 1 failed on alpha: failed (exit code 1)")  # shown while it runs again
    await fail_last(eng, ops, wid)
    assert [s["site"] for s in ops.of("analyse")] == ["alpha", "torque", "alpha"]
    spent = ("every site of its list (alpha, torque) was tried: placed among alpha, torque "
             "again")
    st = eng.store.get_workflow(wid).step("analyse")
    assert (st.site, st.attempt, st.reason) == ("alpha", 2, spent)
    assert [e.data.get("note") for e in analyse_events(ops) if "job" in e.data
            and "held" in e.data] == [None, None, spent]
    assert eng.view(wid).contract()["steps"][0]["site"] == "alpha"
    await fail_last(eng, ops, wid)
    await fail_last(eng, ops, wid)
    assert "gamma" not in {s["site"] for s in ops.of("analyse")}
    assert len(ops.of("analyse")) == 4  # retries: 3
    assert eng.view(wid).state == JobState.FAILED


async def test_a_pinned_site_with_resubmit_elsewhere_still_goes_anywhere(filling):
    """(guard) A step on one site tries the other sites on its retries, as before."""
    eng, ops = filling
    ops.ends = {"gamma": 1.0, "alpha": 10.0, "torque": 20.0}
    wid = await eng.run(load_workflow(ONE.replace("[alpha, torque]", "torque"),
                                      sites=["alpha", "gamma", "torque"]))
    await fail_last(eng, ops, wid)
    assert [s["site"] for s in ops.of("analyse")] == ["torque", "gamma"]


LISTED_CHAIN = CHAIN.replace("  - name: analyse\n", "  - name: analyse\n"
                             "    site: [alpha, torque]\n")


async def test_a_queued_ahead_step_moves_only_within_its_list(filling):
    """analyse is placed on alpha (gamma, which would end it sooner, is not in its list).
    When train ended, alpha is full: gamma would end it in 15 s, torque in 100 s, alpha in
    200 s. It moves to torque, the better of its list, not to gamma."""
    eng, ops = filling
    ops.ends = {"alpha": 10.0, "gamma": 5.0, "torque": 20.0}
    wid = await eng.run(load_workflow(LISTED_CHAIN, sites=["alpha", "gamma", "torque"]))
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"]
    await complete(eng, ops, "prep", wid)
    ops.ends = {"alpha": 200.0, "gamma": 15.0, "torque": 100.0}
    await complete(eng, ops, "train", wid)
    await phase(eng, wid, "analyse", "released")
    assert [s["site"] for s in ops.of("analyse")] == ["alpha", "torque"]
    [move] = [e.data["move"] for e in analyse_events(ops) if "move" in e.data]
    assert (move["from"], move["to"]) == ("alpha", "torque")


async def test_a_queued_ahead_step_stays_when_only_a_site_outside_its_list_is_better(
        filling):
    """(auto would move it to gamma: tests/test_workflow_gate.py)"""
    eng, ops = filling
    ops.ends = {"alpha": 10.0, "gamma": 5.0, "torque": 20.0}
    wid = await eng.run(load_workflow(LISTED_CHAIN, sites=["alpha", "gamma", "torque"]))
    await complete(eng, ops, "prep", wid)
    ops.ends = {"alpha": 200.0, "gamma": 15.0, "torque": 300.0}
    await complete(eng, ops, "train", wid)
    await phase(eng, wid, "analyse", "released")
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"]
    assert not any("move" in e.data for e in analyse_events(ops))


async def test_a_list_whose_sites_left_the_sites_file_fails_the_step_saying_so(filling):
    """A retry after the sites file lost every site of the list: the step cannot be
    placed (it is not placed on a site outside its list), and the workflow says why."""
    eng, ops = filling
    ops.ends = {"gamma": 1.0, "alpha": 10.0, "torque": 20.0}
    wid = await eng.run(load_workflow(ONE, sites=["alpha", "gamma", "torque"]))
    ops.site_names = lambda: ["gamma"]
    await fail_last(eng, ops, wid)
    assert [s["site"] for s in ops.of("analyse")] == ["alpha"]
    view = eng.view(wid)
    assert view.state == JobState.FAILED
    assert view.reason == ("step 'analyse' cannot be placed: none of its list of sites "
                           "(alpha, torque) is configured now (configured: gamma)")


# -- the plan an approval pins ------------------------------------------------------------------

async def test_the_plan_lists_only_the_sites_of_the_list_and_the_approval_pins_them(
        tmp_path, monkeypatch, capsys):
    """A step on [gamma, alpha] with resubmit-elsewhere: its plan renders its script on
    gamma and alpha only (beta is never listed, its retries included), says it is placed
    when it runs, and the approval pins those two."""
    from test_workflow_approval import _fed

    from diamond_jupyter.cli.workflow import _show_plan
    from diamond_jupyter.federation_plan import describe_plan
    from diamond_jupyter.federation_workflow import approval_pins

    fed = _fed(tmp_path, monkeypatch)
    try:
        plan = await fed.plan_workflow(textwrap.dedent("""\
            name: listed
            steps:
              - {name: prep, site: beta, script: "#!/bin/bash\\n#SBATCH -t 5\\necho p\\n"}
              - name: train
                site: [gamma, alpha]
                needs: [prep]
                retries: 2
                on_failure: resubmit-elsewhere
                script: "#!/bin/bash\\n#SBATCH -t 5\\necho t\\n"
            """))
        prep, train = plan["steps"]
        assert prep["site"] == "beta" and prep["may_run_on"] == ["beta"]
        assert train["site"] == ["gamma", "alpha"]
        assert train["may_run_on"] == ["gamma", "alpha"]
        assert [c["site"] for c in train["rendered"]] == ["gamma", "alpha"]
        assert sorted(approval_pins(plan)["steps"]["train"]) == ["alpha", "gamma"]
        text = describe_plan(plan)
        assert "step train (placed when it runs, on one of these sites; needs" in text
        assert "    on beta" not in text.split("step train", 1)[1]
        _show_plan({**plan, "workflow_id": "wf-1", "plan_sha256": "0" * 64})
        assert "step train: site [gamma, alpha], may run on gamma, alpha" in \
            capsys.readouterr().out
    finally:
        await fed.close()


async def test_the_python_api_runs_a_step_on_its_list_through_the_facade(tmp_path,
                                                                       monkeypatch):
    """`Federation.run_workflow` with a mapping (the Python API): the real operations place
    the step among gamma and beta only (placement here ranks the sites it is offered in the
    sites file's order, so alpha would win if offered) and submit it there."""
    from test_workflow_approval import _fed

    fed = _fed(tmp_path, monkeypatch)
    try:
        view = await fed.run_workflow({"name": "py", "steps": [
            {"name": "a", "site": ["gamma", "beta"],
             "script": "#!/bin/bash\n#SBATCH -t 5\necho a\n"}]}, origin={"face": "test"})
        [step] = view.steps
        assert step.site == "beta" and step.job is not None
        assert fed.job(step.job).site == "beta"
        assert view.contract()["steps"][0]["site"] == "beta"
    finally:
        await fed.close()
