"""Workflow files, third sweep: shapes and spellings the earlier sweeps left out, each with
its answer worked out by hand: a diamond whose join reads its grand-parent's file, a fan-out
and fan-in of 100 steps, one step in every dialect, step templates shared through anchors
and merge keys (also inside an input, and a list of templates), names that differ only in
their separators, a gang of one, a no-break space from a web page, an empty list item, a
`dialect:` that is not the script's, and an `auto` step whose inputs are on two sites
(placement counts both copies). Refusals are one line naming the field and its line, and
`diamond workflow run` exits 2 with them (no site is contacted)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
import sweep_helpers
from sweep_helpers import SITES, load, refused

from diamond_jupyter.cli import main
from diamond_jupyter.workflow.engine import WorkflowEngine
from diamond_jupyter.workflow.model import load_workflow

# -- 1. valid files ------------------------------------------------------------------------------

def test_a_diamond_whose_join_reads_its_grand_parents_file_too():
    """An input may come from any step upstream: the join reads the mesh its grand-parent
    wrote beside each branch's result; `needs` stays as written (no edge to prep)."""
    wf = load("""\
        name: diamond
        steps:
          - name: prep
            site: alpha
            script: "./mesh > mesh.h5"
            outputs: [mesh.h5]
          - {name: left, needs: [prep], inputs: [{from: prep, path: mesh.h5}], script: ./l}
          - {name: right, needs: [prep], inputs: [{from: prep, path: mesh.h5}], script: ./r}
          - name: join
            needs: [left, right]
            inputs:
              - {from: prep, path: mesh.h5}
              - {from: left, path: out.csv, as: l.csv}
              - {from: right, path: out.csv, as: r.csv}
            script: ./join l.csv r.csv mesh.h5
        """)
    assert wf.order() == ["prep", "left", "right", "join"]
    join = wf.step("join")
    assert join.needs == ["left", "right"]
    assert [(i.from_, i.dest) for i in join.inputs] == [
        ("prep", "mesh.h5"), ("left", "l.csv"), ("right", "r.csv")]
    assert wf.upstream("join") == {"prep", "left", "right"}


def test_a_fan_out_and_fan_in_of_100_steps():
    members = [f"member-{i:03d}" for i in range(100)]
    lines = ["name: ensemble", "steps:", "  - {name: init, script: ./init, outputs: [ic/]}"]
    lines += [f"  - {{name: {m}, needs: [init], inputs: [{{from: init, path: ic/{i}.nc, "
              f"size: 2G}}], script: ./run {i}, outputs: [out.nc]}}"
              for i, m in enumerate(members)]
    lines += ["  - name: stats", f"    needs: [{', '.join(members)}]", "    inputs:"]
    lines += [f"      - {{from: {m}, path: out.nc, as: runs/{i}.nc}}"
              for i, m in enumerate(members)]
    lines += ["    script: ./stats runs/"]
    wf = load_workflow("\n".join(lines) + "\n", sites=SITES)
    assert wf.order() == ["init", *members, "stats"]
    assert wf.downstream("init") == {*members, "stats"}
    stats = wf.step("stats")
    assert len(stats.inputs) == 100 and stats.inputs[99].dest == "runs/99.nc"
    assert wf.step("member-042").inputs[0].size == 2 << 30


def test_a_step_in_every_dialect_in_one_file_each_asks_five_minutes():
    wf = load("""\
        name: every-dialect
        steps:
          - name: slurm
            script: |
              #!/bin/bash
              #SBATCH -t 5
              ./s
          - name: pbs
            needs: [slurm]
            script: |
              #!/bin/bash
              #PBS -l walltime=00:05:00
              ./p
          - name: lsf
            needs: [pbs]
            script: |
              #!/bin/bash
              #BSUB -W 5
              ./l
          - name: flux
            needs: [lsf]
            script: |
              #!/bin/bash
              #FLUX: -t 5m
              ./f
          - name: sge
            needs: [flux]
            script: |
              #!/bin/bash
              #$ -l h_rt=00:05:00
              ./g
          - name: plain
            needs: [sge]
            script: ./summarise
        """)
    assert wf.order() == ["slurm", "pbs", "lsf", "flux", "sge", "plain"]
    assert [wf.step(n).spec().resources.walltime_s for n in wf.order()] == \
        [300, 300, 300, 300, 300, None]
    assert [wf.step(n).spec().source_dialect for n in wf.order()[:5]] == \
        ["slurm", "pbs", "lsf", "flux", "sge"]


