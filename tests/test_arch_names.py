"""Every scheduler's spelling of a CPU architecture reads as the same `uname -m` name."""

from __future__ import annotations

import json

import pytest

from diamond_jupyter.dialects import get_script_dialect
from diamond_jupyter.dialects.lsf_commands import LsfCommands
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.sge_commands import SgeCommands
from diamond_jupyter.model import Node
from diamond_jupyter.needs import node_arch


def _lsf_arches(*types: str) -> list[str | None]:
    hosts = json.dumps({"COMMAND": "bhosts", "RECORDS": [
        {"HOST_NAME": f"h{i}", "STATUS": "ok", "MAX": "8", "NJOBS": "0"}
        for i in range(len(types))]})
    lshosts = json.dumps({"COMMAND": "lshosts", "RECORDS": [
        {"HOST_NAME": f"h{i}", "ncpus": "8", "maxmem": "64G", "type": t, "model": "PC"}
        for i, t in enumerate(types)]})
    snap = LsfCommands().parse_snapshot("lsfsite", {"hosts": hosts, "lshosts": lshosts})
    return [n.architecture for n in sorted(snap.nodes, key=lambda n: n.name)]


def test_lsf_host_types_read_as_documented():
    # LINUX86 is LSF's 32-bit x86 Linux type: no architecture the engine places on
    assert _lsf_arches("X86_64", "LINUX86", "LINUXPPC64LE", "LINUXPPC64") == [
        "x86_64", None, "ppc64le", "ppc64"]


def _sge_arches(*arches: str) -> list[str | None]:
    host = ("<host name='{n}'><hostvalue name='arch_string'>{a}</hostvalue>"
            "<hostvalue name='num_proc'>8</hostvalue><hostvalue name='load_avg'>0.1</hostvalue>"
            "<hostvalue name='mem_total'>16G</hostvalue></host>")
    qhost = "<?xml version='1.0'?><qhost>" + "".join(
        host.format(n=f"s{i}", a=a) for i, a in enumerate(arches)) + "</qhost>"
    qstat = ("<?xml version='1.0'?><job_info><queue_info>" + "".join(
        f"<Queue-List><name>all.q@s{i}</name><qtype>BIP</qtype><slots_used>0</slots_used>"
        f"<slots_total>8</slots_total><arch>{a}</arch></Queue-List>"
        for i, a in enumerate(arches)) + "</queue_info><job_info></job_info></job_info>")
    snap = SgeCommands().parse_snapshot("gecko", {"hosts": qhost, "queue": qstat})
    return [n.architecture for n in sorted(snap.nodes, key=lambda n: n.name)]


def test_grid_engine_arch_strings_read_through_the_shared_table():
    assert _sge_arches("lx-amd64", "lx-x86", "lx-ppc64le", "lx-ppc64", "lx-arm64") == [
        "x86_64", None, "ppc64le", "ppc64", "aarch64"]


def test_pbs_arch_resource_reads_through_the_shared_table():
    nodes = {f"p{i}": {"state": "free", "resources_available": {"ncpus": 8, "arch": a}}
             for i, a in enumerate(("linux", "arm64", "ppc64", "amd64"))}
    got = PbsCommands().parse_nodes(json.dumps({"nodes": nodes}))
    assert [n.architecture for n in sorted(got, key=lambda n: n.name)] == [
        None, "aarch64", "ppc64", "x86_64"]


@pytest.mark.parametrize(("feature", "arch"), [("ppc64", "ppc64"), ("ppc64le", "ppc64le"),
                                               ("lx-amd64", "x86_64"), ("arch=lx-ppc64", "ppc64")])
def test_architecture_named_feature_is_the_node_arch(feature: str, arch: str):
    node = Node(name="n1", state="idle", cpus=8, features=["avx2", feature],
                architecture="x86_64" if arch != "x86_64" else "aarch64")
    assert node_arch(node) == arch


def test_grid_engine_ppc64_request_round_trips():
    sge = get_script_dialect("sge")
    spec = sge.parse_script("#!/bin/bash\n#$ -l arch=lx-ppc64\nhostname\n")
    assert spec.constraints.architecture == "ppc64"
    assert "#$ -l arch=lx-ppc64" in sge.render_script(spec).script
