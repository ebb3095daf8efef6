"""A workflow whose step cannot run where it may go is refused before any step runs: a step
pinned to a site that lacks what its script asks (GPUs, nodes, walltime), or an `auto` step no
configured site can run. Only a definite verdict refuses: a site whose capacity is unknown (not
answering, not probed, no nodes listed) or whose capabilities could not be read leaves the step
to its submit. Local sites with recorded snapshots (alpha: four 32-CPU nodes, no GPU, 24 h at
most, gromacs; gamma: two nodes with two GPUs each) and a fake sbatch that records each call."""

from __future__ import annotations

from typing import Any

import pytest
from test_placement import alpha, gamma

from diamond_jupyter.capabilities import from_metadata
from diamond_jupyter.model import BadInput, SiteSnapshot

WITH_GPU = "#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH --gpus=1\\necho train\\n"
PLAIN = "#!/bin/bash\\n#SBATCH -t 5\\necho prep\\n"


def _fed(tmp_path, monkeypatch, unreachable: tuple[str, ...] = (),
         no_nodes: tuple[str, ...] = (), bare: tuple[str, ...] = (),
         capabilities_read: bool = False) -> Any:
    """`unreachable` sites answer no snapshot, `no_nodes` ones one without nodes (their
    partitions kept), `bare` ones an empty one (nothing listed, as a stand-in site's);
    `capabilities_read`: discovery answered with each site's sites-file metadata (else it
    failed: placement has the file alone)."""
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    calls = tmp_path / "sbatch-calls"
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(f"#!/bin/sh\necho called >> {calls}\n"
                      f"n=$(cat {tmp_path}/n 2>/dev/null || echo 500)\n"
                      f"echo $((n + 1)) > {tmp_path}/n\necho $((n + 1))\n")
    sbatch.chmod(0o755)
    recorded = {"alpha": alpha(), "gamma": gamma()}
    sites = [SiteConfig(name=n, transport=TransportConfig(kind="local"),
                        metadata=recorded[n][0].metadata,
                        workdir=str(tmp_path / n), commands={"sbatch": str(sbatch)})
             for n in recorded]
    fed = Federation(FederationConfig(sites=sites), store=Store(tmp_path / "s.sqlite"))

    async def snapshots(*, only: Any = None, **kw: Any) -> dict[str, SiteSnapshot]:
        out = {}
        for n, (_, snap) in recorded.items():
            if only is None or n in only:
                out[n] = (SiteSnapshot(site=n, reachable=False, error="no route to host")
                          if n in unreachable else snap.model_copy(update={"nodes": []})
                          if n in no_nodes else SiteSnapshot(site=n) if n in bare else snap)
        return out

    async def capabilities(*, only: Any = None, **kw: Any) -> dict[str, Any]:
        if not capabilities_read:
            return {}
        return {n: from_metadata(n, c.metadata) for n, (c, _) in recorded.items()
                if only is None or n in only}

    async def as_given(site: str, spec: Any, caps: Any = None) -> Any:
        return spec

    monkeypatch.setattr(fed, "snapshots", snapshots)
    monkeypatch.setattr(fed, "capabilities", capabilities)
    monkeypatch.setattr(fed, "adapt_to_site", as_given)
    fed.sbatch_calls = calls
    return fed


async def refused_before_any_submit(fed: Any, text: str) -> str:
    """What `fed` (`_fed`'s) says refusing to run the workflow `text` (BadInput), having
    submitted nothing."""
    with pytest.raises(BadInput) as e:
        await fed.run_workflow(text, origin={"face": "test"})
    assert not fed.sbatch_calls.exists()
    return str(e.value)


def _prep_job(view: Any) -> str | None:
    return next(s.job for s in view.steps if s.name == "prep")


def _two_steps(train_site: str, train_script: str = WITH_GPU) -> str:
    return ("name: w\nqueue_ahead: false\nsteps:\n"
            f"  - {{name: prep, site: alpha, script: \"{PLAIN}\"}}\n"
            f"  - {{name: train, needs: [prep], site: {train_site}, "
            f"script: \"{train_script}\"}}\n")


async def test_a_later_step_pinned_to_a_site_without_gpus_refuses_the_whole_workflow(
        tmp_path, monkeypatch):
    fed = _fed(tmp_path, monkeypatch)
    try:
        with pytest.raises(BadInput) as e:
            await fed.run_workflow(_two_steps("alpha"), origin={"face": "test"})
        said = str(e.value)
        assert "step 'train' cannot run on site alpha" in said
        assert "step 'train' cannot run on site alpha (no GPUs" in said and "prep" not in said
        assert not fed.sbatch_calls.exists()  # prep was not submitted either
        assert fed.store.list_workflows() == []
    finally:
        await fed.close()


async def test_every_impossible_step_is_named_and_an_auto_step_no_site_can_run(
        tmp_path, monkeypatch):
    """train asks a GPU of alpha; big asks 9 nodes, more than either site has."""
    fed = _fed(tmp_path, monkeypatch)
    big = "#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH -N 9\\necho big\\n"
    text = _two_steps("alpha") + (
        f"  - {{name: big, needs: [prep], site: auto, script: \"{big}\"}}\n")
    try:
        said = await refused_before_any_submit(fed, text)
        assert "step 'train' cannot run on site alpha" in said
        assert "step 'big' cannot run on any of its sites" in said
        assert "alpha:" in said.split("'big'")[1] and "gamma:" in said.split("'big'")[1]
    finally:
        await fed.close()


