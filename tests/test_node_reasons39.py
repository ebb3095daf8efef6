"""`place --explain` names the nodes that take no job by state with the admin's reason on
PBS, LSF, Grid Engine and Flux too, as on Slurm (`drained c03 (bad disk)`).

Each scheduler's own word, read from outputs of its real formats: PBS `pbsnodes -a -F json`
(`comment` of an offline or down vnode; Torque's text `note`), LSF `bhosts -l` (its ADMIN
ACTION COMMENT, `badmin hclose -C`, asked for closed and unavailable hosts alone), Grid
Engine `qstat -f -xml` (queue instance states d, E, u, a ... in words; `-explain E`'s
`<message>`), Flux `flux resource drain -o` (drained or draining, the drain reason; the
scheduler's `resource list` says only down). Before, those nodes were named by state
alone ("closed_adm h[01-02]") or, for PBS chunks, not at all."""

from __future__ import annotations

import json
from datetime import timezone

from test_placement_cases import NOW, reasons, run

from diamond_jupyter.config import SiteConfig
from diamond_jupyter.dialects.flux_commands import FluxCommands, parse_drained
from diamond_jupyter.dialects.lsf_commands import LsfCommands, parse_host_comments
from diamond_jupyter.dialects.pbs_commands import PbsCommands
from diamond_jupyter.dialects.pbs_text import parse_wrapper_nodes
from diamond_jupyter.dialects.sge_commands import SgeCommands, parse_queue_errors

# ---- PBS ---------------------------------------------------------------------------------------


def _vnode(state: str, comment: str | None = None) -> dict:
    a = {"Mom": "m", "Port": 15002, "ntype": "PBS", "state": state, "pcpus": 8,
         "resources_available": {"ncpus": 8, "mem": "32gb"}, "resources_assigned": {},
         "resv_enable": "True", "sharing": "default_shared"}
    return a | ({"comment": comment} if comment else {})


PBSNODES = json.dumps({"timestamp": 1772355600, "pbs_version": "2022.1.3", "pbs_server": "pbs",
                       "nodes": {"n01": _vnode("offline", "disk swap"),
                                 "n02": _vnode("offline", "disk swap"),
                                 "n03": _vnode("down", "node down: communication closed"),
                                 "n04": _vnode("free")}})
QUEUES = json.dumps({"Queue": {"workq": {
    "queue_type": "Execution", "total_jobs": 0, "enabled": "True", "started": "True",
    "state_count": "Transit:0 Queued:0 Held:0 Waiting:0 Running:0 Exiting:0 Begun:0 "}}})


def pbs_site():
    snap = PbsCommands(tz=timezone.utc).parse_snapshot(
        "orion", {"nodes": PBSNODES, "queues": QUEUES, "queue": ""})
    return SiteConfig(name="orion", scheduler="pbs"), snap.model_copy(update={"taken_at": NOW})


def test_pbs_comment_is_read_as_the_nodes_reason():
    _, snap = pbs_site()
    assert [(n.name, n.state, n.reason) for n in snap.nodes] == [
        ("n01", "offline", "disk swap"), ("n02", "offline", "disk swap"),
        ("n03", "down", "node down: communication closed"), ("n04", "free", None)]


def test_torque_text_note_and_pbs_text_comment_are_read():
    text = ("n01\n     state = offline\n     np = 8\n     note = fan failed\n\n"
            "n02\n     state = down,offline\n     np = 8\n     comment = off by admin\n\n"
            "n03\n     state = free\n     np = 8\n")
    assert [(n.name, n.reason) for n in parse_wrapper_nodes(text)] == [
        ("n01", "fan failed"), ("n02", "off by admin"), ("n03", None)]


def test_pbs_chunks_refused_name_the_held_vnodes_by_state_with_the_comment():
    said = reasons(run("#PBS -l select=2:ncpus=8\n#PBS -l walltime=1:00:00", pbs_site()),
                   "orion")
    # Before: "... cannot hold the chunks (2:ncpus=8)", naming none of them
    assert said == ("queue workq: its usable vnodes cannot hold the chunks (2:ncpus=8) "
                    "(others offline n[01-02] (disk swap); down n03 (node down: "
                    "communication closed))")


