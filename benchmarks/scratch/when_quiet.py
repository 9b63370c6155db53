"""Run a command once other processes leave the cores idle (< 15 % busy for 3 s).

    python benchmarks/scratch/when_quiet.py [--max-wait S] -- CMD ARGS...
"""
import os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_step import cpu_busy  # noqa: E402

args = sys.argv[1:]
max_wait = 1800.0
if args[:1] == ["--max-wait"]:
    max_wait, args = float(args[1]), args[2:]
if args[:1] == ["--"]:
    args = args[1:]
t0 = time.time()
while cpu_busy(3.0) > 0.15 and time.time() - t0 < max_wait:
    time.sleep(5)
print(f"[when_quiet] waited {time.time() - t0:.0f} s", flush=True)
sys.exit(subprocess.call(args))