async def test_a_gpu_step_pinned_to_the_gpu_site_or_left_auto_is_accepted(tmp_path,
                                                                          monkeypatch):
    fed = _fed(tmp_path, monkeypatch)
    try:
        for site in ("gamma", "auto"):
            view = await fed.run_workflow(_two_steps(site), origin={"face": "test"})
            assert _prep_job(view) is not None
        assert fed.sbatch_calls.read_text().count("called") == 2  # each prep, once
    finally:
        await fed.close()


async def test_an_unreachable_site_is_no_refusal(tmp_path, monkeypatch):
    """gamma cannot be read now: train pinned there may wait for it; prep runs."""
    fed = _fed(tmp_path, monkeypatch, unreachable=("gamma",))
    try:
        view = await fed.run_workflow(_two_steps("gamma"), origin={"face": "test"})
        assert _prep_job(view) is not None
        assert fed.sbatch_calls.read_text().count("called") == 1
    finally:
        await fed.close()


def test_workflow_run_exits_2_naming_the_step_its_site_and_why(tmp_path, capsys, monkeypatch):
    """`diamond workflow run FILE`: the same refusal, one line on stderr, exit 2, no sbatch."""
    from diamond_jupyter.cli import main
    from diamond_jupyter.federation import Federation

    recorded = {"alpha": alpha()[1], "gamma": gamma()[1]}

    async def snapshots(self: Any, *, only: Any = None, **kw: Any) -> dict[str, SiteSnapshot]:
        return {n: s for n, s in recorded.items() if only is None or n in only}

    async def capabilities(self: Any, **kw: Any) -> dict[str, Any]:
        return {}

    monkeypatch.setattr(Federation, "snapshots", snapshots)
    monkeypatch.setattr(Federation, "capabilities", capabilities)
    calls = tmp_path / "sbatch-calls"
    sbatch = tmp_path / "sbatch"
    sbatch.write_text(f"#!/bin/sh\necho called >> {calls}\necho 501\n")
    sbatch.chmod(0o755)
    cfg = tmp_path / "sites.yaml"
    cfg.write_text("".join(
        f"{'sites:' if n == 'alpha' else ''}\n  - {{name: {n}, transport: {{kind: local}}, "
        f"workdir: '{tmp_path / n}', commands: {{sbatch: '{sbatch}'}}}}"
        for n in recorded) + f"\nstore: '{tmp_path / 's.sqlite'}'\n")
    f = tmp_path / "wf.yaml"
    f.write_text(_two_steps("alpha"))
    code = main(["--config", str(cfg), "workflow", "run", str(f), "--json"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "step 'train' cannot run on site alpha" in err and "gpu" in err.lower()
    assert len(err.strip().splitlines()) == 1, err
    assert not calls.exists()


@pytest.mark.parametrize("how", ["no_nodes", "bare", "unreachable"])
async def test_a_site_whose_capacity_is_unknown_is_no_refusal(tmp_path, monkeypatch, how):
    """alpha answers no node list (or nothing at all, or is down): its GPU step is not
    refused before the run (its submit checks it), and prep, on alpha too, is submitted."""
    fed = _fed(tmp_path, monkeypatch, **{how: ("alpha",)})
    try:
        view = await fed.run_workflow(_two_steps("alpha"), origin={"face": "test"})
        assert _prep_job(view) is not None
        assert fed.sbatch_calls.read_text().count("called") == 1
    finally:
        await fed.close()


async def test_an_auto_step_is_refused_only_when_every_site_surely_cannot_run_it(
        tmp_path, monkeypatch):
    """big asks 9 nodes: alpha surely cannot run it; gamma lists no nodes now, so it may."""
    fed = _fed(tmp_path, monkeypatch, no_nodes=("gamma",))
    big = "#!/bin/bash\\n#SBATCH -t 5\\n#SBATCH -N 9\\necho big\\n"
    text = _two_steps("alpha", PLAIN) + (
        f"  - {{name: big, needs: [prep], site: auto, script: \"{big}\"}}\n")
    try:
        view = await fed.run_workflow(text, origin={"face": "test"})
        assert _prep_job(view) is not None
    finally:
        await fed.close()


async def test_a_walltime_over_every_partitions_limit_is_refused(tmp_path, monkeypatch):
    fed = _fed(tmp_path, monkeypatch)
    long = "#!/bin/bash\\n#SBATCH -t 2-00:00:00\\necho long\\n"
    try:
        with pytest.raises(BadInput) as e:
            await fed.run_workflow(_two_steps("alpha", long), origin={"face": "test"})
        said = str(e.value)
        assert "step 'train' cannot run on site alpha (walltime 2-00:00:00 above every " \
            "partition's MaxTime here (the longest: compute, 1-00:00:00))" in said, said
        assert not fed.sbatch_calls.exists()
    finally:
        await fed.close()


@pytest.mark.parametrize("read", [True, False])
async def test_software_a_site_lacks_refuses_only_when_its_capabilities_were_read(
        tmp_path, monkeypatch, read):
    """train loads lammps on alpha, which lists gromacs only: refused when discovery
    answered; when it failed, left to the submit (which reads the sites file)."""
    fed = _fed(tmp_path, monkeypatch, capabilities_read=read)
    lammps = "#!/bin/bash\\n#SBATCH -t 5\\nmodule load lammps\\nlmp -in in.lj\\n"
    try:
        if read:
            with pytest.raises(BadInput) as e:
                await fed.run_workflow(_two_steps("alpha", lammps), origin={"face": "test"})
            assert "step 'train' cannot run on site alpha (" in str(e.value)
            assert "lammps" in str(e.value).split("site alpha (")[1]
            assert not fed.sbatch_calls.exists()
        else:
            view = await fed.run_workflow(_two_steps("alpha", lammps), origin={"face": "test"})
            assert _prep_job(view) is not None
            assert fed.sbatch_calls.read_text().count("called") == 1
    finally:
        await fed.close()
