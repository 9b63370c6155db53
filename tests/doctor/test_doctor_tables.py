"""Embeddings stored as several tables (Molmo2, Idefics), a stored embedding transformers does
not read (ShieldGemma2's folder saved by Gemma 3's class), and the cache of transformers'
answers (a second run imports neither torch nor transformers, with the same verdict)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from doctor_helpers import V, build_hf, tensors, write_vocab

from minimodel.doctor import arch_cache, architecture, background, diagnose

pytest.importorskip("transformers")




def test_molmo2_embedding_is_its_two_stored_tables_stacked(sweep, tmp_path):
    cases = sweep.sweep_one("molmo2", "Molmo2ForConditionalGeneration", tmp_path)
    assert [c.variant for c in cases] == ["tied", "untied", "claims-tied-head-differs"]
    assert all(c.agree and c.doctor_healthy for c in cases), cases
    folder = next(tmp_path.glob("molmo2-*-untied"))
    stored = tensors(folder)
    base = next(k for k in stored if k.endswith("wte.embedding"))
    extra = next(k for k in stored if k.endswith("wte.new_embedding"))
    config = json.loads((folder / "config.json").read_text())["text_config"]
    # loading concatenates the two along the rows (saving splits the table back in two halves)
    rows = config["vocab_size"] + config["additional_vocab_size"]
    assert stored[base].shape[0] + stored[extra].shape[0] == rows
    report = diagnose(folder)
    roles = report.subject.roles
    assert roles.embedding_parts == [base, extra]  # the converter's order: base rows first
    assert report.subject.E.shape == (rows, 32)
    np.testing.assert_array_equal(report.subject.E, np.concatenate([stored[base], stored[extra]]))
    assert "sizes.config_vs_matrix" not in report.keys()
    assert report.to_dict()["embedding"]["name"] == f"{base} + {extra}"


def _idefics(sweep, folder: Path, extra: int) -> Path:
    import torch
    import transformers as tf

    torch.manual_seed(0)
    config = sweep.tiny_config("idefics", tied=True)
    config.additional_vocab_size = extra
    model = tf.IdeficsForVisionText2Text(config)
    model.save_pretrained(folder)
    write_vocab(folder, config.vocab_size + extra)  # the tokenizer knows the extra tokens too
    return folder


def test_idefics_additional_embedding_rows_follow_the_table(sweep, tmp_path):
    folder = _idefics(sweep, tmp_path / "idefics", extra=3)
    stored = tensors(folder)
    report = diagnose(folder)
    assert "sizes.ids_beyond_matrix" not in report.keys()
    assert report.healthy, report.keys()  # the tokenizer's V + 3 ids all have a row
    assert report.subject.E.shape == (V + 3, 32)
    parts = report.subject.roles.embedding_parts
    assert [p.rsplit(".", 2)[-2:] for p in parts] == [["embed_tokens", "weight"],
                                                      ["additional_embedding", "weight"]]
    np.testing.assert_array_equal(report.subject.E[V:], stored[parts[1]])
    assert report.keys()[0] == "tie.tied_stored_once"


def test_shieldgemma2_saved_by_gemma3s_class_is_not_read_back(sweep, tmp_path):
    cases = sweep.sweep_one("shieldgemma2", "Gemma3ForConditionalGeneration", tmp_path)
    assert [c.variant for c in cases] == ["tied", "untied", "claims-tied-head-differs"]
    for c in cases:
        # transformers itself leaves the embedding missing (random) in every variant...
        assert not c.truth_healthy, c
        # ...and the doctor says why: the stored table renames to no tensor of the model
        assert c.agree and not c.doctor_healthy and c.keys[0] == "problem:tie.embedding_not_read"
    report = diagnose(next(tmp_path.glob("shieldgemma2-*-untied")))
    unread = report.findings[0].values
    assert unread["stored"] == "model.language_model.model.embed_tokens.weight"
    assert unread["expected"] == "model.language_model.embed_tokens.weight"
    assert unread["renamed"] not in (unread["stored"], unread["expected"])


CHILD = ("import json, sys; from minimodel.doctor import diagnose; "
         "r = diagnose(sys.argv[1]); "
         "print(json.dumps([r.keys(), r.subject.roles.source, "
         "'torch' in sys.modules, 'transformers' in sys.modules]))")


def _run_child(folder: Path, cache: Path) -> list:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_a_second_run_answers_from_the_cache_without_torch(tmp_path):
    folder = build_hf("gpt2", tied=False, folder=tmp_path / "gpt2")
    first = _run_child(folder, tmp_path / "cache")
    second = _run_child(folder, tmp_path / "cache")
    # the first run asked transformers in a child process: this one imported neither
    assert first[1].startswith("transformers ") and first[2:] == [False, False]
    assert second[:2] == first[:2]
    assert second[2:] == [False, False]  # answered from the cache
    assert len(list((tmp_path / "cache" / "minimodel" / "doctor").glob("*.json"))) == 1


def test_the_cache_is_per_version_and_survives_a_corrupt_file(tmp_path, monkeypatch):
    folder = build_hf("gpt2", tied=True, folder=tmp_path / "gpt2")
    config = json.loads((folder / "config.json").read_text())
    keys = list(tensors(folder))
    arch = background.describe(config, folder, keys)
    path = arch_cache.entry_path(architecture.installed_version(), config)
    assert arch_cache.load(path)["architecture"]["embedding"] == "transformer.wte.weight"
    assert arch_cache.entry_path("0.0.1", config) != path  # another version: another entry
    path.write_text("{not json", encoding="utf-8")  # a broken file is asked again, rewritten
    again = background.describe(config, folder, keys)
    assert (again.embedding, again.tied, again.keys) == (arch.embedding, arch.tied, arch.keys)
    assert arch_cache.load(path) is not None
    # a key the cache has not seen is asked for (and added), not guessed
    with_head = background.describe(config, folder, keys + ["lm_head.weight"])
    assert with_head.rename("lm_head.weight") == "lm_head.weight"
    assert "lm_head.weight" in arch_cache.load(path)["keys"]


def test_two_layouts_of_one_tensor_are_one_table_not_two():
    from types import SimpleNamespace

    from minimodel.doctor.architecture import Architecture
    from minimodel.doctor.names import roles_from_architecture

    info = SimpleNamespace(shape=(V, 32))
    arch = Architecture(source="t", version="t", class_name="C", embedding="m.embed.weight",
                        head=None, head_bias=None, tied=False, tie_flag="-", tie_written=False,
                        embedding_parts=["m.embed.weight"],
                        keys={"old.embed": ["m.embed.weight", 0, True],
                              "m.embed.weight": ["m.embed.weight", 0, True],
                              "wte.embedding": ["m.embed.weight", 0, True],
                              "wte.new_embedding": ["m.embed.weight", 1, True]})
    same = roles_from_architecture({"old.embed": info, "m.embed.weight": info}, arch)
    assert (same.embedding, same.embedding_parts) == ("old.embed", [])
    # a converter's positions: the new table after the base one, whatever the file's order
    stacked = roles_from_architecture({"wte.new_embedding": info, "wte.embedding": info}, arch)
    assert stacked.embedding_parts == ["wte.embedding", "wte.new_embedding"]