# ---- LSF ---------------------------------------------------------------------------------------

BHOSTS_L = """HOST  h01
STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW
closed_Adm     100.00     -     16      0      0      0      0      0      -
 ADMIN ACTION COMMENT: "replacing DIMM"

 CURRENT LOAD USED FOR SCHEDULING:
              r15s   r1m  r15m    ut    pg    io   ls    it   tmp   swp   mem  slots
 Total         0.0   0.0   0.0    0%   0.0     0    0 13801  191G  4.0G 61.2G     16
 Reserved      0.0   0.0   0.0    0%   0.0     0    0     0    0M    0M    0M      -

HOST  h02
STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW
closed_Adm     100.00     -     16      0      0      0      0      0      -
 ADMIN ACTION COMMENT: "replacing DIMM"

HOST  h03
STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW
unavail        100.00     -     16      0      0      0      0      0      -
"""


def _record(host: str, status: str) -> dict:
    return {"HOST_NAME": host, "STATUS": status, "MAX": "16", "NJOBS": "0", "RUN": "0",
            "SSUSP": "0", "USUSP": "0", "RSV": "0"}


def lsf_site(comments: str = BHOSTS_L):
    hosts = ("h01", "h02", "h03", "h04")
    states = ("closed_Adm", "closed_Adm", "unavail", "ok")
    snap = LsfCommands().parse_snapshot("nova", {
        "hosts": json.dumps({"COMMAND": "bhosts", "HOSTS": 4, "RECORDS": [
            _record(h, s) for h, s in zip(hosts, states, strict=True)]}),
        "lshosts": json.dumps({"COMMAND": "lshosts", "HOSTS": 4, "RECORDS": [
            {"HOST_NAME": h, "type": "X86_64", "model": "Intel_EM64T", "ncpus": "16",
             "maxmem": "64G", "RESOURCES": "(mg)"} for h in hosts]}),
        "queues": json.dumps({"COMMAND": "bqueues", "QUEUES": 1, "RECORDS": [
            {"QUEUE_NAME": "normal", "STATUS": "Open:Active", "MAX": "-", "RUNLIMIT": "-"}]}),
        "queue": "", "host_comments": comments})
    return SiteConfig(name="nova", scheduler="lsf"), snap.model_copy(update={"taken_at": NOW})


def test_lsf_admin_action_comment_is_read_by_host():
    assert parse_host_comments(BHOSTS_L) == {"h01": "replacing DIMM", "h02": "replacing DIMM"}
    assert parse_host_comments("") == {}
    # asked after the snapshot's batch, of the closed and unavailable hosts alone, each an
    # argument (never in the shell text), never failing
    lsf = LsfCommands()
    argv = lsf.followup_argvs({"hosts": json.dumps({"RECORDS": [
        _record("h01", "closed_Adm"), _record("h03", "unavail"), _record("h04", "ok"),
        _record("h05", "closed_Full")]})})["host_comments"]
    assert argv == ["sh", "-c", 'bhosts -l "$@" 2>/dev/null; exit 0', "sh", "h01", "h03"]
    assert lsf.followup_argvs({"hosts": json.dumps({"RECORDS": [_record("h04", "ok")]})}) == {}


def test_lsf_hosts_held_are_named_with_the_admins_comment():
    said = reasons(run("#BSUB -n 32\n#BSUB -W 1:00\n#BSUB -q normal", lsf_site()), "nova")
    assert said == ("needs 2 hosts, queue normal has only 1 usable (others closed_adm "
                    "h[01-02] (replacing DIMM); unavail h03)")
    # no comment read (an LSF that printed none): by state alone, as before
    said = reasons(run("#BSUB -n 32\n#BSUB -W 1:00\n#BSUB -q normal", lsf_site("")), "nova")
    assert said.endswith("(others closed_adm h[01-02]; unavail h03)")


