"""The step harness: interleaved rounds, the kernels/allocator switches in the worker's
environment, a saved baseline, and another checkout measured by this harness."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.bench import runner
from minimodel.bench.cases import run_all
from minimodel.bench.runner import Options, combine_rounds

SRC = Path(__file__).resolve().parents[2] / "src"
TINY = ["--size", "tiny", "--steps", "2", "--warmup", "1", "--threads", "1", "--max-wait", "0",
        "--retries", "0", "--no-peers", "--cases", "step"]


def _run(times_ms: list[float]) -> dict:
    times = [t / 1e3 for t in times_ms]
    return {"median_s": sorted(times)[len(times) // 2], "min_s": min(times), "max_s": max(times),
            "times_s": times, "cpu_median_s": 2 * times[0], "minor_faults_per_step": 10.0,
            "max_rss_mib": 100.0, "foreign_cores": 0.01, "loss_first": 6.25}


def test_combine_rounds_takes_the_median_of_the_round_medians():
    rounds = [_run([100, 101, 102]), _run([130, 131, 500]), _run([104, 105, 106])]
    out = combine_rounds(rounds)
    assert out["round_medians_s"] == pytest.approx([0.101, 0.131, 0.105])
    assert out["median_s"] == pytest.approx(0.105)  # the disturbed round does not move it
    assert out["min_s"] == pytest.approx(0.100) and out["max_s"] == pytest.approx(0.500)
    assert out["spread_pct"] == pytest.approx(100 * (0.131 - 0.101) / 0.105)
    assert out["rounds"] == 3 and len(out["times_s"]) == 9
    assert combine_rounds([_run([100]), {"error": "boom"}]) == {"error": "boom"}
    single = combine_rounds([_run([100, 102, 104])])
    assert single["rounds"] == 1 and "spread_pct" not in single


def _fake_bench(monkeypatch, ms_by_kernels: dict[str, float], **options):
    """Options for a run whose workers return fixed times and record the environment they
    got."""
    calls = []

    def fake_worker(task, env):
        if task["task"] == "ceiling":
            return {"ceiling_gflops": 100.0, "gemms": []}
        calls.append((task["shape"]["name"], env["MINIMODEL_KERNELS"],
                      env["MINIMODEL_TUNE_MALLOC"]))
        return _run([ms_by_kernels[env["MINIMODEL_KERNELS"]]] * 3)

    monkeypatch.setattr(runner, "run_worker", fake_worker)
    monkeypatch.setattr(runner.machine, "machine_info", lambda: {"minimodel_source": "abc"})
    options.setdefault("allocator", ("off",))  # the library defaults: a plain import
    return Options(cases=("step",), peers=False, max_wait=0, retries=0, log=lambda t: None,
                   **options), calls


def test_rounds_interleave_and_kernels_switch_reaches_the_worker(monkeypatch):
    opts, calls = _fake_bench(monkeypatch, {"1": 100.0, "0": 180.0}, rounds=3,
                               kernels=("on", "off"))
    results = run_all(opts)
    steps = calls
    one_round = [("small", "1", "0"), ("small", "0", "0"), ("large", "1", "0"),
                 ("large", "0", "0")]
    assert steps == one_round * 3  # A B C D, A B C D, A B C D: interleaved fresh processes
    rows = results["cases"]["step"]["rows"]
    off = [r for r in rows if r["kernels"] == "off"]
    assert [r["impl"] for r in off] == ["minimodel, kernels off"] * 2
    assert all(r["vs_primary"] == pytest.approx(1.8) and r["rounds"] == 3 for r in off)
    assert results["cases"]["step"]["variant_ratios"]["small"] == {
        "minimodel, kernels off": pytest.approx(1.8)}
    assert any("kernels off / minimodel: 1.80x" in n for n in results["cases"]["step"]["notes"])


def test_allocator_switch_reaches_the_worker(monkeypatch):
    opts, calls = _fake_bench(monkeypatch, {"1": 100.0}, allocator=("off", "on"),
                               configs=("small",))
    results = run_all(opts)
    assert calls == [("small", "1", "0"), ("small", "1", "1")]
    rows = results["cases"]["step"]["rows"]
    assert [r["impl"] for r in rows] == ["minimodel", "minimodel, train's malloc tuning"]
    (target,) = [t for t in results["targets"] if t["case"] == "step"]
    assert target["bound"] == 0.8  # the bound for the main job, at d=128 as at d=256
    assert rows[0].get("target") == "<= 0.80x"  # judged on the first, plain-import row


def test_baseline_verdict_within_tolerance(monkeypatch, tmp_path):
    before, _ = _fake_bench(monkeypatch, {"1": 100.0}, configs=("small",))
    saved = tmp_path / "before.json"
    saved.write_text(json.dumps(run_all(before), default=str))
    for now_ms, met in ((102.9, True), (95.0, True), (103.5, False)):
        opts, _ = _fake_bench(monkeypatch, {"1": now_ms}, configs=("small",),
                               baseline=str(saved), tolerance_pct=3.0)
        results = run_all(opts)
        (row,) = results["baseline"]["rows"]
        assert row["before_ms"] == pytest.approx(100.0) and row["ms"] == pytest.approx(now_ms)
        assert row["change_pct"] == pytest.approx(now_ms - 100.0)
        (target,) = [t for t in results["targets"] if t["case"] == "baseline"]
        assert target["met"] is met and target["bound"] == pytest.approx(1.03)


def test_bad_baseline_and_against_fail_before_measuring(tmp_path, capsys):
    from minimodel.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["bench", "--baseline", str(bad)]) == 2
    assert "bad.json is not JSON" in capsys.readouterr().err
    assert main(["bench", "--against", str(tmp_path)]) == 2
    assert "no minimodel package there" in capsys.readouterr().err
    # outputs that could not be written at the end are refused at the start
    assert main(["bench", "--json", str(bad / "out.json")]) == 2
    assert "bad.json is a file, not a folder" in capsys.readouterr().err
    assert main(["bench", "--write-md", str(tmp_path)]) == 2
    assert "is a folder; give a file name" in capsys.readouterr().err


def test_another_checkout_is_measured_by_this_harness(tmp_path):
    """--against: the worker imports the other checkout's library, but this harness's bench
    code and runtime (the other copy here has no bench package: an older layout; it keeps its
    runtime.py, which its kernels import)."""
    other = tmp_path / "other-src"
    shutil.copytree(SRC / "minimodel", other / "minimodel",
                    ignore=shutil.ignore_patterns("__pycache__", "lab", "bench"))
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "minimodel", "bench", *TINY, "--configs",
                           "small", "--against", str(other), "--json", str(out)],
                          env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
    raw = json.loads(out.read_text())["cases"]["step"]["raw"]["small"]
    ours, theirs = raw["minimodel"], raw[f"minimodel @ {other}"]
    assert Path(ours["minimodel_dir"]) == SRC / "minimodel"
    assert Path(theirs["minimodel_dir"]) == other / "minimodel"
    assert Path(theirs["harness_dir"]) == SRC / "minimodel" / "bench"
    assert theirs["loss_first"] == pytest.approx(ours["loss_first"], rel=1e-6)


def test_variant_switches_are_checked():
    from minimodel.bench.runner import Variant

    assert Variant("off", "off").label == "minimodel, kernels off"
    assert Variant("on", "on").label == "minimodel, train's malloc tuning"
    assert Variant("off", "on").env() == {"MINIMODEL_KERNELS": "0", "MINIMODEL_TUNE_MALLOC": "1"}
    with pytest.raises(ValueError, match="kernels='yes'.*'on' or 'off'"):
        Variant(kernels="yes")
