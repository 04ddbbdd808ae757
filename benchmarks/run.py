"""Benchmark idemlint against flake8 and ruff on the same files, in one run.

    python benchmarks/run.py [PATH ...] [--rounds 3] [--jobs N] [--warm-only]

Default file set: the running Python's standard library (site-packages excluded). Every
tool gets the same explicit list of files, interleaved round by round so that machine
noise hits all of them alike. flake8 runs as it ships (pyflakes, pycodestyle, mccabe), without
the flake8 plugin idemlint installs (see flake8_stock.py). Prints medians, the ratios idemlint/flake8 and idemlint/ruff,
files and lines per second, peak memory per run, and how time grows with the number of
files (a quarter, half and all of the set). Needs flake8 and ruff: `pip install '.[bench]'`.

--warm-only times what issue 15's bar compares, quickly: idemlint on a warm cache (filled by
one cold run first) against ruff's cold run, and a warm one-file run as pre-commit makes it.

idemlint runs with its bytecode compiled (into a temporary PYTHONPYCACHEPREFIX), as an
installed package has it and as flake8's is: with PYTHONDONTWRITEBYTECODE set, an editable
checkout would otherwise compile every module on every run. After the table, one warm run's
steps are printed with IDEMLINT_TIMING=1: time per step and per file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path


def python_files(roots: list[str]) -> list[str]:
    files = []
    for root in roots:
        for directory, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__", ".git"))
            files.extend(os.path.join(directory, f) for f in sorted(filenames) if f.endswith(".py"))
    return files


def timed(command: list[str], cwd: str) -> tuple[float, float]:
    """Wall time in seconds and peak resident memory in MB of one run."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--warm-only", action="store_true", help="only idemlint warm against ruff cold")
    args = parser.parse_args(argv)
    roots = args.paths or [sysconfig.get_paths()["stdlib"]]
    files = python_files(roots)
    lines = sum(Path(f).read_bytes().count(b"\n") for f in files)
    # --force-exclude: named files get the same policy as a directory walk (tests skipped), as
    # the pre-commit hooks run it; without it every named file is checked, test files included
    idemlint = [sys.executable, "-m", "idemlint", "check", "--exit-zero", "-q", "--force-exclude"]
    tools = {
        "idemlint (cold cache)": [*idemlint, "--jobs", str(args.jobs)],
        "idemlint (warm cache)": [*idemlint, "--jobs", str(args.jobs)],
        "idemlint --jobs 1": [*idemlint, "--jobs", "1", "--no-cache"],
        # flake8 without idemlint's plugin (flake8_stock.py): flake8's own time
        "flake8": [
            sys.executable,
            str(Path(__file__).with_name("flake8_stock.py")),
            "--exit-zero",
            "-j",
            str(args.jobs),
        ],
        "ruff": [shutil.which("ruff") or "ruff", "check", "--exit-zero", "--no-cache", "-q"],
    }
    print(f"files: {len(files)}  lines: {lines}  jobs: {args.jobs}  rounds: {args.rounds}  roots: {', '.join(roots)}")
    work = tempfile.mkdtemp(prefix="idemlint-bench-")
    cache = Path(work) / "idemlint-cache"
    os.environ["IDEMLINT_CACHE_DIR"] = str(cache)  # inherited by every timed run
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(Path(work) / "bytecode")
    if args.warm_only:
        return warm_only(tools, files, work, args.rounds)
    times: dict[str, list[float]] = {name: [] for name in tools}
    memory: dict[str, float] = {name: 0.0 for name in tools}
    for _round in range(args.rounds):
        for name, command in tools.items():
            if name == "idemlint (cold cache)":
                shutil.rmtree(cache, ignore_errors=True)
            seconds, peak = timed([*command, *files], work)
            times[name].append(seconds)
            memory[name] = max(memory[name], peak)
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"\n{'tool':<24}{'median s':>10}{'files/s':>10}{'lines/s':>11}{'peak MB':>9}")
    for name in tools:
        print(
            f"{name:<24}{median[name]:>10.2f}{len(files) / median[name]:>10.0f}{lines / median[name]:>11.0f}{memory[name]:>9.0f}"
        )
    cold = median["idemlint (cold cache)"]
    print(f"\nidemlint cold / flake8: {cold / median['flake8']:.2f}x")
    print(f"idemlint cold / ruff:   {cold / median['ruff']:.2f}x")
    print(f"idemlint warm / cold:   {median['idemlint (warm cache)'] / cold:.1%}")
    print("\ngrowth (idemlint --no-cache, default jobs):")
    for share in (4, 2, 1):
        subset = files[: max(1, len(files) // share)]
        seconds, _ = timed([*idemlint, "--no-cache", "--jobs", str(args.jobs), *subset], work)
        print(f"  {len(subset):>6} files: {seconds:6.2f} s  ({len(subset) / seconds:.0f} files/s)")
    single = files[len(files) // 2]
    one = one_file_after_an_edit(single, files, tools, work)
    print(
        f"\none file ({Path(single).name}) just edited, as pre-commit runs it (warm cache and index): "
        f"idemlint {one['idemlint']:.2f} s, flake8 {one['flake8']:.2f} s, ratio {one['idemlint'] / one['flake8']:.2f}x"
    )
    print_steps([*idemlint, "--jobs", str(args.jobs)], files, work)
    shutil.rmtree(cache, ignore_errors=True)
    print_steps([*idemlint, "--jobs", str(args.jobs)], files, work)  # cold: the index built, every file checked
    shutil.rmtree(work, ignore_errors=True)
    return 0


def one_file_after_an_edit(single: str, files: list[str], tools: dict[str, list[str]], work: str) -> dict[str, float]:
    """Issue 15's one-file case: the cache and index warm, then one file edited (a comment
    appended) and checked alone, against flake8 on that file. The file is restored after,
    bytes and times."""
    timed([*tools["idemlint (warm cache)"], *files], work)  # the cache and index warm
    path = Path(single)
    before, status = path.read_bytes(), path.stat()
    try:
        path.write_bytes(before + b"\n# edited by benchmarks/run.py\n")
        found = {"idemlint": timed([*tools["idemlint (warm cache)"], single], work)[0]}
        found["flake8"] = timed([*tools["flake8"], single], work)[0]
    finally:
        path.write_bytes(before)
        os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    return found


def warm_only(tools: dict[str, list[str]], files: list[str], work: str, rounds: int) -> int:
    warm, ruff = tools["idemlint (warm cache)"], tools["ruff"]
    single = files[len(files) // 2]
    timed([*warm, *files], work)  # fill the cache
    times: dict[str, list[float]] = {"idemlint warm": [], "ruff cold": [], "idemlint warm, one file": []}
    for _round in range(rounds):
        times["idemlint warm"].append(timed([*warm, *files], work)[0])
        times["ruff cold"].append(timed([*ruff, *files], work)[0])
        times["idemlint warm, one file"].append(timed([*warm, single], work)[0])
    for name, values in times.items():
        print(f"{name:<26}median {statistics.median(values):6.2f} s   runs {' '.join(f'{v:.2f}' for v in values)}")
    ratio = statistics.median(times["idemlint warm"]) / statistics.median(times["ruff cold"])
    print(f"idemlint warm / ruff cold: {ratio:.2f}x (issue 15's bar: 0.50x)")
    print_steps(warm, files, work)
    shutil.rmtree(work, ignore_errors=True)
    return 0


def print_steps(command: list[str], files: list[str], work: str) -> None:
    """One run's steps as idemlint times them (IDEMLINT_TIMING): discovery, index, per file."""
    run = subprocess.run(
        [*command, *files], cwd=work, env={**os.environ, "IDEMLINT_TIMING": "1"}, capture_output=True, text=True
    )
    print("steps of one more run (idemlint's own timing):")
    for line in run.stderr.splitlines():
        if line.startswith("idemlint timing:"):
            print("  " + line.removeprefix("idemlint timing: "))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