def test_fault_of_a_list_of_templates_the_first_that_gives_a_key_wins():
    """`<<: [*gpu, *defaults]`: YAML's merge gives a key the value of the earlier mapping,
    and the step's own keys win over both. The loader let the later template win (PyYAML's
    own merge): the GPU step went to alpha, silently."""
    wf = load("""\
        x-defaults: &defaults
          site: alpha
          retries: 2
          on_failure: stop
        x-gpu: &gpu
          site: gamma
        name: templates
        steps:
          - <<: *defaults
            name: cpu
            script: ./cpu
          - <<: [*gpu, *defaults]
            name: gpu
            needs: [cpu]
            script: ./gpu
          - <<: [*gpu, *defaults]
            name: mine
            site: beta
            retries: 0
            script: ./mine
        """)
    got = [(s.name, s.site, s.retries, s.on_failure) for s in wf.steps]
    assert got == [("cpu", "alpha", 2, "stop"), ("gpu", "gamma", 2, "stop"),
                   ("mine", "beta", 0, "stop")]


def test_a_template_for_an_input_and_an_aliased_needs_list():
    wf = load("""\
        x-mesh: &mesh {from: prep, path: mesh/grid.h5, size: 3.5 GiB}
        name: reuse
        steps:
          - {name: prep, script: ./prep}
          - name: a
            needs: &after-prep [prep]
            inputs: [{<<: *mesh, as: grid.h5}]
            script: ./a
          - name: b
            needs: *after-prep
            inputs: [*mesh]
            script: ./b
        """)
    a, b = wf.step("a"), wf.step("b")
    assert (a.needs, a.inputs[0].dest, a.inputs[0].size) == (["prep"], "grid.h5",
                                                             int(3.5 * (1 << 30)))
    assert (b.needs, b.inputs[0].dest) == (["prep"], "mesh/grid.h5")


def test_names_that_differ_only_in_their_separators_are_three_steps():
    """sim.1, sim_1 and sim-1 stay distinct wherever they go: each job is named as its step
    with its own token, and each step runs in its own directory."""
    wf = load("""\
        name: seps
        steps:
          - {name: sim.1, script: ./a}
          - {name: sim_1, script: ./a}
          - {name: sim-1, needs: [sim.1, sim_1], script: ./a}
        """)
    assert wf.order() == ["sim.1", "sim_1", "sim-1"]
    assert [wf.step(n).spec().name for n in wf.order()] == ["sim.1", "sim_1", "sim-1"]


def test_a_gang_of_one_is_a_step_held_until_its_site_can_start_it():
    wf = load("""\
        name: lonely
        steps:
          - {name: solo, gang: g1, site: alpha, script: ./a}
        """)
    assert wf.gangs() == {"g1": ["solo"]}


def test_a_script_with_other_letters_and_a_windows_file_with_tabs_inside_the_script(tmp_path):
    text = ("\ufeffname: unicode\r\nsteps:\r\n  - name: pi\r\n    script: |\r\n"
            "      #!/bin/bash\r\n      echo 'π≈3.14' > ω.txt\r\n\tcat ω.txt\r\n")
    bad = tmp_path / "tabbed.yaml"
    bad.write_bytes(text.encode())
    assert "tabs" in refused(bad)  # a tab where YAML wants the block's indentation
    good = tmp_path / "w.yaml"
    good.write_bytes(text.replace("\tcat", "      \tcat").encode())
    wf = load_workflow(good, sites=SITES)
    assert wf.step("pi").script == "#!/bin/bash\necho 'π≈3.14' > ω.txt\n\tcat ω.txt\n"


