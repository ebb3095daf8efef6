"""Every real-world corpus script through every dialect: it translates or raises BadInput."""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pytest

from diamond_jupyter.dialects.slurm_script import TABLE as SLURM_OPTIONS
from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    count_sentinels,
    get_script_dialect,
    left_to_default,
    translate,
)
from diamond_jupyter.model import BadInput


def _corpus() -> Path:
    if env := os.environ.get("DIAMOND_CORPUS"):
        return Path(env)
    default = Path("/work/shared/corpus/batch-scripts")
    relative = Path(__file__).parents[2] / "shared/corpus/batch-scripts"
    return default if default.exists() else relative


CORPUS = _corpus()
MANIFEST = CORPUS / "MANIFEST.tsv"


def _manifest() -> list[dict[str, str]]:
    if not MANIFEST.exists():
        return []
    with MANIFEST.open(newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


ROWS = _manifest()


def _text(rel: str) -> str:
    return (CORPUS / rel).read_bytes().decode("utf-8", errors="replace")


def test_corpus_present() -> None:
    assert CORPUS.is_dir(), f"corpus not found at {CORPUS} (set DIAMOND_CORPUS)"
    assert len(ROWS) >= 400, "manifest missing or truncated"
    assert all((CORPUS / r["file"]).is_file() for r in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_translates_everywhere_or_badinput(row: dict[str, str]) -> None:
    text = _text(row["file"])
    source = row["dialect"]
    for target in SCRIPT_DIALECTS:
        try:
            script, warnings, spec = translate(text, target, source)
        except BadInput as exc:
            assert str(exc).strip(), "BadInput without a message"
            continue
        assert script.startswith("#!")
        assert all(isinstance(w, str) and w for w in warnings)
        body = spec.script or ""
        rendered = script.replace("\r\n", "\n")
        if target == "flux":  # a start directory's `cd` follows the submit-directory lines
            rendered = re.sub(r'(submitted from\n)cd "\$HOME"\n', r"\1", rendered, count=1)
        assert rendered.endswith(body.replace("\r\n", "\n"))
        if target != source:  # every unknown directive of the source is named in a warning
            for d in spec.unknown:
                assert any(d.raw.strip() in w for w in warnings), d.raw
        if target == "slurm":
            _assert_valid_sbatch(script, text)


def _assert_valid_sbatch(script: str, original: str) -> None:
    """Rendered #SBATCH lines use real sbatch long options, or are copied verbatim."""
    originals = {ln.strip() for ln in original.splitlines()}
    for line in script.splitlines():
        m = re.match(r"#SBATCH --([\w-]+)", line)
        if line.startswith("#SBATCH") and line.strip() not in originals:
            assert m and m.group(1) in SLURM_OPTIONS.longs, line
            assert m.group(1) != "cpu-bind", line  # not an sbatch option


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_every_directive_line_is_read_or_reported(row: dict[str, str]) -> None:
    """Directive lines: manifest count = lines read from the leading block + later lines
    (which the scheduler ignores and which are reported in parse notes)."""
    text = _text(row["file"])
    source = row["dialect"]
    counts = count_sentinels(text)
    assert counts[source] == int(row["directive_count"])
    try:
        spec = get_script_dialect(source).parse_script(text)
    except BadInput:
        return
    left_in_body = count_sentinels(spec.script or "")[source]
    ignored = [n for n in spec.metadata.get("parse_notes", []) if "ignored" in n]
    assert left_in_body == len(ignored)
    if not ignored:  # all in the leading block: each line was consumed as a directive
        assert counts[source] - left_in_body == int(row["directive_count"])


def _spec(rel: str):
    row = next(r for r in ROWS if r["file"].startswith(rel))
    return get_script_dialect(row["dialect"]).parse_script(_text(row["file"]))


def test_semantic_samples() -> None:
    s = _spec("slurm/0001-")
    assert (s.resources.nodes, s.resources.walltime_s) == (1, 86400)
    assert s.constraints.features == ["clx"] and s.constraints.exclusive
    assert s.stdout == "%x.out"
    s = _spec("slurm/0003-")
    assert (s.queue, s.account, s.name, s.resources.walltime_s) == (
        "gpu", "cmsc416-aac", "cuda-video", 60)
    assert s.resources.gpus_per_node == 1 and s.resources.gpu_type == "a100_1g.5gb"
    p = _spec("pbs/0001-")
    assert (p.queue, p.resources.nodes, p.resources.cpus_per_task) == ("alloc-dt", 1, 4)
    assert p.resources.gpus_per_node == 1 and p.resources.memory_mb == 40 * 1024
    assert p.resources.walltime_s == 200 * 3600
    assert [d.option for d in p.unknown] == ["-P"]
    p = _spec("pbs/0002-")
    assert (p.resources.nodes, p.resources.tasks_per_node, p.join_output) == (1, 12, True)
    b = _spec("lsf/0001-")
    assert (b.name, b.queue, b.resources.tasks, b.resources.walltime_s) == (
        "train_mnist_svhn", "gpuv100", 1, 86400)
    assert b.resources.memory_per_cpu_mb == 100 * 1024 and b.resources.gpus_per_node == 1
    assert set(b.mail_events) == {"begin", "end"} and b.stdout == "gpu-%j.out"
    b = _spec("lsf/0002-")
    assert (b.queue, b.resources.tasks, b.resources.walltime_s) == ("priority", 6, 7200)
    f = _spec("flux/0001-")
    r = f.resources
    assert (r.nodes, r.tasks, r.cpus_per_task, r.gpus_per_task, r.walltime_s) == (
        1, 1, 32, 1, 3 * 3600)
    assert f.constraints.exclusive and f.name == "gfx906_builtin"


def test_crlf_file_renders_for_sbatch() -> None:
    row = next(r for r in ROWS if r["file"].startswith("slurm/0073-"))
    text = _text(row["file"])
    assert "\r\n" in text
    script, warnings, _ = translate(text, "slurm")
    assert "\r" not in script and any("CRLF" in w for w in warnings)


def _totals(spec) -> dict[str, int | None]:
    """The oracle: whole-job nodes, tasks, CPUs, GPUs, memory (MB); None when unsaid."""
    r = spec.resources
    nodes = r.nodes or (-(-r.tasks // r.tasks_per_node) if r.tasks and r.tasks_per_node
                        else None)
    tasks = r.tasks or ((nodes or 1) * r.tasks_per_node if r.tasks_per_node else None)
    cpus = (tasks or 1) * r.cpus_per_task if r.cpus_per_task else tasks
    # nodes without a task count hold one task each (sbatch's default, a Torque node's ppn)
    implied = tasks or nodes or 1
    gpus = (r.gpus_per_node * (nodes or 1) if r.gpus_per_node is not None else
            r.gpus_per_task * implied if r.gpus_per_task is not None else None)
    mem = (r.memory_mb * (nodes or 1) if r.memory_mb else
           r.memory_per_cpu_mb * (cpus or implied) if r.memory_per_cpu_mb else None)
    return {"node": nodes, "task": tasks, "cpu": cpus, "gpu": gpus, "mem": mem}


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_translation_never_asks_for_more(row: dict[str, str]) -> None:
    """Read each translation back: nodes, tasks, CPUs, GPUs and memory are never larger
    than the original's; smaller (or gone) only with a report naming it; else refused."""
    text = _text(row["file"])
    for target in SCRIPT_DIALECTS:
        if target == row["dialect"]:
            continue
        try:
            script, warnings, spec = translate(text, target, row["dialect"])
        except BadInput as exc:
            assert str(exc).strip() and "\n" not in str(exc).strip()
            continue
        before = _totals(spec)
        after = _totals(get_script_dialect(target).parse_script(script))
        for what, was in before.items():
            now = after[what]
            if was is None:
                continue
            assert now is None or now <= was, (target, what, was, now)
            if what in ("node", "task", "cpu") and left_to_default(
                    what + "s", {k + "s": v for k, v in before.items()},
                    {k + "s": v for k, v in after.items()}):
                continue  # one task or CPU (on one node): the target's default, unwritten
            if now is None or now < was:
                assert any(what in w.lower() for w in warnings
                           if w.startswith(("dropped", "approximated"))), (target, what, warnings)