# ---- Flux --------------------------------------------------------------------------------------

DRAIN = "drained|n[01-02]|replacing DIMM\ndrained*|n03|\ndraining|n05|bad fan\n"


def flux_site(drained: str = DRAIN):
    snap = FluxCommands().parse_snapshot("flux1", {
        "resources": "free||1|16|0|n04\ndown||3|48|0|n[01-03]\n", "queues": "",
        "queue": "", "queue_config": "{}", "drained": drained})
    return SiteConfig(name="flux1", scheduler="flux"), snap.model_copy(update={"taken_at": NOW})


def test_flux_drain_reasons_are_read_by_node():
    assert parse_drained(DRAIN) == {"n01": ("drained", "replacing DIMM"),
                                    "n02": ("drained", "replacing DIMM"),
                                    "n03": ("drained", "offline"), "n05": ("draining", "bad fan")}
    _, snap = flux_site()
    assert [(n.name, n.state, n.reason) for n in snap.nodes] == [
        ("n04", "free", None), ("n01", "drained", "replacing DIMM"),
        ("n02", "drained", "replacing DIMM"), ("n03", "drained", "offline")]
    # a flux refusing -o (an error, said on stderr and dropped): nothing read
    assert parse_drained("") == {}
    # asked after the snapshot's batch where nodes are down alone
    flux = FluxCommands()
    assert "drained" in flux.followup_argvs({"resources": "down||3|48|0|n[01-03]\n"})
    assert flux.followup_argvs({"resources": "free||1|16|0|n04\n"}) == {}


def test_flux_drained_nodes_are_named_with_the_drain_reason():
    said = reasons(run("#FLUX: -N 2\n#FLUX: -n 32\n#FLUX: -t 60m", flux_site()), "flux1")
    # Before: "others down n[01-03]"
    assert said == ("needs 2 nodes, the site has only 1 usable (others drained n[01-02] "
                    "(replacing DIMM); drained n03 (offline))")


# ---- Grid Engine -------------------------------------------------------------------------------

ERRORS = ("<?xml version='1.0'?><job_info><queue_info><Queue-List><name>all.q@s2</name>"
          "<qtype>BIP</qtype><slots_used>0</slots_used><slots_resv>0</slots_resv>"
          "<slots_total>16</slots_total><load_avg>0.01</load_avg><arch>lx-amd64</arch>"
          "<state>E</state><message>queue all.q marked QERROR as result of job 42's "
          "failure at host s2</message></Queue-List></queue_info><job_info></job_info>"
          "</job_info>")


def ge_site(states: dict[str, str], errors: str = ERRORS):
    hosts = ("s1", "s2", "s3")
    inst = "".join(
        f"<Queue-List><name>all.q@{h}</name><qtype>BIP</qtype><slots_used>0</slots_used>"
        "<slots_resv>0</slots_resv><slots_total>16</slots_total><load_avg>0.5</load_avg>"
        f"<arch>lx-amd64</arch><state>{states.get(h, '')}</state></Queue-List>" for h in hosts)
    qhost = "<?xml version='1.0'?><qhost><host name='global'></host>" + "".join(
        f"<host name='{h}'><hostvalue name='arch_string'>lx-amd64</hostvalue>"
        "<hostvalue name='num_proc'>16</hostvalue><hostvalue name='load_avg'>"
        f"{'-' if 'u' in states.get(h, '') else '0.5'}</hostvalue>"
        "<hostvalue name='mem_total'>64.0G</hostvalue></host>" for h in hosts) + "</qhost>"
    snap = SgeCommands(tz=timezone.utc).parse_snapshot("delta", {
        "queue": f"<?xml version='1.0'?><job_info><queue_info>{inst}</queue_info>"
                 "<job_info></job_info></job_info>", "hosts": qhost,
        "queues": "qname all.q\nhostlist s1 s2 s3\npe_list smp\nh_rt 72:00:00\nslots 16\n",
        "pes": "smp\n", "pe_rules": "pe_name smp\nallocation_rule $pe_slots\n",
        "queue_errors": errors})
    return SiteConfig(name="delta", scheduler="sge"), snap.model_copy(update={"taken_at": NOW})


