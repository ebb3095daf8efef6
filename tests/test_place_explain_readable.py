"""`diamond place --explain` read as a user reads it: under the table, one block per site in
the table's order (candidates, then refused sites); in a block, what the job waits for
before notes and before what was not checked; a not-checked reason said once, naming the
partitions it was said of, and "not checked" said once in a line; long lists capped with a
count; refused sites with the same reasons in one row naming them, a long refusal cut to
its deciding reason in the row and listed whole in the site's block; and `--json` carrying
every site's own verdict and the same not-checked facts as a list of {site, what, why}.

The sites are recorded views: selene (test_placement_slurm_new_job_priority) read from its
commands' outputs with `sshare -U` failing, a slurmrestd site from the recorded replies,
the 30-site federation the latency benchmark builds from recorded Slurm outputs, vega
(test_placement_cases14, its licenses not read), the LSF site wren with its shared
resources not read (test_lsf_shared_resources) or its queue's RES_REQ (test_placement_cases8, 14),
the flux site plover (test_placement_cases20) and the Slurm site rhea (test_placement_cases8)
with what the job asks of them not checked.
"""

from __future__ import annotations

import json
import re
from datetime import timezone

from test_lsf_shared_resources import site as lsf_site
from test_placement_cases import NOW, run
from test_placement_cases8 import rhea
from test_placement_cases8 import wren as lsf_queue_site
from test_placement_cases14 import WREN_RES_REQ, vega
from test_placement_cases20 import plover
from test_placement_cases22 import CHAIN, orion, qos_entry
from test_placement_slurm_new_job_priority import factors, selene
from test_placement_slurmrestd_priority import WEIGHTS_UNREPORTED, _rest_snapshot

from benchmarks.place_latency import _replicated
from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.slurm_commands import SlurmCommands
from diamond_jupyter.placement import Placement, SiteVerdict
from diamond_jupyter.placement_explain import (
    MAX_REFUSED_ROW_CHARS,
    MAX_SITES_NAMED,
    MAX_UNCHECKED_LINES,
    refused_text,
)

SSHARE_FAILS = factors().replace("proj|alice|0.620000|1.250000\n",
                                 "sshare: error: Problem talking to the database\n"
                                 "exit status 1\n")
ANY_PARTITION = "#SBATCH -N 1 -t 1:00:00"  # no -p: every partition of selene is a candidate
_LINE = re.compile(r"^  (\S+?):? ")  # a line under the table, and the site it is of


_UNDER_TABLE = re.compile(r"^  \S+?(?:: | waits: | refused: | not checked: )")


def _under_table(p: Placement) -> list[str]:
    lines = p.explain().splitlines()
    return lines[next((i for i, line in enumerate(lines) if _UNDER_TABLE.match(line)),
                      len(lines)):]


def _table(p: Placement) -> list[str]:
    lines = p.explain().splitlines()
    return lines[2:len(lines) - len(_under_table(p))]


def _site_of(line: str) -> str:
    m = _LINE.match(line)
    assert m, line
    return m[1]


def _recorded_federation(n: int) -> list:
    cmds = SlurmCommands(jobcomp=True, tz=timezone.utc)
    pairs = []
    for i in range(n):
        snap = cmds.parse_snapshot(f"site{i:02d}", _replicated(1, i)[0])
        pairs.append((SiteConfig(name=snap.site), snap.model_copy(update={"taken_at": NOW})))
    rest = _rest_snapshot("v0.0.38").model_copy(update={"site": "rest", "taken_at": NOW})
    return [*pairs, (SiteConfig(name="rest"), rest)]


def test_a_reason_of_every_partition_is_said_once_naming_them():
    p = run(ANY_PARTITION, selene(SSHARE_FAILS))
    v = p.verdict("selene")
    assert v is not None and len(v.not_checked) > 1, v.not_checked  # one per partition
    said = [line for line in p.explain().splitlines() if "selene not checked:" in line]
    assert said == ["  selene not checked: priority factor fair share (sshare -U failed "
                    "(exit 1): sshare: error: Problem talking to the database): the job was "
                    "counted behind every job waiting in partitions batch, big, gpu, excl"], \
        p.explain()


def test_no_line_is_said_twice_for_a_site():
    for script in (ANY_PARTITION, "#SBATCH -p batch -N 4 -t 12:00:00",
                   "#SBATCH -N 1 -t 0:10:00 --array=0-999"):
        p = run(script, selene(SSHARE_FAILS), *_recorded_federation(4))
        lines = _under_table(p)
        # the same line of another partition is the same line to its reader
        said = [re.sub(r"\bpartitions? [\w, ]+", "partition", line) for line in lines]
        assert len(said) == len(set(said)), p.explain()
        assert sum(WEIGHTS_UNREPORTED in line for line in lines) <= 1, p.explain()