def test_a_yaml_directive_and_end_marker_around_one_workflow_and_json():
    wf = load("%YAML 1.1\n---\nname: w\nsteps:\n  - {name: a, script: ./a}\n...\n")
    assert wf.order() == ["a"]
    wf = load('{"name": "w", "steps": [{"name": "a", "script": "./a", "retries": 10}]}')
    assert wf.step("a").retries == 10


def test_an_auto_step_with_inputs_on_two_sites_counts_both_copies():
    """The engine sums a step's input bytes by the site they are on; placement charges a
    site the copies from every other site: at gamma both, at alpha only beta's."""
    from test_placement import NOW, alpha, beta, gamma, spec, verdict

    from diamond_jupyter.placement import StageData, place

    wf = load("""\
        name: two-sources
        steps:
          - {name: a, site: alpha, script: ./a}
          - {name: b, site: beta, script: ./b}
          - name: merge
            needs: [a, b]
            inputs: [{from: a, path: x.h5, size: 8G}, {from: a, path: y.h5, size: 2G},
                     {from: b, path: z.h5, size: 5G}]
            script: ./merge
        """)
    on = {"a": "alpha", "b": "beta"}
    engine = SimpleNamespace(_planned_site=lambda rec, wf, name: on[name])
    sources = WorkflowEngine._sources(engine, None, wf, "merge")
    assert sources == {"alpha": 10 << 30, "beta": 5 << 30}
    bw = {("alpha", "gamma"): 8000.0, ("beta", "gamma"): 4000.0, ("beta", "alpha"): 1000.0}
    p = place(spec(), [alpha(), beta(), gamma()], now=NOW,
              stage_data=StageData(sources, bw))
    g, a = verdict(p, "gamma"), verdict(p, "alpha")
    assert g.stage_in_s == pytest.approx((10 << 30) * 8 / 8000e6 + (5 << 30) * 8 / 4000e6)
    assert a.stage_in_s == pytest.approx((5 << 30) * 8 / 1000e6)
    assert NOW.tzinfo is timezone.utc and isinstance(NOW, datetime)


# -- 2. refused files ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,want", [
    # a cycle of three with a step hanging off it
    ("name: c\nsteps:\n  - {name: a, needs: [c], script: x}\n  - {name: b, needs: [a], "
     "script: x}\n  - {name: c, needs: [b], script: x}\n  - {name: d, needs: [c], script: x}\n",
     "has a cycle: a -> b -> c -> a"),
    # gang members waiting on each other through a step between them
    ("name: g\nsteps:\n  - {name: a, gang: g1, script: x}\n  - {name: m, needs: [a], script: x}"
     "\n  - {name: b, gang: g1, needs: [m], script: x}\n",
     "gang 'g1': step 'b' waits for 'a' (through 'm') of the same gang, but a gang's steps "
     "start together (line 5)"),
    ("name: r\nsteps:\n  - {name: a, retries: -1, script: x}\n",
     "steps['a'].retries: retries must be a whole number from 0 to 10, not -1 (line 3)"),
    ("name: r\nsteps:\n  - {name: a, retries: 1000000, script: x}\n",
     "steps['a'].retries: retries must be a whole number from 0 to 10, not 1000000 (line 3)"),
    ("name: r\nsteps:\n  - {name: a, retries: 1, on_failure: Resubmit-Elsewhere, script: x}\n",
     "steps['a'].on_failure: Input should be 'resubmit-elsewhere' or 'stop'"),
    ("name: u\nsteps:\n  - {name: präp, script: x}\n",
     "steps['präp'].name: 'präp' is not a valid name"),
    ("name: u\nsteps:\n  - {name: pre–proc, script: x}\n",  # an en dash from a document
     "steps['pre–proc'].name: 'pre–proc' is not a valid name"),
    ("name: d\nsteps:\n  - {name: a, script: x}\n---\n# the next one\n",
     "a second YAML document (`---`) at line 4, column 1"),
    ("name: m\nsteps:\n  - {<<: *defaults, name: a, script: x}\n",
     "not valid YAML at line 3, column 10: found undefined alias 'defaults'"),
    ("x-site: &s alpha\nname: m\nsteps:\n  - {<<: *s, name: a, script: x}\n",
     "expected a mapping or list of mappings for merging, but found scalar"),
    ("name: x\nsteps:\n  - {name: a, x-owner: alice, script: x}\n",
     "steps['a'].x-owner: unknown field (accepted: name, script, script_file, site, needs, "
     "inputs, outputs, gang, retries, on_failure, dialect) (line 3)"),
    ("name: s\nsteps:\n  - {name: a, site: all, script: x}\n", "unknown site 'all'"),
    ("name: s\nsteps:\n  - {name: a, script: x}\n  - {name: b, needs: [a], inputs: [{from: a, "
     "path: x, size: -5}], script: x}\n",
     "steps['b'].inputs[0].size: size -5 is not a number of bytes: a whole number from "
     "0 to 9007199254740992 (e.g. 1048576, 100M, 2G) (line 4)"),
])
def test_a_refused_file_names_its_problem(text, want):
    assert want in refused(text)


