"""Every corpus script, rendered as Slurm, is accepted by a real `sbatch --test-only`.

Partition and account are mapped to the test-bed site's (GPU jobs to gamma's `long`, others
to alpha's `batch`). A rejection is allowed only when it names a resource the test bed does
not have (a feature, more nodes or memory than exist); a syntax error never is.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from diamond_jupyter.dialects.translate import translate
from diamond_jupyter.model import BadInput
from diamond_jupyter.transports import make_transport

CORPUS = Path(os.environ.get("DIAMOND_CORPUS", "/work/shared/corpus/batch-scripts"))
RESOURCE_LIMITS = re.compile(
    r"Requested node configuration is not available|Invalid feature specification|"
    r"Node count specification invalid|Invalid generic resource \(gres\) specification|"
    r"Memory required by task is not available|More processors requested than permitted|"
    r"Requested time limit is invalid|Invalid Trackable RESource \(TRES\) specification|"
    r"Invalid qos specification|Invalid node name specified|Invalid job array specification|"
    r"Job dependency problem|Invalid reservation name|Invalid partition name specified")
SEP = "@@next@@"
# Site-specific, like partition and account: mapped away for the test bed.
SITE_SPECIFIC = {"--clusters", "--cluster", "-M", "--licenses", "--license", "-L"}
PLACEHOLDER = re.compile(r"[$<>{}%@]")


def input_defect(original: str, message: str) -> bool:
    """The original script carries the fault sbatch names: a template placeholder, or an
    option this sbatch does not have (a SPANK plugin's, a legacy spelling), kept verbatim."""
    quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"", message)
    for a, b in quoted:
        token = a or b
        if token in original and not token.startswith("sbatch --help"):
            return True
    m = re.search(r"Invalid --(\w+) specification", message)
    if m:
        lines = [ln for ln in original.splitlines() if re.match(r"\s*#(SBATCH|PBS|BSUB)", ln)]
        return any(PLACEHOLDER.search(ln) for ln in lines)
    return False


def _best_site(spec) -> tuple[str, str]:
    """GPU jobs to gamma; jobs with big nodes (CPUs or memory) to beta; others to alpha."""
    r = spec.resources
    if r.gpus_per_node or r.gpus_per_task:
        return "gamma", "long"
    per_node = (r.tasks_per_node or (r.tasks or 1) // max(r.nodes or 1, 1) or 1) * (
        r.cpus_per_task or 1)
    if per_node > 8 or (r.memory_mb or 0) > 32000 or (r.memory_per_cpu_mb or 0) * per_node > 32000:
        return "beta", "compute"
    return "alpha", "batch"


def _render_all() -> tuple[dict[str, tuple[str, str]], dict[str, str], dict[str, str]]:
    rendered, refused, originals = {}, {}, {}
    for path in sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.parent != CORPUS):
        text = path.read_text(encoding="utf-8", errors="replace")
        key = f"{path.parent.name}/{path.name}"
        originals[key] = text
        try:
            _, _, spec = translate(text, "slurm")
        except BadInput as e:
            refused[key] = str(e)
            continue
        site, queue = _best_site(spec)
        spec = spec.model_copy(update={"queue": queue, "account": None,
                                       "reservation": None, "qos": None,
                                       "unknown": [d for d in spec.unknown
                                                   if d.option not in SITE_SPECIFIC]})
        from diamond_jupyter.dialects import get_script_dialect

        rendered[key] = (site, get_script_dialect("slurm").render_script(spec).script)
    return rendered, refused, originals


async def _test_only(cfg, scripts: dict[str, str]) -> dict[str, str]:
    t = make_transport(cfg.transport, site=cfg.name)
    try:
        d = (await t.run(["mktemp", "-d", "corpus.XXXXXX"], check=True)).stdout.strip()
        names = {}
        for i, (key, text) in enumerate(sorted(scripts.items())):
            names[f"s{i:04d}.sh"] = key
            await t.put_bytes(text.encode(), f"{d}/s{i:04d}.sh")
        loop = f'cd {d} && for f in s*.sh; do echo "{SEP}$f"; sbatch --test-only "$f" 2>&1; done'
        res = await t.run(["sh", "-c", loop], timeout=300)
        out: dict[str, str] = {}
        for chunk in res.stdout.split(SEP)[1:]:
            name, _, text = chunk.partition("\n")
            out[names[name]] = text.strip()
        await t.run(["rm", "-rf", d])
        return out
    finally:
        await t.close()


def test_every_slurm_rendering_passes_sbatch_test_only(tb):
    rendered, refused, originals = _render_all()
    assert len(rendered) + len(refused) >= 427
    assert len(refused) < 10, refused  # specific BadInput messages, checked in test_corpus
    by_site: dict[str, dict[str, str]] = {}
    for key, (site, text) in rendered.items():
        by_site.setdefault(site, {})[key] = text
    cfg = tb.config
    results: dict[str, str] = {}
    for site, scripts in by_site.items():
        results |= asyncio.run(_test_only(cfg.site(site), scripts))
    assert set(results) == set(rendered)
    accepted = {k for k, v in results.items() if "to start at" in v}
    limited = {k for k, v in results.items() if k not in accepted and RESOURCE_LIMITS.search(v)}
    rest = {k: v for k, v in results.items() if k not in accepted and k not in limited}
    defects = {k for k, v in rest.items() if input_defect(originals[k], v)}
    syntax = {k: v for k, v in rest.items() if k not in defects}
    print(f"\nsbatch --test-only: {len(accepted)} accepted, {len(limited)} need resources "
          f"the test bed lacks, {len(defects)} carry the original's own fault, "
          f"{len(syntax)} rejected otherwise, {len(refused)} refused before rendering")
    assert not syntax, dict(list(syntax.items())[:10])
    assert len(accepted) > len(rendered) * 0.6
