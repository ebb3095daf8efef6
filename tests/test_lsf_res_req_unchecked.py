"""LSF resource-requirement sections placement does not model: `same[]` (every host of the
job alike in a resource), `order[]` (the order LSF picks hosts in) and `cu[]` (compute-unit
placement: enclosures, racks). They reach an LSF site's bsub as written; placement says it
does not check them (the job's own, in its -R, and its queue's, in `bqueues -l` RES_REQ),
and a translation to another scheduler says each dropped. Worked on wren, the eighth sweep's
LSF site (w1-w2 XeonGold, w3-w4 EPYC)."""

from __future__ import annotations

import pytest
from test_placement_cases import run
from test_placement_cases8 import wren
from test_placement_cases14 import WREN_RES_REQ

from diamond_jupyter.dialects.lsf_commands import parse_queue_res_req
from diamond_jupyter.dialects.translate import translate

JOB = '#BSUB -n 8\n#BSUB -W 1:00\n#BSUB -R "{sections}"'
SAID = {
    "same": "every host of the job must have the same value of the resource; LSF applies "
            "it, so the job may start later than said",
    "order": "the order LSF picks hosts in; the hosts estimated here may not be the ones it "
             "picks",
    "cu": "compute units, e.g. enclosures or racks, are not read from the site; LSF applies "
          "it, so the job may start later than said",
}


@pytest.mark.parametrize("section", ["same[model]", "order[r15s:pg]",
                                     "cu[type=enclosure:maxcus=1]"])
def test_a_jobs_own_section_is_said_not_checked(section):
    v = run(JOB.format(sections=section), wren()).verdict("wren")
    assert v.feasible, v.reasons
    kind = section.split("[")[0]
    assert f"-R {section}: {SAID[kind]}" in v.not_checked, v.not_checked
    assert not [n for n in v.notes if section in n], v.notes


def test_sections_beside_a_read_one_are_each_said_and_the_read_one_still_holds():
    v = run(JOB.format(sections="select[model==EPYC] same[model] cu[pref=minavail]"),
            wren()).verdict("wren")
    assert "-R same[model]: " + SAID["same"] in v.not_checked
    assert "-R cu[pref=minavail]: " + SAID["cu"] in v.not_checked
    # (guard) the select[] is read: the XeonGold hosts are passed over
    assert v.feasible


def test_a_queues_res_req_sections_are_said_not_checked():
    text = WREN_RES_REQ.replace("rusage[mem=1000]",
                                "rusage[mem=1000] same[model] order[-slots] cu[type=rack]")
    assert parse_queue_res_req(text)["normal"]["cu"] == "[type=rack]"
    site = wren(queue_long=text)
    assert site[1].partitions[0].res_req_unchecked == [
        "same[model]", "order[-slots]", "cu[type=rack]"]
    v = run("#BSUB -n 8\n#BSUB -W 1:00", site).verdict("wren")
    for section in ("same[model]", "order[-slots]", "cu[type=rack]"):
        kind = section.split("[")[0]
        assert f"queue normal's RES_REQ {section}: {SAID[kind]}" in v.not_checked, \
            v.not_checked
    # a queue without them: nothing said
    plain = run("#BSUB -n 8\n#BSUB -W 1:00", wren(queue_long=WREN_RES_REQ)).verdict("wren")
    assert not [n for n in plain.not_checked if "RES_REQ" in n], plain.not_checked


@pytest.mark.parametrize("target", ["slurm", "pbs", "flux", "sge"])
def test_a_translation_says_each_dropped(target):
    """(guard) to another scheduler each section is said dropped, by name."""
    text = ('#!/bin/bash\n#BSUB -n 4\n#BSUB -R "same[type] order[r15s] cu[maxcus=2]"\n'
            "./a\n")
    script, warnings, _ = translate(text, target, "lsf")
    for section in ("same[type]", "order[r15s]", "cu[maxcus=2]"):
        assert section not in script
        assert any(w.startswith("dropped: ") and section in w and f"no {target} equivalent"
                   in w for w in warnings), warnings


def test_lsf_keeps_them_as_written():
    script, _, _ = translate('#!/bin/bash\n#BSUB -n 4\n#BSUB -R "same[type] cu[maxcus=2]"\n'
                             "./a\n", "lsf", "lsf")
    assert 'same[type] cu[maxcus=2]"' in script, script


def test_sections_inside_a_compound_requirements_terms_are_said_not_checked():
    """`same[]`, `order[]`, `cu[]` in a term of a compound -R: each said, naming its term."""
    v = run('#BSUB -W 1:00\n#BSUB -R "2*{select[model==EPYC] same[model]} + '
            '4*{order[r15s] cu[type=rack]}"', wren()).verdict("wren")
    assert v.feasible, v.reasons
    for term, section in ((1, "same[model]"), (2, "order[r15s]"), (2, "cu[type=rack]")):
        kind = section.split("[")[0]
        assert (f"-R {section} (term {term} of the compound requirement): {SAID[kind]}"
                in v.not_checked), v.not_checked
    # (guard) the select[] of term 1 is no such section: not said not checked
    assert not [n for n in v.not_checked if "select[" in n], v.not_checked


def test_a_compound_term_without_them_says_nothing():
    v = run('#BSUB -W 1:00\n#BSUB -R "2*{span[hosts=1]} + 4*{rusage[mem=100]}"',
            wren()).verdict("wren")
    assert not [n for n in v.not_checked if "-R " in n], v.not_checked
