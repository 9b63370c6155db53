"""The doctor against transformers' own ground truth: a fast subset of the full sweep
(benchmarks/doctor_hf_sweep.py, every LM architecture transformers maps), and the layouts and
configs the sweep does not produce by itself (older key layouts, separate vocabularies,
configs without the flag, resized vocabularies, pickles)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from doctor_helpers import V, build_hf, edit_config, rewrite, tensors
from minimodel.cli import main
from minimodel.doctor import diagnose

pytest.importorskip("transformers")
pytest.importorskip("scipy")

# One of each kind: a tied LM, masked LMs with their own head names and a head bias, T5's
# aliases, Whisper's proj_out, GPT-NeoX, Marian, and multimodal wrappers (Llava untied by
# default, Gemma 3 tied).
FAST = {"gpt2": "GPT2LMHeadModel", "bert": "BertForMaskedLM", "albert": "AlbertForMaskedLM",
        "distilbert": "DistilBertForMaskedLM", "electra": "ElectraForMaskedLM",
        "t5": "T5ForConditionalGeneration", "whisper": "WhisperForConditionalGeneration",
        "gpt_neox": "GPTNeoXForCausalLM", "marian": "MarianMTModel",
        "llava": "LlavaForConditionalGeneration", "gemma3": "Gemma3ForConditionalGeneration"}



def not_ok(report) -> list[tuple[str, str]]:
    return [(f.status, f.key) for f in report.findings if f.status not in ("ok", "skipped")]


@pytest.mark.parametrize("model_type", sorted(FAST))
def test_the_doctor_agrees_with_transformers(sweep, tmp_path, model_type):
    cases = sweep.sweep_one(model_type, FAST[model_type], tmp_path)
    variants = {c.variant for c in cases}
    assert "tied" in variants
    # T5 is always tied in transformers 5; every other one here has an untied variant
    assert ("untied" in variants) == (model_type != "t5")
    for c in cases:
        assert c.agree, c
        assert c.source.startswith("transformers ")
        if c.variant == "untied":  # healthy untied heads under their own names (proj_out, ...)
            assert (c.doctor, c.doctor_healthy) == ("untied", True)
        if c.variant == "claims-tied-head-differs":  # transformers 5 loads it untied: a defect
            assert c.truth == "untied" and not c.doctor_healthy
            assert "problem:tie.tied_but_different" in c.keys


def test_the_sweep_enumerates_transformers_mappings_not_a_list(sweep):
    from transformers.models.auto import modeling_auto

    found = sweep.architectures()
    assert len(found) >= len(modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES)
    assert {("llava", "LlavaForConditionalGeneration"), ("albert", "AlbertForMaskedLM"),
            ("whisper", "WhisperForConditionalGeneration")} <= set(found)


def _llava(sweep, folder: Path, tied: bool):
    import torch
    import transformers as tf

    torch.manual_seed(0)
    model = tf.LlavaForConditionalGeneration(sweep.tiny_config("llava", tied))
    model.save_pretrained(folder)
    return tf.LlavaForConditionalGeneration


@pytest.mark.parametrize("layout", ["as saved", "in memory"])
@pytest.mark.parametrize("tied_claim", [False, True])
def test_both_llava_layouts_are_read_through_transformers_renames(sweep, tmp_path, tied_claim,
                                                                  layout):
    folder = tmp_path / "llava"
    cls = _llava(sweep, folder, tied=False)
    state = tensors(folder)
    # transformers 5.24 saves Llava in the older layout (its conversions reverted on save)
    assert {"language_model.model.embed_tokens.weight", "language_model.lm_head.weight"} <= \
        set(state)
    if layout == "in memory":  # the model's own names
        state = {k.replace("language_model.model.", "model.language_model.")
                 .replace("language_model.lm_head.", "lm_head."): v for k, v in state.items()}
        rewrite(folder, state)
    if tied_claim:
        sweep.claim_tied(folder)
    report = diagnose(folder)
    names = report.subject.roles
    assert names.embedding.endswith("language_model.embed_tokens.weight") or \
        names.embedding == "language_model.model.embed_tokens.weight"
    assert names.head in ("language_model.lm_head.weight", "lm_head.weight")
    truth, _ = sweep.load_truth(cls, folder)
    assert truth == "untied"  # transformers loads both matrices, untied, in either case
    assert report.healthy is (not tied_claim)
    if tied_claim:
        assert ("problem", "tie.tied_but_different") in not_ok(report)


def test_marian_with_separate_vocabularies_is_healthy(tmp_path):
    import torch
    import transformers as tf

    torch.manual_seed(0)
    config = tf.MarianConfig(vocab_size=V, decoder_vocab_size=80, d_model=32, encoder_layers=1,
                             decoder_layers=1, encoder_attention_heads=2,
                             decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                             share_encoder_decoder_embeddings=False, pad_token_id=0,
                             decoder_start_token_id=0)
    tf.MarianMTModel(config).save_pretrained(tmp_path / "marian")
    report = diagnose(tmp_path / "marian")
    assert report.healthy and not [k for s, k in not_ok(report) if k.startswith("sizes")]
    assert report.subject.arch.vocab_where in ("vocab_size", "decoder_vocab_size")


def test_blip2_qformer_vocabulary_is_not_compared_with_the_language_model(sweep, tmp_path):
    import torch
    import transformers as tf

    torch.manual_seed(0)
    config = sweep.tiny_config("blip-2", True)
    config.qformer_config.vocab_size = 50  # its own vocabulary, not the LM's
    tf.Blip2ForConditionalGeneration(config).save_pretrained(tmp_path / "blip2")
    report = diagnose(tmp_path / "blip2")
    assert report.healthy, not_ok(report)
    assert report.subject.arch.vocab_where == "text_config.vocab_size"


def test_resize_with_mean_initialised_rows_is_information(tmp_path):
    import torch
    import transformers as tf

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=V, n_embd=32, n_layer=1, n_head=2,
                                             n_positions=32))
    model.resize_token_embeddings(V + 5, pad_to_multiple_of=64)  # 101 -> 128 rows
    model.save_pretrained(tmp_path / "resized")
    (tmp_path / "resized" / "vocab.json").write_text(
        json.dumps({f"tok{i}": i for i in range(V + 5)}), encoding="utf-8")
    report = diagnose(tmp_path / "resized")
    assert report.healthy, not_ok(report)
    info = next(f for f in report.findings if f.key == "rows.new_at_mean")
    assert info.status == "info" and info.data["new_rows"] == list(range(V, 128))
    reach = next(f for f in report.findings if f.check == "reachability")
    assert reach.status == "ok" and set(range(V, 128)) <= set(reach.data["padding_id_unreachable"])


def test_a_head_bias_that_makes_a_hull_row_win_is_counted(tmp_path):
    folder = build_hf("bert", True, tmp_path / "bert")
    state = tensors(folder)
    E = state["bert.embeddings.word_embeddings.weight"]
    E[7] = 0.5 * E[3] + 0.5 * E[20]  # inside the hull: unreachable without a bias
    rewrite(folder, state)
    assert ("problem", "reach.unreachable") in not_ok(diagnose(folder))
    state["cls.predictions.bias"] = np.zeros(V, np.float32)
    state["cls.predictions.bias"][7] = 50.0  # now token 7 wins wherever h is small
    rewrite(folder, state)
    report = diagnose(folder)
    reach = next(f for f in report.findings if f.check == "reachability")
    assert reach.status == "ok" and reach.data["bias"] == "cls.predictions.bias"


def test_a_tied_pickle_is_stored_once_and_read_memory_mapped(tmp_path, capsys):
    import torch
    import transformers as tf

    folder = build_hf("gpt2", True, tmp_path / "bin")
    model = tf.GPT2LMHeadModel.from_pretrained(folder)
    (folder / "model.safetensors").unlink()
    torch.save(model.state_dict(), folder / "pytorch_model.bin")  # both names, one storage
    report = diagnose(folder)
    assert report.healthy and report.findings[0].key == "tie.tied_shared_storage"
    assert report.subject.files.note == "pytorch_model.bin read without torch (tensors only, " \
        "memory-mapped)"  # a zip-format pickle: NumPy maps it (doctor.torch_pickle)
    capsys.readouterr()  # the building's progress bars
    assert main(["doctor", str(folder)]) == 0
    assert capsys.readouterr().err == ""  # no pickle warning leaks


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_a_config_without_the_flag_uses_the_class_default(tmp_path, family):
    folder = build_hf(family, True, tmp_path / family)
    edit_config(folder, tie_word_embeddings=None)  # as transformers 4 wrote it
    report = diagnose(folder)
    assert report.healthy and report.findings[0].key == "tie.tied_stored_once"
    assert "not written; the default of" in report.subject.claims[0].where


def test_a_llama_saved_tied_without_the_flag_is_untied_and_says_so_in_either_language(tmp_path):
    from minimodel.doctor.texts import words

    folder = build_hf("llama", True, tmp_path / "llama")
    edit_config(folder, tie_word_embeddings=None)  # LlamaConfig's default is untied
    report = diagnose(folder)
    [problem] = report.problems
    assert problem.key == "tie.untied_head_absent"
    version = report.subject.arch.version
    assert words(problem.key, problem.values, "en")[0] == (
        "The config says untied (config.json: tie_word_embeddings (not written; the default of "
        f"LlamaForCausalLM in transformers {version})) but the file has no head (lm_head.weight).")
    assert words(problem.key, problem.values, "es")[0] == (
        "La configuración dice sin atar (config.json: tie_word_embeddings (no está escrito; es el "
        f"valor por defecto de LlamaForCausalLM en transformers {version})) pero el archivo no "
        "tiene cabeza de salida (lm_head.weight).")


@pytest.mark.parametrize("with_transformers", [True, False])
def test_clip_text_model_has_no_head_to_tie(tmp_path, monkeypatch, with_transformers):
    import transformers as tf

    config = tf.CLIPTextConfig(vocab_size=V, hidden_size=32, intermediate_size=64,
                               num_hidden_layers=1, num_attention_heads=2, projection_dim=32)
    tf.CLIPTextModel(config).save_pretrained(tmp_path / "clip")
    if not with_transformers:
        monkeypatch.setitem(sys.modules, "transformers", None)  # the built-in table decides
    report = diagnose(tmp_path / "clip")
    assert report.healthy and report.findings[0].key == "tie.no_head"
    assert report.subject.roles.source.startswith("transformers") is with_transformers


def test_old_gpt_neox_head_name_is_renamed_by_transformers(tmp_path):
    import torch
    import transformers as tf

    torch.manual_seed(0)
    config = tf.GPTNeoXConfig(vocab_size=V, hidden_size=32, num_hidden_layers=1,
                              num_attention_heads=2, intermediate_size=64)
    tf.GPTNeoXForCausalLM(config).save_pretrained(tmp_path / "neox")
    state = {k.replace("lm_head.", "embed_out."): v for k, v in tensors(tmp_path / "neox").items()}
    rewrite(tmp_path / "neox", state)  # Pythia's layout on the Hub
    report = diagnose(tmp_path / "neox")
    assert report.healthy and report.subject.roles.head == "embed_out.weight"


@pytest.mark.parametrize("model_type, head", [("gpt_neox", "embed_out.weight"),
                                              ("bloom", "lm_head.weight")])
def test_without_transformers_a_missing_head_is_named_by_the_table(tmp_path, monkeypatch,
                                                                    model_type, head):
    from safetensors.numpy import save_file

    E = np.random.default_rng(0).normal(size=(V, 16)).astype(np.float32)
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": model_type, "vocab_size": V, "tie_word_embeddings": False}))
    name = "gpt_neox.embed_in.weight" if model_type == "gpt_neox" else \
        "transformer.word_embeddings.weight"
    save_file({name: E}, str(tmp_path / "model.safetensors"))
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if not installed
    report = diagnose(tmp_path)
    assert report.subject.roles.source == "the built-in table"
    assert report.subject.roles.head_name == head
    assert ("problem", "tie.untied_head_absent") in not_ok(report)


def test_a_corrupt_tokenizer_beside_a_healthy_model_is_a_finding(tmp_path, capsys):
    folder = build_hf("llama", True, tmp_path / "llama")
    (folder / "vocab.json").unlink()
    (folder / "tokenizer.json").write_text('{"model": {"vocab": ', encoding="utf-8")
    report = diagnose(folder)
    assert not_ok(report) == [("problem", "sizes.tokenizer_unreadable")]
    assert main(["doctor", str(folder)]) == 1   # whoever loads the folder hits the same error


def test_tie_flags_that_disagree_with_the_head_absent_are_a_problem(sweep, tmp_path, capsys):
    """Top level tied, text_config untied, no head in the file: transformers reads one flag,
    but a loader that reads the other builds an untied head that is not in the file (random
    weights). A problem (exit 1), not a warning."""
    folder = tmp_path / "llava"
    _llava(sweep, folder, tied=True)
    assert not any(k.endswith("lm_head.weight") for k in tensors(folder))   # stored once
    config = json.loads((folder / "config.json").read_text())
    config["tie_word_embeddings"] = True
    config["text_config"]["tie_word_embeddings"] = False
    (folder / "config.json").write_text(json.dumps(config))
    report = diagnose(folder)
    disagree = [f for f in report.findings if f.key.startswith("tie.flags_disagree")]
    assert [(f.status, f.key) for f in disagree] == [("problem", "tie.flags_disagree_known")]
    assert "text_config.tie_word_embeddings = false" in disagree[0].values["flags"]
    assert main(["doctor", str(folder)]) == 1