def test_fault_a_no_break_space_from_a_web_page_is_named_where_it_is():
    """A no-break space (U+00A0) in the indentation, as a page or a document gives it: YAML
    takes it for text, and PyYAML's complaint pointed at the next line's colon ('mapping
    values are not allowed here'); now the character and its own line are named."""
    msg = refused("name: w\nsteps:\n\u00a0 - name: a\n    script: ./a\n")
    assert msg.endswith("line 3, column 1 holds a NO-BREAK SPACE (U+00A0), which YAML does "
                        "not read as a space (text copied from a web page or a document has "
                        "them): type a plain space there")
    assert "not valid YAML at line 4, column 11" in msg
    msg = refused("name: w\nsteps:\n  - name:\u2009a\n    script: ./a\n")
    assert "line 3, column 10 holds a THIN SPACE (U+2009)" in msg


@pytest.mark.parametrize("field,body,want", [
    ("needs", "  - {name: a, script: x}\n  - name: b\n    needs:\n      - a\n      -\n"
     "    script: x\n",
     "steps['b'].needs: needs[1] is empty (a `-` with nothing after it): write the name of a "
     "step there, or remove the line (line 6)"),
    ("outputs", "  - name: a\n    outputs:\n      - out.h5\n      -\n    script: x\n",
     "steps['a'].outputs: outputs[1] is empty (a `-` with nothing after it): write a path "
     "there, or remove the line (line 5)"),
])
def test_fault_an_empty_list_item_says_it_is_empty(field, body, want):
    """A `-` left alone on its line (a name deleted, the dash kept) was 'Input should be a
    valid string': it says which item is empty and what to do."""
    assert want in refused(f"name: w\nsteps:\n{body}")


def test_fault_a_dialect_that_is_not_the_scripts_is_refused_not_read_as_comments():
    """`dialect: pbs` over a script of #SBATCH lines parsed it as PBS: every directive was a
    comment, and the step ran without its time limit, nodes or memory. Now refused, naming
    the script's own dialect; a matching one (in any spelling) is read as before."""
    text = """\
        name: w
        steps:
          - name: a
            dialect: {dialect}
            script: |
              #!/bin/bash
              #SBATCH -t 30
              #SBATCH -N 2
              ./a
        """
    assert refused(text.format(dialect="pbs")).startswith(
        "step 'a': dialect: pbs, but its script's directives are slurm (2 lines) and none is "
        "pbs's: they would be read as comments; write dialect: slurm, or leave `dialect:` "
        "out (the script's own is found) (line 5)")
    for spelled in ("slurm", "SLURM"):
        spec = load(text.format(dialect=spelled)).step("a").spec()
        assert (spec.resources.walltime_s, spec.resources.nodes) == (1800, 2)
    # a plain script under a named dialect is that dialect's, without directives
    plain = load("name: w\nsteps:\n  - {name: a, dialect: lsf, script: ./a}\n")
    assert plain.step("a").spec().resources.walltime_s is None


# -- 3. the command line -------------------------------------------------------------------------

cfg = sweep_helpers.one_unreachable_site


