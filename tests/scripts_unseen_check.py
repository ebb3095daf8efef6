"""The checks every sweep of unseen batch scripts makes (tests/test_scripts_unseen*.py):
each fixture under tests/fixtures/scripts_unseen*/<dialect>/ is parsed and compared with
its EXPECTED row, its needs are read, and it is translated into every dialect (its own
too) and read back. `sweep_tests` gives a sweep module its three parametrized tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from diamond_jupyter.dialects.begin_time import same_time
from diamond_jupyter.dialects.scripts_common import pbs_shrink_to_fit
from diamond_jupyter.dialects.staging import STAGING_DIALECTS
from diamond_jupyter.dialects.translate import (
    SCRIPT_DIALECTS,
    get_script_dialect,
    left_to_default,
    request_totals,
    translate,
)
from diamond_jupyter.model import BadInput, JobSpec
from diamond_jupyter.needs import needs_of

TOTALS = ("nodes", "tasks", "cpus", "gpus", "memory_mb")

# EXPECTED keys (besides TOTALS and JobSpec fields named by a sweep's `fields`):
#   walltime (s), array (expression), deps [(kind, ids)], unknown (kept options, in order),
#   gpu_type, gpu_bind, distribution, per_cpu (MB per CPU), node_mem (the spec's memory_mb),
#   features, exclusive, architecture, export_all, variables, passed, ignored (how many
#   directives the reader noted as ignored), notes (words each in some parse note),
#   needs_gpus / needs_mem / (needs' gpu_type): per node, as needs_of reads them.
# A key named in `strict` is checked when the row leaves it out too, against its default:
STRICT_DEFAULTS: dict[str, Any] = {
    "totals": None, "walltime": None, "array": None, "gpu_type": None, "features": [],
    "exclusive": False, "passed": [], "ignored": 0, "needs_gpus": None,
}
ALL_STRICT = tuple(STRICT_DEFAULTS)

# the JobSpec fields the later sweeps (14, 15, 18) compare with their EXPECTED rows
COMPARED_FIELDS = ("name", "queue", "account", "qos", "stdout", "stderr", "requeue",
                   "mail_events", "mail_user", "working_directory", "hold", "begin", "shell",
                   "comment", "reservation")


def fixture_scripts(here: Path) -> list[str]:
    """The fixtures of one sweep as `<dialect>/<file>` paths."""
    return sorted(str(p.relative_to(here)) for p in here.glob("*/*") if p.is_file())


def read_fixture(here: Path, rel: str) -> tuple[str, str]:
    """(dialect, text) of one fixture, read as bytes so CRLF and a BOM stay as written."""
    return rel.split("/")[0], (here / rel).read_bytes().decode("utf-8")


def translated(here: Path, rel: str, target: str, *, dependency_ids: str = "source"
               ) -> tuple[str, list[str]]:
    """One fixture translated into TARGET: the script and the translation's warnings
    (`dependency_ids`: whose jobs its dependencies name, as `translate` takes it)."""
    source, text = read_fixture(here, rel)
    script, warnings, _ = translate(text, target, source, dependency_ids=dependency_ids)
    return script, warnings


def directive_lines(script: str, sentinel: str) -> list[str]:
    """The lines of SCRIPT that start with SENTINEL (#SBATCH, #PBS ...), in order."""
    return [x for x in script.splitlines() if x.startswith(sentinel)]


def parse_lines(dialect: str, lines: str) -> JobSpec:
    """LINES (directives) parsed as a script of DIALECT's, a command after them."""
    return get_script_dialect(dialect).parse_script(f"#!/bin/bash\n{lines}\n./a\n")


def _deps(spec: JobSpec) -> list[tuple[str, list[str]]]:
    return [(d.kind, d.job_ids) for d in spec.dependencies]


def _dep_pairs(spec: JobSpec) -> set[tuple[str, str]]:
    """afterok:1:2 and afterok:1,afterok:2 mean the same: (kind, id) pairs."""
    return {(d.kind, i) for d in spec.dependencies for i in d.job_ids}


def check_parsed(spec: JobSpec, want: dict[str, Any], *, fields: Iterable[str],  # noqa: C901
                 strict: Iterable[str] = ()) -> None:
    """`spec` (a parsed fixture) against its EXPECTED row `want`."""
    strict = set(strict)
    unknown_keys = strict - set(STRICT_DEFAULTS)
    assert not unknown_keys, f"not a strict key: {unknown_keys}"

    def expected(key: str) -> tuple[bool, Any]:
        if key in want:
            return True, want[key]
        return key in strict, STRICT_DEFAULTS.get(key)

    totals = request_totals(spec)
    for q in TOTALS:
        if q in want or "totals" in strict:
            assert totals[q] == want.get(q), (q, totals)
    r = spec.resources
    check, value = expected("walltime")
    if check:
        assert r.walltime_s == value
    check, value = expected("array")
    if check:
        assert (spec.array.expression if spec.array else None) == value
    assert _deps(spec) == want.get("deps", [])
    assert [d.option for d in spec.unknown] == want.get("unknown", [])
    for key in fields:
        if key in want:
            assert getattr(spec, key) == want[key], key
    for key in ("gpu_bind", "distribution"):
        if key in want:
            assert getattr(r, key) == want[key], key
    check, value = expected("gpu_type")
    if check:
        assert r.gpu_type == value
    if "per_cpu" in want:
        assert r.memory_per_cpu_mb == want["per_cpu"]
    if "node_mem" in want:
        assert r.memory_mb == want["node_mem"]
    check, value = expected("features")
    if check:
        assert spec.constraints.features == value
    check, value = expected("exclusive")
    if check:
        assert spec.constraints.exclusive is value
    if "architecture" in want:
        assert spec.constraints.architecture == want["architecture"]
    env = spec.environment
    if "export_all" in want:
        assert env.export_all is want["export_all"]
    if "variables" in want:
        assert env.variables == want["variables"]
    check, value = expected("passed")
    if check:
        assert env.passed == value
    notes = spec.metadata.get("parse_notes", [])
    check, value = expected("ignored")
    if check:
        assert len([n for n in notes if "ignored" in n]) == value, notes
    for words in want.get("notes", []):
        assert any(words in n for n in notes), notes
    needs = needs_of(spec)  # never raises on a parsed script
    check, value = expected("needs_gpus")
    if check:
        assert needs.gpus == value
    if "needs_mem" in want:
        assert needs.memory_mb == want["needs_mem"]
    if want.get("gpu_type"):
        assert needs.gpu_type == want["gpu_type"]


def _array_tasks(expression: str) -> tuple[frozenset[int], str]:
    """An array expression (neutral: `1,3,5-11:2%4`) as its task indexes and its throttle:
    `1,3,5-11:2` and `1-11:2` are the same tasks."""
    indexes, _, throttle = expression.partition("%")
    tasks: set[int] = set()
    for part in indexes.split(","):
        lo, _, rest = part.partition("-")
        hi, _, step = rest.partition(":")
        tasks.update(range(int(lo), int(hi or lo) + 1, int(step or 1)))
    return frozenset(tasks), throttle


def _reported(warnings: list[str], *words: str) -> bool:
    return any(w.lower() in x.lower() for x in warnings for w in words
               if x.startswith(("dropped", "approximated", "kept", "line")))


def _renamed(warnings: list[str], name: str) -> bool:
    return any(w.startswith("approximated: job name") and repr(name) in w for w in warnings)


# the fields a translation into the script's own dialect must give back as they were
ROUND_TRIP_FIELDS = ("name", "queue", "account", "qos", "reservation", "hold", "stdout",
                     "stderr", "comment", "mail_events", "working_directory", "requeue",
                     "begin")


def check_translation(text: str, source: str, target: str) -> None:
    """The check every sweep of unseen scripts makes of a translation into `target` (its
    own dialect too): each value is expressed (read back from the translation) or a warning
    names it; never a larger request; a refusal is one line naming what cannot be
    expressed, and never into Slurm or the script's own dialect; the own dialect gives the
    same job back, its kept options included."""
    try:
        script, warnings, spec = translate(text, target, source)
    except BadInput as exc:
        msg = str(exc).strip()
        assert msg and "\n" not in msg and "cannot express" in msg, msg
        # a flux job of --cc copies is no flux batch script (flux batch has no --cc)
        copies = source == target == "flux" and "flux batch cannot express copies" in msg
        assert target not in ("slurm", source) or copies, f"refused: {exc}"
        return
    if target != source:
        for d in spec.unknown:
            assert any(d.raw.strip() in w for w in warnings), (d.raw, warnings)
    # read back as translate read it: for its own scheduler, staging lines kept as written
    own_staging = target == source and source in STAGING_DIALECTS
    back = get_script_dialect(target).parse_script(script, carry_staging=False) \
        if own_staging else get_script_dialect(target).parse_script(script)
    before, after = request_totals(spec), request_totals(back)
    for q in TOTALS:
        if before[q] is None:
            continue
        assert after[q] is None or after[q] <= before[q], (q, before[q], after[q])
        if left_to_default(q, before, after):
            continue  # one task or CPU (on one node): the target's default, unwritten
        if after[q] != before[q]:
            word = {"memory_mb": "mem", "cpus": "cpu", "gpus": "gpu", "tasks": "task",
                    "nodes": "node"}[q]
            assert _reported(warnings, word), (q, before[q], after[q], warnings)
    was, now = spec.resources.walltime_s, back.resources.walltime_s
    if now is None and (shrink := pbs_shrink_to_fit(back)):  # PBS Pro: up to max_walltime
        now = shrink[1]
    if was is not None:
        assert now is not None and now >= was
        assert now == was or _reported(warnings, "walltime")
    if spec.array:
        same = back.array is not None and (back.array.expression == spec.array.expression
                                           or _array_tasks(back.array.expression)
                                           == _array_tasks(spec.array.expression))
        assert same or _reported(warnings, "array"), (back.array, warnings)
    if spec.begin:  # the same start time, or said why not
        assert same_time(back.begin, spec.begin) or _reported(warnings, "begin time"), \
            (back.begin, warnings)
    if spec.dependencies:
        assert _dep_pairs(back) == _dep_pairs(spec) or _reported(warnings, "dependency"), \
            warnings
    if spec.name:
        assert back.name == spec.name or _renamed(warnings, spec.name), (back.name, warnings)
    if spec.queue:  # a list of queues reaches a one-queue scheduler as its first, reported
        first = spec.queue.split(",")[0]
        assert back.queue == spec.queue or (back.queue == first and _reported(
            warnings, f"queue list {spec.queue} as the queue {first}")), (back.queue, warnings)
    if target == source:  # its own dialect: the same job, the kept options still there
        # but those that make the submit command wait for the job (said dropped)
        waits = get_script_dialect(source).submit_wait
        dropped = [d for d in spec.unknown if (w := waits(d)) and not w.refuse
                   and any(w2.startswith(f"dropped: {d.raw.strip()}") for w2 in warnings)]
        expected = [(d.option, (waits(d).rest if d in dropped else d.value))  # type: ignore
                    for d in spec.unknown if d not in dropped or waits(d).rest]  # type: ignore
        assert sorted((d.option, d.value) for d in back.unknown) == sorted(expected)
        assert after == before and needs_of(back) == needs_of(spec)
        assert back.resources.walltime_s == spec.resources.walltime_s
        for key in ROUND_TRIP_FIELDS:
            if key == "name" and spec.name and _renamed(warnings, spec.name):
                # a name its own qsub may refuse (PBS: `3d-sim`) is renamed, and says so
                assert back.name == get_script_dialect(target).job_name(spec.name)
                continue
            assert (getattr(back, key) or None) == (getattr(spec, key) or None), key


def sweep_tests(here: Path, expected: dict[str, dict[str, Any]], *, fields: Iterable[str],
                strict: Iterable[str] = (), at_least: int = 40,
                ) -> tuple[Callable[[], None], Callable[[str], None], Callable[[str, str], None]]:
    """A sweep's three tests over the fixtures in `here`: every fixture has an EXPECTED row
    (and there are at least `at_least`), each parses to its row, each translates into
    every dialect or reports what it cannot. Assign them to module-level `test_*` names."""
    scripts = fixture_scripts(here)
    fields, strict = tuple(fields), tuple(strict)

    def test_every_fixture_has_expectations() -> None:
        assert len(scripts) >= at_least
        assert set(scripts) == set(expected)

    @pytest.mark.parametrize("rel", scripts)
    def test_parse_values(rel: str) -> None:
        dialect, text = read_fixture(here, rel)
        spec = get_script_dialect(dialect).parse_script(text)
        check_parsed(spec, expected[rel], fields=fields, strict=strict)

    @pytest.mark.parametrize("rel", scripts)
    @pytest.mark.parametrize("target", list(SCRIPT_DIALECTS))
    def test_translates_or_reports(rel: str, target: str) -> None:
        source, text = read_fixture(here, rel)
        check_translation(text, source, target)

    return test_every_fixture_has_expectations, test_parse_values, test_translates_or_reports
