"""The explorer's data: PCA coordinates, cosine neighbours, the page and the command."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from minimodel.cli import main
from minimodel.explorer import cosine_neighbours, explorer_html, pca


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
    run = {"run": "r", "model": "GPT", "tied": True, "tokens": ["a", "</script>"],
           "counts": [1, 2], "panels": [{"name": "E", "projections": {"pca2": [[0, 0], [1, 1]]},
                                         "neighbours": [[1], [0]], "similarity": [[0.5], [0.5]]}]}
    page = explorer_html([run])
    blob = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    assert json.loads(blob.group(1).replace("<\\/", "</"))["runs"][0]["tokens"][1] == "</script>"
    assert "http://" not in page and "https://" not in page      # nothing to fetch


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