def test_ge_explain_e_messages_are_read_by_host_and_queue():
    assert parse_queue_errors(ERRORS) == {"s2": {"all.q": (
        "queue all.q marked QERROR as result of job 42's failure at host s2")}}
    assert parse_queue_errors("") == {} and parse_queue_errors("error: no such option") == {}
    # asked after the snapshot's batch, only where an instance is in error (a job's Eqw
    # is not one)
    sge = SgeCommands()
    queue = ERRORS.replace("</Queue-List>", "<job_list state='pending'><state>Eqw</state>"
                                            "</job_list></Queue-List>")
    assert "-explain E" in sge.followup_argvs({"queue": queue})["queue_errors"][2]
    assert "queue_errors" not in sge.followup_argvs({"queue": queue.replace(
        "<state>E</state>", "<state>d</state>")})


def test_ge_hosts_held_are_named_with_their_queue_instance_states_in_words():
    _, snap = ge_site({"s1": "d", "s2": "E", "s3": "au"})
    assert [(n.name, n.state, n.reason) for n in snap.nodes] == [
        ("s1", "drain", "all.q disabled (d)"),
        ("s2", "drain", "all.q in error (E): queue all.q marked QERROR as result of job "
                        "42's failure at host s2"),
        ("s3", "down", "all.q in load alarm (a), unknown (u)")]


def test_ge_placement_names_the_held_hosts_with_why():
    said = reasons(run("#$ -pe smp 4\n#$ -l h_rt=1:00:00", ge_site({"s1": "d", "s2": "E",
                                                                   "s3": "u"})), "delta")
    # Before: "drained s[1-2]; down s3", not saying disabled from in error; a long reason
    # cut as Slurm's is
    assert said.endswith(
        "needs 1 host, queue all.q has only 0 usable (others drained s1 (all.q disabled (d)); "
        "drained s2 (all.q in error (E): queue all.q marked QERROR as result of…); down s3 "
        "(all.q unknown (u)))"), said


# ---- a long reason in full, once, under --explain ------------------------------------------------

GE_FULL = ("s2: all.q in error (E): queue all.q marked QERROR as result of job 42's failure at "
           "host s2")


def test_a_reason_cut_in_the_row_is_given_in_full_once_under_explain():
    p = run("#$ -pe smp 4\n#$ -l h_rt=1:00:00", ge_site({"s1": "d", "s2": "E", "s3": "u"}))
    # Before: only "... marked QERROR as result of…" anywhere, the job and host cut off
    assert p.verdict("delta").node_reasons == [GE_FULL]
    text = p.explain()
    assert text.count(GE_FULL) == 1 and f"  delta node reason in full: {GE_FULL}" in \
        text.splitlines(), text
    # a short reason, shown whole in the row, is not repeated
    assert "node reason in full: s1" not in text and "(all.q disabled (d))" in text


def test_a_reason_in_full_is_written_out_as_untrusted_text():
    forged = "disk swap\n  orion refused: nothing\x1b[2J; " + "x" * 60
    nodes = json.loads(PBSNODES)
    nodes["nodes"]["n03"] = _vnode("offline", forged)
    snap = PbsCommands(tz=timezone.utc).parse_snapshot(
        "orion", {"nodes": json.dumps(nodes), "queues": QUEUES, "queue": ""})
    p = run("#PBS -l select=2:ncpus=8\n#PBS -l walltime=1:00:00",
            (SiteConfig(name="orion", scheduler="pbs"), snap.model_copy(update={"taken_at": NOW})))
    [said] = p.verdict("orion").node_reasons
    assert said.startswith("n03: disk swap\\x0a  orion refused: nothing") and "x" * 60 in said
    text = p.explain()
    # the row's cut reason too: before, its newline started a forged "refused" line
    assert "\x1b" not in text and "\n  orion refused: nothing" not in text, text
    assert "(disk swap\\x0a  orion refused: nothing\\x1b[2J; x" in text, text
