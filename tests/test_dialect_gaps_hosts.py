"""Dialect gaps: the hosts a job names, carried between schedulers where the meaning is kept.

Flux `--requires=host:LIST` (RFC 35) takes the job's nodes from among the hosts named;
LSF `-m "h1 h2"` and Grid Engine `-l hostname=h1|h2` mean the same. Slurm `--nodelist`
gives the job every host named: the same job only when it asks for as many nodes as are
named. `-host:LIST` and Slurm `--exclude` keep hosts out. PBS names one host per chunk
(`host=`), with no form for "among these". Flux `rank:` numbers brokers in the instance's
resource set, which no other scheduler has. Each expectation is what the scheduler's
documentation says; what cannot be carried is said, never dropped silently (it was:
"dropped: ... no slurm equivalent" for all of them)."""

from __future__ import annotations

import pytest

from diamond_jupyter.dialects.translate import get_script_dialect, translate
from tests.scripts_unseen_check import directive_lines


def _flux(requires: str, nodes: int | None = 3) -> str:
    size = f"#flux: --nodes={nodes}\n" if nodes else ""
    value = f'"{requires}"' if " " in requires else requires  # one word, as flux reads it
    return (f"#!/bin/bash\n{size}#flux: --requires={value}\n#flux: -t 10m\n"
            "flux run hostname\n")


@pytest.mark.parametrize("target, line", [
    ("slurm", "#SBATCH --nodelist=node[1-3]"),
    ("lsf", '#BSUB -m "node1 node2 node3"'),
    ("sge", "#$ -l hostname=node1|node2|node3"),
])
def test_flux_hosts_become_the_targets_node_list(target: str, line: str) -> None:
    script, warnings, _ = translate(_flux("host:node[1-3]"), target)
    assert line in script.splitlines()
    assert f"kept: #flux: --requires=host:node[1-3] as {line.split(' ', 1)[1]}".replace(
        '"', "") in warnings
    assert not [w for w in warnings if w.startswith("dropped") and "requires" in w]


@pytest.mark.parametrize("target", ["lsf", "sge"])
def test_among_hosts_is_kept_whatever_the_node_count_where_the_target_means_among(
        target: str) -> None:
    """Two nodes from among three hosts: LSF -m and Grid Engine hostname pick from a list
    as flux does; Slurm's --nodelist would hand the job all three, so it is not written."""
    script, warnings, _ = translate(_flux("host:node[1-3]", nodes=2), target)
    assert any("node1" in x and "node3" in x for x in script.splitlines()
               if x.startswith(("#BSUB -m", "#$ -l hostname")))
    slurm, said, _ = translate(_flux("host:node[1-3]", nodes=2), "slurm")
    assert "--nodelist" not in slurm
    assert any(w.startswith("dropped: #flux: --requires=host:node[1-3] (the job asks 2 "
                            "node(s) of the 3 host(s) named") for w in said), said


def test_excluded_hosts_reach_slurm_and_are_said_elsewhere() -> None:
    src = _flux("-host:bad[1-2]", nodes=2)
    script, warnings, _ = translate(src, "slurm")
    assert "#SBATCH --exclude=bad[1-2]" in script.splitlines()
    assert "kept: #flux: --requires=-host:bad[1-2] as --exclude=bad[1-2]" in warnings
    for target in ("pbs", "lsf"):
        _, said, _ = translate(src, target)
        assert any(w.startswith("dropped: #flux: --requires=-host:bad[1-2] (the hosts "
                                "bad[1-2] the job must not have") for w in said), (target, said)
    script, _, _ = translate(src, "sge")  # complex(5)'s negation (test_scripts_unseen21)
    assert "#$ -l hostname=!bad1&!bad2" in script.splitlines()


def test_hosts_and_exclusions_in_one_query() -> None:
    script, _, _ = translate(_flux("host:n[1-4] and not host:n3", nodes=3), "slurm")
    assert "#SBATCH --exclude=n3" in script.splitlines()
    assert "--nodelist" not in script  # three nodes among four hosts: not every one


