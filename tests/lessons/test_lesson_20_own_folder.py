"""Lesson 20 exports into a folder of its own: run from a learner's folder that already holds
an export in ``out/hf``, the lesson's code leaves every file there as it was (both languages)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from minimodel.lab.lessons import code_blocks, find_lesson


@pytest.mark.parametrize("lang", ["en", "es"])
def test_lesson_20_leaves_the_learners_out_hf_untouched(tmp_path, lang):
    export = tmp_path / "out" / "hf"
    export.mkdir(parents=True)
    learner_files = {"config.json": json.dumps({"vocab_size": 1024, "note": "the learner's"}),
                     "model.safetensors": "the learner's weights",
                     "tokenizer.json": "the learner's tokenizer"}
    for name, text in learner_files.items():
        (export / name).write_text(text, encoding="utf-8")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))

    text = find_lesson("graduation").path(lang).read_text(encoding="utf-8")
    request = tmp_path.parent / f"request-{lang}.json"
    result = tmp_path.parent / f"result-{lang}.json"
    request.write_text(json.dumps({"codes": [b.code for b in code_blocks(text)],
                                   "figure_dir": None, "result": str(result)}), encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg")
    subprocess.run([sys.executable, "-m", "minimodel.lab._lesson_runner", str(request)],
                   cwd=tmp_path, env=env, check=True, timeout=600)      # run where the learner is
    runs = json.loads(result.read_text(encoding="utf-8"))
    assert [r["error"] for r in runs] == [None] * len(runs)
    assert len(runs) == len(code_blocks(text)) >= 3                     # every block ran

    for name, text in learner_files.items():
        assert (export / name).read_text(encoding="utf-8") == text
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
