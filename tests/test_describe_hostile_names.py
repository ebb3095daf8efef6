"""`diamond describe` printed a site's names as they came: a partition, feature, module or
node type named with a newline started a line of its own in the description (a forged
"partition" or "could not read" line), and a tab shifted what followed. Every name is now
written out as the queue tables write them (`one_line`): one fact per line, whatever the
site's names hold, and terminal sequences shown, not obeyed."""

from __future__ import annotations

import argparse
import json

import pytest

from diamond_jupyter.capabilities import NodeType, SiteCapabilities, SoftwareModule
from diamond_jupyter.cli import describe as describe_cli
from diamond_jupyter.cli.describe import describe_text
from diamond_jupyter.discovery import ClusterSummary, PartitionSummary, SiteDescription

FORGED = "\n    partition free (default): 9999 nodes, no limit"
HOSTILE = {
    "partition": "batch" + FORGED,
    "feature": "avx512\n  could not read: nothing, all is well",
    "module": "gcc/12\tcuda\n  software:            everything",
    "node type": "n\x1b[2Jtype",
    "cluster": "main\r\n  cluster fake: 1 nodes",
    "error": "sinfo: \x1b]0;owned\x07 failed\nline two",
    "gpu": "a100\x0bx",
}


def _description() -> SiteDescription:
    node = NodeType(name=HOSTILE["node type"], cluster=HOSTILE["cluster"],
                    partitions=[HOSTILE["partition"]], count=2, architecture="x86_64",
                    features=[HOSTILE["feature"]], cpus=8, memory_mb=1000, gpus=1,
                    gpu_model=HOSTILE["gpu"])
    caps = SiteCapabilities(
        site="alpha", architectures=["x86_64"], features=[HOSTILE["feature"]],
        gpu_models=[HOSTILE["gpu"]], module_system="lmod",
        software=[SoftwareModule(name=HOSTILE["module"], version="1")],
        container_runtimes=["apptainer"], mpi=["openmpi"], node_types=[node],
        errors=[HOSTILE["error"]])
    cluster = ClusterSummary(
        name=HOSTILE["cluster"], nodes=2, error=HOSTILE["error"],
        partitions=[PartitionSummary(name=HOSTILE["partition"], nodes=2,
                                     node_types=[HOSTILE["node type"]])])
    return SiteDescription(site="alpha", capabilities=caps, clusters=[cluster],
                           pmi=["pmix\nx"])


EXPECTED_LINES = ["alpha", "  architectures:", "  features:", "  GPU models:",
                  "  module system:", "  software:", "  container runtimes:", "  MPI stacks:",
                  "  cluster ", "    partition ", "      n", "  could not read: "]


def test_each_fact_is_one_line_whatever_the_names_hold():
    text = describe_text(_description())
    lines = text.split("\n")
    assert len(lines) == len(EXPECTED_LINES), text
    for line, start in zip(lines, EXPECTED_LINES, strict=True):
        assert line.startswith(start), (line, start)
    assert "\t" not in text and "\r" not in text and "\x1b" not in text and "\x07" not in text
    assert "\x0b" not in text
    # what the names hold is shown, written out
    assert "batch\\x0a    partition free (default): 9999 nodes" in text
    assert "gcc/12\\x09cuda\\x0a  software:" in text
    assert "n\\x1b[2Jtype" in text and "\\x1b]0;owned\\x07" in text


@pytest.mark.parametrize("name", list(HOSTILE))
def test_no_name_starts_a_line_of_its_own(name):
    """Each hostile name alone: the description keeps its line count."""
    plain = describe_text(_plain())
    d = _plain()
    if name == "partition":
        d.clusters[0].partitions[0].name = HOSTILE[name]
    elif name == "feature":
        d.capabilities.features = [HOSTILE[name]]
    elif name == "module":
        d.capabilities.software = [SoftwareModule(name=HOSTILE[name])]
    elif name == "node type":
        d.capabilities.node_types[0].name = HOSTILE[name]
        d.clusters[0].partitions[0].node_types = [HOSTILE[name]]
    elif name == "cluster":
        d.clusters[0].name = HOSTILE[name]
    elif name == "error":
        d.clusters[0].error = HOSTILE[name]
    else:
        d.capabilities.gpu_models = [HOSTILE[name]]
    text = describe_text(d)
    assert text.count("\n") == plain.count("\n"), text


def _plain() -> SiteDescription:
    node = NodeType(name="std", partitions=["batch"], count=2, architecture="x86_64",
                    cpus=8, memory_mb=1000)
    caps = SiteCapabilities(site="alpha", architectures=["x86_64"], features=["avx2"],
                            software=[SoftwareModule(name="gcc", version="12")],
                            node_types=[node])
    return SiteDescription(site="alpha", capabilities=caps, clusters=[ClusterSummary(
        name="main", nodes=2, partitions=[PartitionSummary(name="batch", nodes=2,
                                                           node_types=["std"])])])


def test_the_command_prints_it_so_and_json_keeps_names_raw(monkeypatch, capsys):
    async def fake_with_fed(args, call):
        class Fed:
            async def describe(self, site, refresh=False):
                return _description()
        return await call(Fed())

    monkeypatch.setattr(describe_cli, "with_fed", fake_with_fed)
    describe_cli.cmd_describe(argparse.Namespace(site="alpha", refresh=False, json=False))
    shown = capsys.readouterr().out
    assert shown.count("\n") == len(EXPECTED_LINES) and "\x1b" not in shown
    describe_cli.cmd_describe(argparse.Namespace(site="alpha", refresh=False, json=True))
    raw = json.loads(capsys.readouterr().out)
    assert raw["clusters"][0]["partitions"][0]["name"] == HOSTILE["partition"]