def _verdict(site: str, feasible: bool, **fields: object) -> SiteVerdict:
    start = {"estimated_start": NOW, "estimated_finish": NOW, "partition": "batch"} \
        if feasible else {"reasons": ["needs 4 GPUs per node, largest node has 2"]}
    return SiteVerdict(site=site, feasible=feasible, verdict="BUSY" if feasible
                       else "INCOMPATIBLE", **start, **fields)


def test_each_site_is_one_block_waits_first_refused_sites_last():
    p = Placement(policy="diamond", choice="alpha", now=NOW, ranked=[
        _verdict("alpha", True, waits_for=["QOS normal's MaxJobsPerUser=2: 2 running"],
                 not_checked=["reservations (pbs_rstat -f failed)"]),
        _verdict("beta", True, waits_for=["queue batch's max_run=10: 10 running"],
                 own_shift_s=300.0, own_samples=2,
                 not_checked=["priority factor weights (slurmrestd does not report them)"]),
        _verdict("gamma", False, not_checked=["resource quotas (qconf -srqs failed)"]),
    ])
    sites = [_site_of(line) for line in _under_table(p)]
    assert sites == ["alpha", "alpha", "beta", "beta", "beta", "gamma"], p.explain()
    beta = [line for line in _under_table(p) if _site_of(line) == "beta"]
    assert beta[0].startswith("  beta waits: ") and "own jobs here" in beta[1] \
        and beta[2].startswith("  beta not checked: "), beta


def test_a_long_list_is_capped_with_a_count_and_json_keeps_it_all():
    said = [f"limit {k} (the site does not report it)" for k in range(MAX_UNCHECKED_LINES + 3)]
    p = Placement(policy="diamond", choice="alpha", now=NOW,
                  ranked=[_verdict("alpha", True, not_checked=said)])
    lines = _under_table(p)
    assert lines[:-1] == [f"  alpha not checked: {s}" for s in said[:MAX_UNCHECKED_LINES]]
    assert lines[-1] == "  alpha not checked: 3 more (--json lists them all)", lines
    listed = p.model_dump(mode="json")["not_checked"]
    assert [(n["site"], n["what"], n["why"]) for n in listed] == [
        ("alpha", f"limit {k}", "the site does not report it") for k in range(len(said))]


def test_json_carries_what_explain_says_was_not_checked():
    p = run(ANY_PARTITION, selene(SSHARE_FAILS), *_recorded_federation(3))
    listed = json.loads(p.model_dump_json())["not_checked"]
    said = [line for line in _under_table(p) if " not checked: " in line]
    assert said and [f"  {n['site']} not checked: {n['text']}" for n in listed] == said
    assert {n["site"] for n in listed} == {"selene", "rest"}
    by_what = {(n["site"], n["what"]): n for n in listed}
    assert by_what["rest", "priority factor weights"]["why"] == \
        "slurmrestd does not report them"
    fair = by_what["selene", "priority factor fair share (sshare -U failed (exit 1): sshare: "
                   "error: Problem talking to the database)"]
    assert fair["partitions"] == ["batch", "big", "gpu", "excl"]
    assert fair["why"].startswith("the job was counted behind every job waiting in")


def test_refused_sites_with_the_same_reasons_share_one_row_naming_them():
    p = run("#SBATCH -N 1 -c 64 -t 1:00:00", *_recorded_federation(30))
    same = "needs 64 CPUs per node, largest node has 16"
    sites = [f"site{i:02d}" for i in range(30)]
    assert [" ".join(line.split()) for line in _table(p)] == [
        f"30 sites INCOMPATIBLE {same} ({', '.join(sites[:MAX_SITES_NAMED])} and "
        f"{30 - MAX_SITES_NAMED} more)",
        "rest INCOMPATIBLE needs 64 CPUs per node, largest node has 4"], p.explain()
    # --json keeps every site's own verdict and reasons
    ranked = p.model_dump(mode="json")["ranked"]
    assert [(v["site"], v["reasons"]) for v in ranked[:30]] == [(s, [same]) for s in sites]


def test_a_site_refused_apart_keeps_its_own_row_among_grouped_ones():
    p = Placement(policy="diamond", choice="alpha", now=NOW, ranked=[
        _verdict("alpha", True), _verdict("beta", False), _verdict("gamma", False),
        _verdict("delta", False).model_copy(update={"reasons": ["no GPUs on any node"]}),
        _verdict("epsilon", False)])
    table = _table(p)
    assert [line.split()[:3] for line in table] == [
        ["*", "alpha", "BUSY"], ["3", "sites", "INCOMPATIBLE"], ["delta", "INCOMPATIBLE", "no"]]
    assert table[1].endswith("has 2 (beta, gamma, epsilon)"), table


