"""Jobs that say what they need only in their scripts: success with and without metadata.

The dispatch-agent study found that descriptive metadata (architecture, software) raised
successful execution from 48% to 87% of its jobs. Here: 45 jobs whose needs appear only
in their scripts - architecture and features (`-C arch=aarch64`, `-C "avx2|sve"`,
LSF `select[...]`, Torque node properties), software (`module load NAME[/VERSION]` in
each site's spelling or another site's), GPU type (`--gres=gpu:a100:1`, `--gpus=a100:1`,
LSF `-gpu gmodel=`), containers (`apptainer exec IMAGE`) and memory (`--mem=200G`,
`--mem-per-cpu`, PBS `mem=`). Each job checks its needs at run time on its node and fails
if it landed on a wrong site: `module load X` must succeed and the module's marker
(`NAME-version`) must answer, the node's features (`scontrol show node`) must include the
asked ones, a GPU job must see `CUDA_VISIBLE_DEVICES` and a node with that GPU model, a
container job's runtime must run it, a memory job's node must have the memory.

Modes (every job submitted `--site auto` from one engine, then waited for):
- metadata: placement reads the needs from the scripts (the default engine);
- no-metadata: placement is blind to them (it sees only the sizes: nodes, CPUs, GPU
  count, memory, walltime); the job goes where the blind ranking (diamond policy) says,
  forced past the explicit-site check;
- fewest_pending: blind too, the site with the fewest pending jobs (the study's
  queue-depth baseline).
The module names are rewritten for the chosen site in every mode (the engine always
does it); a blind choice of a site without the module still fails.
A job counts as a success when it ends COMPLETED (exit 0). Runs on the test bed's three
Slurm sites (alpha, beta, gamma) and their Lmod module trees; it takes the test-bed lock.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .common import config_path, emit, markdown_table, parser

# run-time checks, in each job's body (literal, so that they are what the job needs)
FEAT = ('feat() { scontrol -o show node "$SLURMD_NODENAME" | '
        'grep -Eq "AvailableFeatures=([^ ]*,)?$1(,| |$)"; }')
MEM = ('mem_at_least() { m=$(scontrol -o show node "$SLURMD_NODENAME" | '
       "grep -o 'RealMemory=[0-9]*' | cut -d= -f2); [ \"${m:-0}\" -ge \"$1\" ]; }")
GPU = ('gpu() { [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && scontrol -o show node '
       '"$SLURMD_NODENAME" | grep -q "Gres=gpu:$1"; }')


@dataclass(frozen=True)
class Job:
    name: str
    kind: str  # architecture, software, gpu, container, memory, combined
    sites: tuple[str, ...]  # where it can run (for the report; placement is not told)
    head: str  # directives (any dialect)
    body: str  # what it runs and checks

    def script(self) -> str:
        return f"#!/bin/bash\n{self.head}\n{FEAT}\n{MEM}\n{GPU}\n{self.body}\necho ok\n"


def _mod(load: str, marker: str, version: str = "") -> str:
    check = f" | grep -q '^{marker} {version}'" if version else " >/dev/null"
    return f"{load} || exit 41\n{marker}-version{check} || exit 42"


APPT = "apptainer exec {opts}img/{img}.sif sh -c 'test \"$APPTAINER_CONTAINER\" = " \
       "img/{img}.sif' || exit 71"

JOBS: tuple[Job, ...] = (
    # architecture and features
    Job("arch-aarch64", "architecture", ("beta",), "#SBATCH -C arch=aarch64\n#SBATCH -t 2",
        "feat arch=aarch64 || exit 31"),
    Job("arch-aarch64-long", "architecture", ("beta",),
        "#SBATCH --constraint=arch=aarch64\n#SBATCH -n 4 -t 2", "feat arch=aarch64 || exit 31"),
    Job("arch-aarch64-sve", "architecture", ("beta",), '#SBATCH -C "arch=aarch64&sve" -t 2',
        "feat arch=aarch64 && feat sve || exit 31"),
    Job("arch-x86-avx2", "architecture", ("alpha",), '#SBATCH -C "arch=x86_64&avx2" -t 2',
        "feat arch=x86_64 && feat avx2 || exit 31"),
    Job("feature-sve", "architecture", ("beta",), "#SBATCH -C sve -t 2", "feat sve || exit 31"),
    Job("feature-avx2", "architecture", ("alpha",), "#SBATCH --constraint=avx2 -t 2",
        "feat avx2 || exit 31"),
    Job("feature-avx2-or-x86", "architecture", ("alpha",),
        '#SBATCH -C "avx2|arch=x86_64" -t 2', "feat avx2 || feat arch=x86_64 || exit 31"),
    Job("lsf-select-sve", "architecture", ("beta",), '#BSUB -R "select[sve]"\n#BSUB -W 2',
        "feat sve || exit 31"),
    Job("torque-node-property", "architecture", ("beta",),
        "#PBS -l nodes=1:ppn=2:sve\n#PBS -l walltime=00:02:00", "feat sve || exit 31"),
    # software, spelled as some site spells it (or no site)
    Job("gromacs-2023", "software", ("beta",), "#SBATCH -t 2",
        _mod("module load gromacs/2023", "gromacs", "2023")),
    Job("gromacs-bare", "software", ("beta",), "#SBATCH -t 2",
        _mod("module load GROMACS", "gromacs")),
    Job("gromacs-easybuild", "software", ("beta",), "#SBATCH -t 2",
        _mod("ml GROMACS/2023.3-foss-2023a", "gromacs", "2023.3")),
    Job("cuda-12.2", "software", ("gamma",), "#SBATCH -t 2",
        _mod("module load cuda/12.2", "cuda", "12.2")),
    Job("cuda-easybuild", "software", ("gamma",), "#SBATCH -t 2",
        _mod("module load CUDA/12.2.0", "cuda", "12.2")),
    Job("pytorch", "software", ("gamma",), "#SBATCH -t 2", _mod("module load pytorch", "pytorch")),
    Job("pytorch-as-torch", "software", ("gamma",), "#SBATCH -t 2",
        _mod("ml torch/2.1", "pytorch", "2.1")),
    Job("openmpi", "software", ("alpha",), "#SBATCH -n 2 -t 2",
        _mod("module load openmpi", "openmpi")),
    Job("openmpi-4.1", "software", ("alpha",), "#SBATCH -t 2",
        _mod("module load OpenMPI/4.1", "openmpi", "4.1")),
    Job("python3", "software", ("alpha", "beta", "gamma"), "#SBATCH -t 2",
        _mod("module load python3", "python3", "3.11")),
    Job("python-3.11", "software", ("alpha", "beta", "gamma"), "#SBATCH -t 2",
        _mod("module load Python/3.11", "python3", "3.11")),
    Job("gcc-12.3", "software", ("beta",), "#SBATCH -t 2",
        _mod("module load gcc/12.3", "gcc", "12.3")),
    Job("gcc-12.2", "software", ("alpha",), "#SBATCH -t 2",
        _mod("module load gcc/12.2", "gcc", "12.2")),
    Job("gcc-openmpi", "software", ("alpha",), "#SBATCH -t 2",
        _mod("module add gcc openmpi", "openmpi")),
    Job("python-cuda", "software", ("gamma",), "#SBATCH -t 2",
        _mod("module load python3 cuda", "cuda")),
    Job("pbs-gromacs", "software", ("beta",), "#PBS -l select=1:ncpus=2\n#PBS -l walltime=2:00",
        _mod("module load gromacs", "gromacs")),
    # GPU type
    Job("gres-a100", "gpu", ("gamma",), "#SBATCH --gres=gpu:a100:1 -t 2", "gpu a100 || exit 51"),
    Job("gpus-a100", "gpu", ("gamma",), "#SBATCH --gpus=a100:1 -t 2", "gpu a100 || exit 51"),
    Job("gpus-per-node", "gpu", ("gamma",), "#SBATCH --gpus-per-node=1 -t 2",
        "gpu '' || exit 51"),
    Job("feature-a100", "gpu", ("gamma",), "#SBATCH -C a100 --gres=gpu:1 -t 2",
        "feat a100 && gpu a100 || exit 51"),
    Job("lsf-gmodel", "gpu", ("gamma",), '#BSUB -gpu "num=1:gmodel=a100"\n#BSUB -W 2',
        "gpu a100 || exit 51"),
    Job("gres-a100-two", "gpu", ("gamma",), "#SBATCH --gres=gpu:a100:2 -t 2",
        "gpu a100 || exit 51"),
    # containers
    Job("apptainer-exec", "container", ("alpha", "gamma"), "#SBATCH -t 2",
        APPT.format(opts="", img="lammps")),
    Job("apptainer-bind", "container", ("alpha", "gamma"), "#SBATCH -t 2",
        APPT.format(opts="-B /tmp:/tmp --env A=1 ", img="tools")),
    Job("srun-apptainer", "container", ("alpha", "gamma"), "#SBATCH -n 1 -t 2",
        "srun " + APPT.format(opts="", img="md")),
    Job("apptainer-nv-cuda", "container", ("gamma",), "#SBATCH -t 2",
        _mod("module load cuda", "cuda") + "\n" + APPT.format(opts="--nv ", img="pytorch")),
    Job("apptainer-avx2", "container", ("alpha",), "#SBATCH -C avx2 -t 2",
        "feat avx2 || exit 31\n" + APPT.format(opts="", img="x86")),
    Job("apptainer-bigmem", "container", ("gamma",), "#SBATCH --mem=100G -t 2",
        "mem_at_least 102400 || exit 61\n" + APPT.format(opts="", img="bigmem")),
    # memory
    Job("mem-200g", "memory", ("beta",), "#SBATCH --mem=200G -t 2",
        "mem_at_least 204800 || exit 61"),
    Job("mem-100g", "memory", ("beta", "gamma"), "#SBATCH --mem=100G -t 2",
        "mem_at_least 102400 || exit 61"),
    Job("mem-250000m", "memory", ("beta",), "#SBATCH --mem=250000M -t 2",
        "mem_at_least 250000 || exit 61"),
    Job("mem-per-cpu", "memory", ("beta",), "#SBATCH -c 16 --mem-per-cpu=8G -t 2",
        "mem_at_least 131072 || exit 61"),
    Job("pbs-mem-150gb", "memory", ("beta",),
        "#PBS -l select=1:ncpus=2:mem=150gb\n#PBS -l walltime=00:02:00",
        "mem_at_least 153600 || exit 61"),
    # several needs at once
    Job("arm-gromacs-mem", "combined", ("beta",), "#SBATCH -C arch=aarch64 --mem=100G -t 2",
        "feat arch=aarch64 || exit 31\nmem_at_least 102400 || exit 61\n"
        + _mod("module load GROMACS", "gromacs")),
    Job("gpu-pytorch-container", "combined", ("gamma",), "#SBATCH --gres=gpu:a100:1 -t 2",
        "gpu a100 || exit 51\n" + _mod("module load pytorch", "pytorch") + "\n"
        + APPT.format(opts="--nv ", img="train")),
    Job("x86-openmpi-container", "combined", ("alpha",), "#SBATCH -C avx2 -n 2 -t 2",
        "feat avx2 || exit 31\n" + _mod("module load openmpi", "openmpi") + "\n"
        + APPT.format(opts="", img="mpi")),
    Job("x86-python", "combined", ("alpha", "gamma"), "#SBATCH -C arch=x86_64 -t 2",
        "feat arch=x86_64 || exit 31\n" + _mod("module load python3", "python3")),
)
MODES = ("metadata", "no-metadata", "fewest_pending")
# the test bed's Slurm sites, each with its Lmod module tree (the jobs check their nodes
# with scontrol); the Grid Engine site has no module tree
SITES = ("alpha", "beta", "gamma")


def blind(spec):
    """What placement sees without metadata: only the sizes (the body, features,
    architecture, software, container and GPU model are hidden)."""
    from diamond_jupyter.model import Constraints, Environment

    return spec.model_copy(update={
        "script": "true\n", "metadata": {}, "environment": Environment(),
        "constraints": Constraints(exclusive=spec.constraints.exclusive),
        "resources": spec.resources.model_copy(update={"gpu_type": None}),
        "unknown": []})


async def run_mode(fed, mode: str, tag: str, timeout_s: float,
                   jobs: tuple[Job, ...] = JOBS) -> list[dict]:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.model import DiamondError

    rows: list[dict] = []
    submitted: dict[str, dict] = {}
    for job in jobs:
        row = {"job": job.name, "kind": job.kind, "can_run_on": list(job.sites), "site": None,
               "state": None, "exit_code": None, "ok": False, "why": None}
        rows.append(row)
        spec = Federation.parse(job.script())
        spec = spec.model_copy(update={"name": f"{tag}-{job.name}"})
        try:
            if mode == "metadata":
                j = await fed.submit(spec, "auto")
            else:
                pl = await fed.place(blind(spec), policy="diamond" if mode == "no-metadata"
                                     else "fewest_pending")
                if pl.choice is None:
                    row["why"] = "no site: " + pl.summary()
                    continue
                j = await fed.submit(spec, pl.choice, force=True)
        except DiamondError as e:
            row["why"] = str(e)[:300]
            continue
        row["site"] = j.site
        submitted[j.id] = row

    async def follow(job_id: str, row: dict) -> None:
        try:
            done = await fed.wait(job_id, timeout=timeout_s)
        except DiamondError as e:
            row["why"] = str(e)[:300]
            return
        row.update(state=done.state.value, exit_code=done.exit_code,
                   ok=done.state.value == "COMPLETED" and done.exit_code in (0, None))
        if not row["ok"]:
            row["why"] = done.reason or f"exit code {done.exit_code}"
    await asyncio.gather(*(follow(i, r) for i, r in submitted.items()))
    return rows


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    ok = sum(r["ok"] for r in rows)
    kinds: dict[str, list[int]] = {}
    for r in rows:
        k = kinds.setdefault(r["kind"], [0, 0])
        k[0] += r["ok"]
        k[1] += 1
    return {"jobs": n, "succeeded": ok, "success_rate": ok / n if n else None,
            "on_a_right_site": sum(r["site"] in r["can_run_on"] for r in rows),
            "refused_or_unplaced": sum(r["site"] is None for r in rows),
            "by_kind": {k: {"succeeded": a, "jobs": b} for k, (a, b) in kinds.items()}}


async def bench(config: str, modes: list[str], timeout_s: float,
                jobs: tuple[Job, ...] = JOBS) -> dict:
    from diamond_jupyter.federation import Federation
    from diamond_jupyter.store import Store

    tmp = Path(tempfile.mkdtemp(prefix="bench-metadata-"))
    fed = Federation(config, store=Store(tmp / "store.sqlite"), poll_interval_s=10,
                     min_poll_s=1.0, allowed_sites=SITES)
    await fed.start()
    out: dict = {"modes": {}}
    try:
        found = await asyncio.gather(*(fed.describe(n, refresh=True) for n in SITES))
        out["discovered_software"] = {d.site: d.capabilities.module_names() for d in found}
        for mode in modes:
            t0 = time.monotonic()
            rows = await run_mode(fed, mode, f"md{int(time.time()) % 100000}", timeout_s, jobs)
            out["modes"][mode] = summary(rows) | {"seconds": time.monotonic() - t0,
                                                  "jobs_detail": rows}
    finally:
        await fed.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--no-metadata", action="store_true",
                   help="only the run with placement blind to the scripts' needs")
    p.add_argument("--modes", default=",".join(MODES),
                   help=f"comma-separated, of {', '.join(MODES)} (default: all)")
    p.add_argument("--timeout", type=float, default=600.0, help="per job, seconds")
    p.add_argument("--only", help="comma-separated job names (default: all)")
    args = p.parse_args(argv)
    modes = ["no-metadata"] if args.no_metadata else [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        p.error(f"unknown mode(s) {', '.join(bad)} (known: {', '.join(MODES)})")
    only = set(args.only.split(",")) if args.only else None
    jobs = tuple(j for j in JOBS if only is None or j.name in only)
    if not jobs:
        p.error(f"--only names no job (known: {', '.join(j.name for j in JOBS)})")
    res = asyncio.run(bench(config_path(args.config), modes, args.timeout, jobs))
    res["target"] = {"metadata_success_rate": 1.0}
    rows = [(m, v["jobs"], v["succeeded"], v["success_rate"], v["on_a_right_site"],
             v["refused_or_unplaced"]) for m, v in res["modes"].items()]
    md = markdown_table(("mode", "jobs", "succeeded", "success rate", "on a right site",
                         "refused/unplaced"), rows)
    kinds = sorted({k for v in res["modes"].values() for k in v["by_kind"]})
    md += "\n" + markdown_table(("kind", *res["modes"]), [
        (k, *(f"{v['by_kind'][k]['succeeded']}/{v['by_kind'][k]['jobs']}"
              for v in res["modes"].values())) for k in kinds])

    def plot(ax) -> None:
        ax.bar([r[0] for r in rows], [100 * (r[3] or 0) for r in rows])
        ax.set_ylabel("jobs that succeeded (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{len(jobs)} jobs whose needs are only in their scripts")
    emit("metadata", args, res, md, plot)
    return res


if __name__ == "__main__":
    main()