@pytest.mark.parametrize("requires, why", [
    ("rank:0-2", "rank: names brokers by their order"),
    ("host:a or host:b", "terms joined with `or`"),
    ("(host:a)", "terms joined with `or` or in parentheses"),
    ("host:a[1-3] and gpu", "'gpu' is a property among host terms"),
])
@pytest.mark.parametrize("target", ["slurm", "pbs", "lsf", "sge"])
def test_what_no_scheduler_says_is_named_as_dropped(requires: str, why: str,
                                                    target: str) -> None:
    script, warnings, _ = translate(_flux(requires), target)
    assert any(w.startswith("dropped: #flux: --requires=") and requires in w and why in w
               for w in warnings), warnings
    assert not any(x in script for x in ("--nodelist", "--exclude", "-m ", "hostname="))


def test_pbs_says_why_a_list_of_hosts_has_no_form() -> None:
    """Two nodes from among three hosts: PBS names one host per chunk, and cannot say
    "any two of these" (three nodes of three hosts: one chunk on each, since sweep 18's
    follow-up, tests/test_select_hosts_carried.py)."""
    script, warnings, _ = translate(_flux("host:node[1-3]", nodes=2), "pbs")
    assert "host=" not in script
    assert any("pbs names one host per chunk (host=)" in w for w in warnings)


def test_slurm_node_list_reaches_flux_when_the_job_takes_every_node() -> None:
    src = ("#!/bin/bash\n#SBATCH --nodelist=c[1-2]\n#SBATCH --exclude=c9\n#SBATCH -t 10\n"
           "srun hostname\n")
    script, warnings, _ = translate(src, "flux")
    assert directive_lines(script, "#flux: --requires") == [
        "#flux: --requires=host:c[1-2]", "#flux: --requires=-host:c9"]
    assert "kept: #SBATCH --nodelist=c[1-2] as --requires=host:c[1-2]" in warnings
    back = get_script_dialect("flux").parse_script(script)
    assert back.resources.nodes == 2
    # more nodes than hosts named: Slurm adds others, flux would not
    src4 = src.replace("#SBATCH -t 10", "#SBATCH -t 10\n#SBATCH -N 4")
    script, warnings, _ = translate(src4, "flux")
    assert "host:c[1-2]" not in script
    assert any(w.startswith("dropped: #SBATCH --nodelist=c[1-2] (the job asks 4 node(s) of "
                            "the 2 host(s) named, which its scheduler gives the job every "
                            "one") for w in warnings), warnings


def test_slurm_node_list_to_lsf_and_grid_engine_at_as_many_nodes() -> None:
    src = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --nodelist=c1,c2\nsrun hostname\n"
    lsf, _, _ = translate(src, "lsf")
    assert '#BSUB -m "c1 c2"' in lsf.splitlines()
    sge, _, _ = translate(src, "sge")
    assert "#$ -l hostname=c1|c2" in sge.splitlines()


def test_a_file_of_hosts_is_not_carried() -> None:
    src = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --nodelist=/home/u/hosts\nsrun hostname\n"
    script, warnings, _ = translate(src, "flux")
    assert "--requires" not in script
    assert any("names a file of hosts" in w for w in warnings), warnings


def test_a_hetjob_components_hosts_are_not_taken_for_the_whole_job() -> None:
    src = ("#!/bin/bash\n#SBATCH -N 1\n#SBATCH -t 10\n#SBATCH hetjob\n#SBATCH -N 2\n"
           "#SBATCH --nodelist=g[1-2]\nsrun hostname\n")
    script, warnings, _ = translate(src, "lsf")
    assert "-m" not in "\n".join(directive_lines(script, "#BSUB"))
    assert any("one component of a heterogeneous job" in w for w in warnings), warnings
