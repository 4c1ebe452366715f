"""Benchmark: SK adaptation — 500 generated kernels of mixed forms, ``skdbg codegen adapt`` whole-process.

Run as ``python bench/adapt.py [--kernels 500] [--seed 7] [--samples 5] [--keep]``. Kernels are generated with a
seeded random mix (kernel types ``__vector__``/``__cube__``/``__mix__(c, v)``, 0–8 parameters of
GM_ADDR/scalar/small-int types, bodies with TPipe declarations in nested scopes, GetBlockNum calls,
KERNEL_TASK_TYPE_DEFAULT lines, comments and string literals holding braces, some templated kernels
with an IO-contract bind target), written as one ``.asc`` file each into an asset directory together
with a contract for every entry. About 10% of the files are already in ``current-sk-bind`` form and 5%
are ``partial`` (they must end ``needs-human``). One ``adapt_asset`` call then adapts the whole
asset in this process (reader, forms, contract checks, the SK blocks, the re-check of each output's
form, atomic write). The figure that counts is the whole process a user runs — ``skdbg codegen adapt ASSET -o OUT
--io-contract io.json --force``, interpreter start-up and imports included — sampled ``--samples``
times (min and median; target ≤ 0.5 s median, issue 18) in two situations, each sample of one followed
by one of the other: again over its own output (a user's edit-and-rerun loop, where an unchanged file is
taken over from the folder being replaced, :class:`skdbg.atomic.TreeWriter`) and into a fresh folder
(every file created); the target holds for both. Bytecode caches are on as a user's install has
them (``benchenv.py``); the default ``--jobs`` is automatic (worker processes beside this one for an
asset this size), and each sample is paired with one of ``--jobs 1`` (this process alone) to show what
the workers change. The in-process ``adapt_asset`` time (``jobs=1``, the library's default) is printed too, and the 1-minute load
average before and after the samples (on a shared machine the wall time follows the load). Each sample is
followed by a ``cp -r`` of the input files, timed whole process as an anchor with no target: it shows what creating
that many files costs on the machine's disk. The script checks every
generated ``none`` kernel was adapted and every ``partial`` one escalated; it exits non-zero otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skdbg.codegen.adapt import AdaptOptions, adapt_asset
from skdbg.codegen.contract import load_contract

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchenv import NOTE, prime, user_env  # noqa: E402  (a sibling module)

#: whole-process median target, seconds (issue 18)
TARGET_S = 0.5

TYPES = ["uint32_t", "int32_t", "float", "half", "uint8_t", "int16_t", "bool"]
KINDS = ["__vector__", "__cube__", "__mix__(1, 0)", "__mix__(0, 2)", "__mix__(1, 2)"]


def _kernel(rng: random.Random, i: int) -> tuple[str, str, dict[str, object]]:
    name = f"op_{i}"
    templated = rng.random() < 0.1
    n_scalars = rng.randint(0, 6)
    params = ["GM_ADDR x", "GM_ADDR y"] + [f"{rng.choice(TYPES)} s{k}" for k in range(n_scalars)]
    if templated:
        params.append("T alpha")
    body = [
        "    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);" if rng.random() < 0.3 else "    // plain body"
    ]
    body.append("    AscendC::TPipe pipe;")
    body.append('    const char *note = "} not a brace {"; // } {')
    if rng.random() < 0.5:
        body.append("    uint32_t blocks = AscendC::GetBlockNum();")
    for depth in range(rng.randint(0, 3)):
        body.append("    " * (depth + 1) + "if (x != nullptr) { /* { */")
        body.append("    " * (depth + 2) + f"AscendC::TPipe inner{depth};")
    for depth in reversed(range(sum(1 for b in body if b.strip().startswith("if")))):
        body.append("    " * (depth + 1) + "}")
    head = "template <typename T, int MODE = 1>\n" if templated else 'extern "C" '
    src = (
        '#include "kernel_operator.h"\n\n'
        f"{head}__global__ __aicore__ {rng.choice(KINDS)} void {name}({', '.join(params)})\n"
        "{\n" + "\n".join(body) + "\n}\n"
    )
    contract: dict[str, object] = {"inputs": ["x"], "outputs": ["y"]}
    if templated:
        contract["bind_target"] = f"{name}<half, 1>"
    return name, src, contract


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernels", type=int, default=500)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--samples", type=int, default=5, help="whole-process runs (min and median printed)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="skdbg-bench-adapt-"))
    asset = work / "asset"
    asset.mkdir()
    contract: dict[str, object] = {}
    forms = {"none": 0, "current-sk-bind": 0, "partial": 0}
    for i in range(args.kernels):
        name, src, entry = _kernel(rng, i)
        r = rng.random()
        if r < 0.10:
            src += f"__sk__ __vector__ void {name}_sk() {{}}\nSK_BIND({name}, 4, {name}_sk<0>);\n"
            forms["current-sk-bind"] += 1
        elif r < 0.15:
            src += f"__sk__ __vector__ void {name}_legacy() {{}}\n"
            forms["partial"] += 1
        else:
            forms["none"] += 1
            contract[name] = entry
        (asset / f"{name}.asc").write_text(src)
    (work / "io.json").write_text(json.dumps({"entries": contract}))
    options = AdaptOptions(contract=load_contract(work / "io.json"))
    t0 = time.perf_counter()
    manifest = adapt_asset(asset, work / "out", options)
    elapsed = time.perf_counter() - t0
    statuses = [f["status"] for f in manifest["per_file"]]
    adapted = statuses.count("adapted")
    needs_human = statuses.count("needs-human")
    current = statuses.count("already_current")
    print(
        f"kernels: {args.kernels} (none {forms['none']}, current-sk-bind {forms['current-sk-bind']}, partial {forms['partial']})"
    )
    print(f"adapted {adapted}, already_current {current}, needs-human {needs_human}")
    print(f"adapt_asset in process: {elapsed:.2f} s  ->  {args.kernels / elapsed:.0f} kernels/s")
    skdbg = shutil.which("skdbg") or str(Path(sys.executable).with_name("skdbg"))

    def adapt_argv(out: Path) -> list[str]:
        return [
            skdbg,
            "codegen",
            "adapt",
            str(asset),
            "-o",
            str(out),
            "--io-contract",
            str(work / "io.json"),
            "--force",
        ]

    argv = adapt_argv(work / "cli-out")
    print(NOTE)
    prime(argv)
    load_before = os.getloadavg()[0]
    times: list[float] = []
    fresh_times: list[float] = []
    serial_times: list[float] = []
    cp_times: list[float] = []
    codes = set()
    copy = work / "cp-out"
    fresh = work / "fresh"  # a new output folder per sample, all removed after the samples
    for i in range(args.samples):
        fresh_argv = adapt_argv(fresh / str(i))
        for run_argv, into in (
            (argv, times),
            (fresh_argv, fresh_times),
            ([*argv, "--jobs", "1"], serial_times),
        ):
            t0 = time.perf_counter()
            proc = subprocess.run(run_argv, capture_output=True, check=False, env=user_env())
            into.append(time.perf_counter() - t0)
            codes.add(proc.returncode)
        shutil.rmtree(copy, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run(["cp", "-r", str(asset), str(copy)], check=True)
        cp_times.append(time.perf_counter() - t0)
    med = statistics.median(times)
    fresh_med = statistics.median(fresh_times)
    print(f"load average (1 min): {load_before:.2f} before the samples, {os.getloadavg()[0]:.2f} after")
    print(
        f"skdbg codegen adapt (whole process), again over its output (--force): min {min(times):.2f} s median "
        f"{med:.2f} s (target <= {TARGET_S} s); exit codes {sorted(codes)} (4 = needs-human, expected with "
        "partial kernels)"
    )
    print(
        f"  into a fresh output folder (every file created): min {min(fresh_times):.2f} s median "
        f"{fresh_med:.2f} s (target <= {TARGET_S} s)"
    )
    print(
        f"  the same with --jobs 1 (this process alone, alternated with the samples): min {min(serial_times):.2f} s "
        f"median {statistics.median(serial_times):.2f} s (no target: what the worker processes change)"
    )
    cp_med = statistics.median(cp_times)
    print(
        f"anchor, cp -r of the {args.kernels} input files (whole process, alternated with the samples): min "
        f"{min(cp_times):.2f} s median {cp_med:.2f} s; skdbg / cp {med / cp_med:.1f}x by median (no target: "
        "what creating this many files costs on this disk)"
    )
    states_ok = (
        adapted == forms["none"] and needs_human == forms["partial"] and current == forms["current-sk-bind"]
    )
    states_ok = states_ok and codes <= {0, 4}
    ok = states_ok and max(med, fresh_med) <= TARGET_S
    if not args.keep:
        shutil.rmtree(work)
    else:
        print(f"kept {work}")
    if not states_ok:
        print("FAIL: a kernel did not end in the expected state", file=sys.stderr)
        return 1
    if not ok:
        print(
            f"FAIL: median {max(med, fresh_med):.2f} s above the {TARGET_S} s target (when the cp anchor is slow "
            "too, creating files on this disk is what is slow)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
