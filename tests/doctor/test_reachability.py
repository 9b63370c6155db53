"""The unreachable-token test: witnesses prove reachable, verified LPs prove unreachable."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from minimodel.doctor import reachability as R

pytest.importorskip("scipy")


def cloud(V=200, d=24, seed=0):
    return np.random.default_rng(seed).normal(size=(V, d)).astype(np.float32)


def test_a_witness_really_makes_its_token_the_argmax():
    W = cloud()
    W[:50] *= 0.3  # shrink some rows so that h = w_i fails for a few
    rows = np.arange(len(W))
    for centre in (None, W.mean(axis=0)):
        ok = R.witnesses(W, rows, centre)
        for i in np.flatnonzero(ok):
            h = W[i] - (0 if centre is None else centre)
            scores = W @ h
            assert np.argmax(scores) == i and np.sum(scores == scores[i]) == 1


def test_rows_inside_the_hull_and_duplicates_are_unreachable_and_nothing_else():
    W = cloud()
    W[7] = 0.25 * (W[1] + W[2] + W[3] + W[4])  # inside the hull
    W[9] = W[10]  # two equal rows: neither can ever be the strict argmax
    result = R.find_unreachable(W)
    assert result.method == "all rows" and result.checked == len(W)
    assert sorted(result.unreachable) == [7, 9, 10]
    assert result.reachable == len(W) - 3 and result.undecided == []


def test_a_large_vocabulary_is_sampled_and_still_finds_a_central_row(monkeypatch):
    W = cloud(V=400)
    W[123] = W[:50].mean(axis=0)  # near the centre of the cloud, inside the hull
    monkeypatch.setattr(R, "FULL_BUDGET", 0)  # pretend V is too large to check every row
    monkeypatch.setattr(R, "SAMPLE_BUDGET", 40 * 400 * 24)  # 40 rows
    result = R.find_unreachable(W)
    assert result.method == "sampled" and result.checked == 40
    assert list(result.unreachable) == [123]


def test_without_scipy_no_row_is_called_unreachable(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)  # makes `import scipy...` fail
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)
    W = cloud()
    W[7] = 0.5 * (W[1] + W[2])
    result = R.find_unreachable(W)
    assert not result.lp_available and result.unreachable == {}
    assert 7 in result.undecided


def test_a_row_the_lp_finds_outside_the_hull_is_reachable():
    W = cloud(V=40, d=3)  # in 3 dimensions many rows are inside the hull
    result = R.find_unreachable(W)
    assert result.reachable + len(result.unreachable) == 40 and result.undecided == []
    from scipy.spatial import ConvexHull

    assert sorted(set(range(40)) - set(result.unreachable)) == sorted(ConvexHull(W).vertices)


def test_undecided_rows_say_install_scipy_only_when_scipy_is_missing(monkeypatch, tmp_path):
    from safetensors.numpy import save_file

    from minimodel.doctor import diagnose
    from minimodel.doctor.texts import words

    W = np.random.default_rng(0).normal(size=(20, 4)).astype(np.float32)
    W[7] = 0.5 * W[3] + 0.5 * W[11]
    save_file({"tok_emb": W}, str(tmp_path / "w.safetensors"))
    monkeypatch.setattr(R, "hull_weights", lambda *a, **k: None)  # the LP gives no answer
    report = diagnose(tmp_path / "w.safetensors")
    undecided = next(f for f in report.findings if f.check == "reachability")
    assert undecided.key == "reach.undecided" and undecided.data["lp_available"] is True
    fix = words(undecided.key, undecided.values, "en")[2]
    assert "Install scipy" not in fix  # scipy is installed: the advice must not say otherwise
    fix_es = words("reach.undecided_no_scipy", undecided.values, "es")[2]
    assert "Instala scipy" in fix_es


def test_a_bias_can_make_a_row_inside_the_hull_reachable():
    pytest.importorskip("scipy")
    rng = np.random.default_rng(0)
    W = rng.normal(size=(20, 16)).astype(np.float32)  # 20 points in 16-D: all vertices
    W[7] = 0.5 * W[3] + 0.5 * W[11]  # but this one, inside the hull
    assert list(R.find_unreachable(W).unreachable) == [7]
    bias = np.zeros(20)
    assert list(R.find_unreachable(W, bias=bias).unreachable) == [7]  # a zero bias changes nothing
    bias[7] = 1.0  # above the mixture's bias: h = 0 makes 7 win
    assert R.find_unreachable(W, bias=bias).unreachable == {}