SELENE_40_NODES = ["needs 40 nodes, partition batch allows at most 4",
                   "needs 40 nodes, partition big allows at most 1",
                   "needs 40 nodes, partition gpu has only 3",
                   "needs 40 nodes, partition excl has only 2",
                   "needs 40 nodes, largest partition has 11"]


def test_a_long_refusal_keeps_its_row_short_and_its_block_lists_every_reason():
    p = run("#SBATCH -N 40 -t 1:00:00", selene(SSHARE_FAILS), *_recorded_federation(2))
    v = p.verdict("selene")
    assert v is not None and v.reasons == SELENE_40_NODES, p.explain()
    row = next(line for line in _table(p) if line.split()[0] == "selene")
    assert row.endswith("INCOMPATIBLE needs 40 nodes, partition batch allows at most 4; and 4 "
                        "more reasons (listed below)"), row
    assert len(row) < MAX_REFUSED_ROW_CHARS, row
    block = [line for line in _under_table(p) if _site_of(line) == "selene"]
    assert block[:5] == [f"  selene refused: {why}" for why in SELENE_40_NODES], p.explain()
    assert p.model_dump(mode="json")["ranked"][-2]["reasons"] == SELENE_40_NODES


def test_a_long_refusal_shown_without_its_block_points_to_explain():
    # `explain` always shows the blocks; a row shown alone says where the rest are
    assert refused_text(SELENE_40_NODES) == ("needs 40 nodes, partition batch allows at most "
                                             "4; and 4 more reasons (--explain lists them)")
    assert refused_text(SELENE_40_NODES, blocks_below=True).endswith("(listed below)")
    assert refused_text(SELENE_40_NODES[:2]) == "; ".join(SELENE_40_NODES[:2])


def test_a_short_refusal_is_said_whole_in_its_row_and_not_again():
    p = run("#SBATCH -N 8 --gres=gpu:8 -t 1:00:00 --mem=900G", *_recorded_federation(2))
    rows = _table(p)
    assert all("more reason" not in line for line in rows), rows
    assert [" ".join(line.split()) for line in rows] == [
        "2 sites INCOMPATIBLE needs 8 GPUs per node, largest node has 2; needs 921600 MB "
        "memory per node, largest node has 64000 MB (site00, site01)",
        "rest INCOMPATIBLE no GPUs on any node; needs 921600 MB memory per node, largest node "
        "has 8000 MB"], rows
    assert not [line for line in _under_table(p) if " refused: " in line], p.explain()


def test_a_not_checked_line_says_not_checked_once():
    for script in ("#SBATCH -N 1 -t 1:00:00 --array=0-9", "#SBATCH -N 1 -c 64 -t 1:00:00",
                   "#SBATCH -N 1 -c 4 -t 1:00:00 --array=0-99%4"):
        p = run(script, *_recorded_federation(2))
        said = [line for line in _under_table(p) if " not checked: " in line]
        assert said and all(line.count("not checked") == 1 for line in said), p.explain()
    p = run("#SBATCH -N 1 -t 1:00:00 --array=0-9", *_recorded_federation(1))
    by_what = {n.what: n.why for n in p.not_checked}
    assert by_what == {
        "slurmrestd v0.0.38 does not report MaxArraySize":
            "the array's largest index must be below it",
        "slurmrestd v0.0.38 does not report the backfill window, SchedulerParameters' "
        "bf_window": "a start past it keeps no backfill slot",
        # (its recorded replies have no `GET diag`)
        "slurmrestd v0.0.38 does not report SchedulerType":
            "backfill (sched/backfill) is assumed for this site; under sched/builtin the job "
            "waits for every job ahead of it",
        "priority factor weights": "slurmrestd does not report them"}, by_what


CHECKED_WHOLE = "the job is checked against the whole limit only"


def test_grp_tres_mins_not_known_says_not_checked_once_and_why_apart():
    # the QOS's use: slurmrestd does not report it; alice's: GET shares failed
    failed = "orion: GET shares: HTTP 502 Bad Gateway"
    p = run("#SBATCH -p batch -c 4 -t 1:00:00", orion(
        assoc=CHAIN[:1], share_failed=failed,
        qos=[qos_entry(grp_mins={"cpu": 50000}), qos_entry("long")]))
    said = [line for line in _under_table(p) if "GrpTRESMins" in line]
    assert len(said) == 2 and all(line.count("not checked") == 1 for line in said), \
        p.explain()
    assert [(n.what, n.why) for n in p.not_checked if "GrpTRESMins" in n.what] == [
        ("slurmrestd v0.0.41 does not report what QOS normal has used of its GrpTRESMins "
         "cpu=50000", CHECKED_WHOLE),
        ("what your association (user alice, account proj) has used of its GrpTRESMins "
         f"cpu=20000 could not be read ({failed})", CHECKED_WHOLE)], p.explain()