@pytest.mark.parametrize("text,want", [
    ("name: w\nsteps:\n\u00a0 - {name: a, script: x}\n", "holds a NO-BREAK SPACE (U+00A0)"),
    ("name: w\nsteps:\n  - name: a\n    outputs:\n      -\n    script: x\n",
     "outputs[0] is empty"),
    ("name: w\nsteps:\n  - {name: a, dialect: sge, script: \"#!/bin/bash\\n#BSUB -W 5\\nx\\n\"}\n",
     "dialect: sge, but its script's directives are lsf (1 line)"),
])
def test_diamond_workflow_run_exits_2_with_the_reason(cfg, tmp_path, capsys, text, want):
    f = tmp_path / "w.yaml"
    f.write_text(text, encoding="utf-8")
    assert main(["workflow", "run", str(f), "--config", str(cfg), "--json"]) == 2
    out, err = capsys.readouterr()
    assert want in err and err.count("\n") == 1
    assert json.loads(out)["reason"] == "bad-input" and want in json.loads(out)["message"]


def test_fault_an_anchor_defined_below_its_first_use_says_to_move_it():
    """Templates kept at the end of the file: PyYAML says 'found undefined alias' of an
    anchor the user can see defined; now its line is named and the fix said."""
    msg = refused("name: w\nsteps:\n  - <<: *common\n    name: a\n    script: ./a\n"
                  "x-common: &common\n  site: alpha\n")
    assert msg == ("the workflow: not valid YAML at line 3, column 9: found undefined alias "
                   "'common'; its anchor &common is on line 6, below: YAML reads an alias "
                   "only after its anchor, so move the anchor above its first use")
    assert refused("name: w\nsteps:\n  - {<<: *commn, name: a, script: x}\nx-c: &common {}\n"
                   ).endswith("found undefined alias 'commn'; no anchor &commn is defined in "
                              "the file")


@pytest.mark.parametrize("text,want,line", [
    ("name: g\nsteps:\n  - {name: ocean1, gang: ocean, script: x}\n"
     "  - {name: ocean2, gang: ocean, needs: [atmos2], script: x}\n"
     "  - {name: atmos1, gang: atmos, needs: [ocean1], script: x}\n"
     "  - {name: atmos2, gang: atmos, script: x}\n",
     "workflow 'g': gang 'ocean' waits for gang 'atmos' (ocean2 needs atmos2); gang 'atmos' "
     "waits for gang 'ocean' (atmos1 needs ocean1): a gang starts only when every one of its "
     "steps can, so none of them ever starts; put the steps in one gang, or take one out of "
     "its gang", 4),
    ("name: g\nsteps:\n  - {name: a1, gang: A, script: x}\n"
     "  - {name: couple, needs: [b2], script: x}\n"
     "  - {name: a2, gang: A, needs: [couple], script: x}\n"
     "  - {name: b1, gang: B, needs: [a1], script: x}\n  - {name: b2, gang: B, script: x}\n",
     "step 'couple' waits for gang 'B' (couple needs b2); gang 'B' waits for gang 'A' (b1 "
     "needs a1); gang 'A' waits for step 'couple' (a2 needs couple)", 4),
])
def test_fault_gangs_that_wait_on_each_other_are_refused(text, want, line):
    """Two gangs, each with a step that needs a step of the other: no step waits for itself,
    but a gang is released only when all its steps are ready, so each gang waited for the
    other for ever (the workflow stayed PENDING). Refused, naming each hop."""
    msg = refused(text)
    assert want in msg and msg.endswith(f"(line {line})"), msg


def test_gangs_one_after_the_other_are_fine():
    wf = load("""\
        name: coupled-then-post
        steps:
          - {name: p, script: ./p}
          - {name: a1, gang: A, needs: [p], script: ./x}
          - {name: a2, gang: A, needs: [p], script: ./x}
          - {name: b1, gang: B, needs: [a1, a2], script: ./x}
          - {name: b2, gang: B, needs: [a2], script: ./x}
          - {name: z, needs: [b1, b2, p], script: ./x}
        """)
    assert wf.order() == ["p", "a1", "a2", "b1", "b2", "z"]
    assert wf.gangs() == {"A": ["a1", "a2"], "B": ["b1", "b2"]}
