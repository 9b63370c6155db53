"""The explorer's data: PCA coordinates, cosine neighbours, the page and the command."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from minimodel.cli import main
from minimodel.explorer import cosine_neighbours, explorer_html, pca
from minimodel.explorer.geometry import aligned_coordinates, neighbour_churn, procrustes


def test_cosine_neighbours_match_brute_force():
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((3000, 8))   # more rows than one 2048-row block
    ids, sims = cosine_neighbours(matrix, k=5)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    for row in (0, 2047, 2048, 2999):
        s = unit @ unit[row]
        s[row] = -np.inf
        expected = np.argsort(-s)[:5]
        assert list(ids[row]) == list(expected)
        np.testing.assert_allclose(sims[row], s[expected], rtol=1e-5)


def test_pca_finds_the_direction_of_largest_variance():
    rng = np.random.default_rng(1)
    matrix = np.outer(rng.standard_normal(500), [3.0, 4.0]) + 0.01 * rng.standard_normal((500, 2))
    coords = pca(matrix, 2)
    assert coords.shape == (500, 2)
    assert coords[:, 0].var() > 1000 * coords[:, 1].var()


def test_the_page_holds_its_data_and_survives_a_script_token():
    run = {"run": "r", "model": "gpt", "tied": True, "tokens": ["a", "</script>"],
           "counts": [1, 2], "buckets": [1, 3], "steps": [0], "metrics": {}, "panels": []}
    page = explorer_html([run])
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert json.loads(blob.group(1).replace("<\\/", "</"))["runs"][0]["tokens"][1] == "</script>"
    assert not re.search(r'<(?:script|link|img)[^>]+(?:src|href)="(?:https?:)?//', page)
    assert "reglScatterplot" in page                         # the WebGL points library
    assert "window.Plotly = Plotly" in page                  # and the metric plots' are inside
    spanish = explorer_html([run], lang="es")
    assert '<html lang="es">' in spanish and "instantánea" in spanish


def test_procrustes_undoes_a_rotation_and_frames_move_only_where_geometry_moved():
    rng = np.random.default_rng(3)
    final = rng.standard_normal((200, 6))
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))           # a random rotation
    rotated = final @ q.T
    np.testing.assert_allclose(rotated @ procrustes(rotated, final), final, atol=1e-10)
    moved = final.copy()
    moved[7] += 3.0                                              # one token really moved
    coords = aligned_coordinates([rotated, moved @ q, final])   # (F, V, 2)
    shift = np.linalg.norm(coords[1] - coords[2], axis=1)
    assert shift[7] > 1.0 and np.median(shift) < 0.1            # the rest stays put
    np.testing.assert_allclose(coords[0], coords[2], atol=1e-5)  # same geometry, turned


def test_neighbour_churn_is_zero_for_a_rotation_and_positive_for_noise():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((300, 8))
    q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    churn = neighbour_churn([a, a @ q, rng.standard_normal((300, 8))], sample=100)
    assert churn[0] is None and churn[1] == 0.0 and churn[2] > 0.8


def test_explore_command_refuses_bad_outputs(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--model", "cbow", "--steps", "3", "--eval-interval", "3",
                 "--out", str(run), "--quiet"]) == 0
    out = tmp_path / "e.html"
    assert main(["explore", str(run), "--out", str(out)]) == 0
    assert main(["explore", str(run), "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err
    assert main(["explore", str(run), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["explore", str(tmp_path / "missing"), "--out", str(out), "--force"]) == 2
    capsys.readouterr()
    assert main(["explore", str(run), "--out", str(out), "--force", "--lang", "es"]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"página escrita en {out} (") and "ábrela en un navegador" in said
    assert main(["explore", str(run), "--out", str(out), "--lang", "es"]) == 2
    assert "ya existe; pasa --force" in capsys.readouterr().err


def test_tsne_keeps_clusters_apart_and_is_reproducible():
    """t-SNE (scikit-learn, in the docs and test extras): two far-apart clusters of points
    stay apart in 2-D, and the same seed gives the same picture."""
    pytest.importorskip("sklearn", reason="scikit-learn is in the test extra; install it")
    from minimodel.explorer import tsne

    rng = np.random.default_rng(2)
    a = rng.standard_normal((40, 16))
    b = rng.standard_normal((40, 16)) + 12.0
    coords = tsne(np.vstack([a, b]))
    assert coords.shape == (80, 2) and coords.dtype == np.float32
    assert np.isfinite(coords).all()
    centre_a, centre_b = coords[:40].mean(0), coords[40:].mean(0)
    nearer_own = ((np.linalg.norm(coords[:40] - centre_a, axis=1)
                   < np.linalg.norm(coords[:40] - centre_b, axis=1)).all()
                  and (np.linalg.norm(coords[40:] - centre_b, axis=1)
                       < np.linalg.norm(coords[40:] - centre_a, axis=1)).all())
    assert nearer_own
    np.testing.assert_array_equal(tsne(np.vstack([a, b])), coords)


def test_explore_adds_tsne_only_when_asked(tmp_path, capsys):
    pytest.importorskip("sklearn", reason="scikit-learn is in the test extra; install it")
    from minimodel.explorer import run_data

    run = tmp_path / "run"
    assert main(["train", "--tokenizer", "byte", "--d-model", "16", "--n-layer", "1",
                 "--n-head", "2", "--block-size", "16", "--batch-size", "4", "--steps", "3",
                 "--eval-interval", "3", "--out", str(run), "--quiet"]) == 0
    assert "tsne" not in run_data(run)["panels"][0]
    data = run_data(run, with_tsne=True)
    tsne_xy = np.frombuffer(__import__("base64").b64decode(data["panels"][0]["tsne"]), "<f4")
    assert len(tsne_xy) == 2 * len(data["tokens"])
    out = tmp_path / "t.html"
    assert main(["explore", str(run), "--tsne", "--out", str(out)]) == 0
    assert '"tsne":"' in out.read_text(encoding="utf-8")


def test_tsne_without_scikit_learn_says_how_to_get_it(monkeypatch):
    import sys

    from minimodel.explorer import tsne

    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.manifold", None)
    with pytest.raises(ValueError, match="pip install scikit-learn"):
        tsne(np.zeros((5, 2)))


def test_a_run_with_snapshots_gives_aligned_frames_and_its_metrics(tmp_path):
    from minimodel.explorer import run_data

    run = tmp_path / "run"
    assert main(["train", "--tokenizer", "byte", "--d-model", "16", "--n-layer", "1",
                 "--n-head", "2", "--block-size", "16", "--batch-size", "4", "--steps", "12",
                 "--eval-interval", "6", "--out", str(run), "--quiet"]) == 0
    data = run_data(run)
    rows = [json.loads(x) for x in (run / "snapshots" / "index.jsonl").read_text().splitlines()]
    assert data["steps"] == [r["step"] for r in rows] and data["steps"][0] == 0
    [panel] = data["panels"]                                  # tied: one matrix
    assert data["tied"] and panel["key"] == "E" and panel["frames"] == len(rows)
    coords = np.frombuffer(__import__("base64").b64decode(panel["coords"]), "<i2")
    assert coords.size == len(rows) * 256 * 2
    m = data["metrics"]
    assert m["probe_loss"] == [r["probe_loss"] for r in rows]
    assert all(0 <= s <= 1 for s in m["lookup_share"]) and len(m["churn_E"]) == len(rows)


def test_an_old_run_without_snapshots_opens_as_one_frame(tmp_path):
    import shutil

    from minimodel.explorer import run_data

    run = tmp_path / "run"
    assert main(["train", "--model", "cbow", "--steps", "3", "--eval-interval", "3",
                 "--out", str(run), "--quiet"]) == 0
    shutil.rmtree(run / "snapshots")
    data = run_data(run)
    assert data["steps"] == [None] and [p["key"] for p in data["panels"]] == ["E", "W"]
    assert data["metrics"] == {}


def test_a_compare_folder_stands_for_its_twins(tmp_path):
    from minimodel.explorer import expand_runs

    (tmp_path / "cmp" / "tied").mkdir(parents=True)
    (tmp_path / "cmp" / "untied").mkdir()
    (tmp_path / "run" / "snapshots").mkdir(parents=True)
    assert expand_runs([tmp_path / "cmp", tmp_path / "run"]) == [
        tmp_path / "cmp" / "tied", tmp_path / "cmp" / "untied", tmp_path / "run"]