def test_grp_tres_mins_of_several_holders_not_read_say_each_limit_checked_whole():
    p = run("#SBATCH -p batch -c 4 -t 1:00:00",
            orion(assoc=CHAIN, share_failed="orion: GET shares: HTTP 502 Bad Gateway"))
    [line] = [line for line in _under_table(p) if "GrpTRESMins" in line]
    assert line.count("not checked") == 1, p.explain()
    [n] = [n for n in p.not_checked if "GrpTRESMins" in n.what]
    assert n.what.startswith("what your association (user alice, account proj) and account "
                             "proj's association have used of their GrpTRESMins "
                             "(cpu=20000; cpu=100000) could not be read (") and \
        n.why == "the job is checked against each whole limit only", n


def test_no_line_of_the_recorded_views_says_not_checked_twice():
    # a Slurm site whose licenses were not read, an LSF one whose shared resources were not
    p = run('#BSUB -n 4\n#BSUB -W 1:00\n#BSUB -R "rusage[lic_x=1]"',
            lsf_site(lsinfo="", bhosts_s=""))
    assert "  wren not checked: -R rusage[lic_x=1]: the site's shared resources are not known " \
        "(LSF runs no job asking a resource it does not define)" in _under_table(p), p.explain()
    assert [(n.what, n.why) for n in p.not_checked] == [
        ("-R rusage[lic_x=1]", "the site's shared resources are not known (LSF runs no job "
                               "asking a resource it does not define)")], p.explain()
    views = [p]
    for script in ("#SBATCH -n 1 -t 1:00:00 -L matlab", ANY_PARTITION,
                   "#SBATCH -N 1 -t 0:10:00 --array=0-999 -L matlab"):
        views.append(run(script, vega(), selene(SSHARE_FAILS), *_recorded_federation(2)))
    assert "  vega not checked: --licenses=matlab: the site's licenses are not known (sbatch " \
        "refuses a license the site does not define)" in _under_table(views[1]), \
        views[1].explain()
    for view in views:
        said = [line for line in _under_table(view) if " not checked: " in line]
        assert said and all(line.count("not checked") == 1 for line in said), view.explain()


def test_requests_not_evaluated_are_listed_as_not_checked_under_explain():
    # an LSF job's same[] and a select[] term the hosts' outputs do not give, a queue's
    # RES_REQ cu[], a flux query of two properties, Slurm's --switches: each a line under
    # --explain saying "not checked" once, and none of them a note
    queue = WREN_RES_REQ.replace("rusage[mem=1000]", "rusage[mem=1000] cu[type=rack]")
    lsf = run('#BSUB -n 8\n#BSUB -W 1:00\n#BSUB -R "select[swp>1000] same[model]"',
              lsf_queue_site(queue_long=queue))
    flux = run("#flux: -N 1 -n 1 --requires='amd&intel' -t 60m", plover())
    slurm = run("#SBATCH -p compute -N 2 --switches=1@1:00:00 -t 1:00:00", rhea())
    expected = [
        (lsf, "wren", ["select[] term 'swp>1000': the hosts' recorded outputs (lshosts, "
                       "bhosts) do not give it (bsub decides)",
                       "-R same[model]: every host of the job must have the same value of "
                       "the resource; LSF applies it, so the job may start later than said",
                       "queue normal's RES_REQ cu[type=rack]: compute units, e.g. enclosures "
                       "or racks, are not read from the site; LSF applies it, so the job may "
                       "start later than said"]),
        (flux, "plover", ["--requires=amd&intel: only a query of one property is read; flux "
                          "may give the job none of the nodes counted for it"]),
        (slurm, "rhea", ["--switches=1@1:00:00: the site's network topology is not read; "
                         "under a tree topology Slurm holds the job until its nodes hang off "
                         "at most 1 leaf switch, for at most 1:00:00, then starts it where "
                         "it can"]),
    ]
    for view, site, lines in expected:
        shown = _under_table(view)
        for line in lines:
            assert f"  {site} not checked: {line}" in shown, view.explain()
        said = [line for line in shown if " not checked: " in line]
        assert all(line.count("not checked") == 1 for line in said), view.explain()
        notes = view.verdict(site).notes
        assert not [n for n in notes if any(line in n for line in lines)], notes
    assert ("-R same[model]", "every host of the job must have the same value of the "
            "resource; LSF applies it, so the job may start later than said") in \
        [(n.what, n.why) for n in lsf.not_checked], lsf.not_checked
