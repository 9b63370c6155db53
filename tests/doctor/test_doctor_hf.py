"""`minimodel doctor` on tiny Hugging Face models: healthy ones report nothing, each planted
defect is found (and named with its figures)."""

from __future__ import annotations

import numpy as np
import pytest

from doctor_helpers import (EMBEDDING, FAMILIES, HEAD, V, build_hf, edit_config, rewrite,
                            tensors, write_fast_tokenizer, write_vocab)
from minimodel.doctor import diagnose

pytest.importorskip("transformers")
pytest.importorskip("scipy")


def not_ok(report) -> list[tuple[str, str]]:
    return [(f.status, f.key) for f in report.findings if f.status not in ("ok", "skipped")]


def hf(tmp_path, family, tied=True, **save):
    return build_hf(family, tied, tmp_path / f"{family}-{'tied' if tied else 'untied'}", **save)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("tied", [True, False])
def test_healthy_models_report_nothing(tmp_path, family, tied):
    if family == "t5" and not tied:
        pytest.skip("transformers 5 always ties T5; the untied T5 layout is built by hand below")
    report = diagnose(hf(tmp_path, family, tied))
    s = report.subject
    assert not_ok(report) == []
    assert s.roles.embedding == EMBEDDING[family]
    assert (s.W is None) == tied  # save_pretrained omits a tied head
    if not tied:
        assert s.roles.head == HEAD.get(family, "lm_head.weight")
    expected = "tie.tied_stored_once" if tied else "tie.untied_ok"
    reach = next(f for f in report.findings if f.check == "reachability")
    padding = reach.data["padding_id_unreachable"]  # BERT's and Gemma's zero [PAD] row (id 0)
    assert report.keys("ok")[:4] == [expected, "sizes.agree", "rows.none",
                                     "reach.all_but_padding" if padding else "reach.all"]
    assert padding in ([], [0])
    assert reach.data["method"] == "all rows" and reach.data["reachable"] == V - len(padding)


def test_untied_t5_with_its_own_head_is_healthy(tmp_path):
    # The layout of T5 v1.1 / Flan-T5 on the Hub: tie_word_embeddings false, lm_head stored.
    folder = hf(tmp_path, "t5")
    state = tensors(folder)
    state["lm_head.weight"] = np.random.default_rng(1).normal(size=state["shared.weight"].shape
                                                              ).astype(np.float32)
    rewrite(folder, state)
    edit_config(folder, tie_word_embeddings=False)
    assert not_ok(diagnose(folder)) == []


@pytest.mark.parametrize("family", ["gpt2", "llama", "bert"])
def test_tied_flag_but_a_different_head_is_a_problem(tmp_path, family):
    folder = hf(tmp_path, family)
    state = tensors(folder)
    E = state[EMBEDDING[family]]
    W = E.copy()
    W[5] += 0.25  # one row changed by 0.25 in every column
    state[HEAD.get(family, "lm_head.weight")] = W
    rewrite(folder, state)
    report = diagnose(folder)
    assert ("problem", "tie.tied_but_different") in not_ok(report)
    diff = next(f for f in report.findings if f.key == "tie.tied_but_different").data["difference"]
    assert diff["rows_differ"] == 1
    assert diff["max_abs"] == pytest.approx(0.25, rel=1e-5)


def test_head_stored_twice_identical_is_a_warning_not_a_problem(tmp_path):
    folder = hf(tmp_path, "gpt2")
    state = tensors(folder)
    state["lm_head.weight"] = state["transformer.wte.weight"].copy()
    rewrite(folder, state)
    report = diagnose(folder)
    assert not_ok(report) == [("warning", "tie.stored_twice")]
    assert report.healthy


def test_untied_flag_with_the_head_missing_is_a_problem(tmp_path):
    folder = hf(tmp_path, "llama")  # saved tied: no lm_head.weight
    edit_config(folder, tie_word_embeddings=False)
    assert ("problem", "tie.untied_head_absent") in not_ok(diagnose(folder))


def test_untied_flag_with_an_identical_head_is_a_warning(tmp_path):
    folder = hf(tmp_path, "qwen2", tied=False)
    state = tensors(folder)
    state["lm_head.weight"] = state["model.embed_tokens.weight"].copy()
    rewrite(folder, state)
    assert not_ok(diagnose(folder)) == [("warning", "tie.untied_identical")]


def test_a_nested_text_config_flag_that_disagrees_is_a_problem(tmp_path):
    # Top level says untied, text_config says tied, the head is absent: which flag a loader
    # reads decides between a tied head and a random one.
    folder = hf(tmp_path, "gemma")
    edit_config(folder, tie_word_embeddings=False,
                text_config={"model_type": "gemma", "tie_word_embeddings": True})
    report = diagnose(folder)
    assert ("problem", "tie.flags_disagree") in not_ok(report)
    flags = next(f for f in report.findings if f.key == "tie.flags_disagree").values["flags"]
    assert "text_config.tie_word_embeddings = true" in flags


def test_an_unwritten_flag_whose_default_disagrees_with_the_nested_one(tmp_path):
    folder = hf(tmp_path, "llama")  # llama's default is untied
    edit_config(folder, tie_word_embeddings=None, text_config={"tie_word_embeddings": True})
    report = diagnose(folder)
    assert ("problem", "tie.flags_disagree") in not_ok(report)
    assert ("problem", "tie.untied_head_absent") in not_ok(report)


def test_t5_encoder_table_that_differs_from_shared_is_a_problem(tmp_path):
    folder = hf(tmp_path, "t5")
    state = tensors(folder)
    state["encoder.embed_tokens.weight"] = state["shared.weight"] * 2
    rewrite(folder, state)
    assert ("problem", "tie.alias_differs") in not_ok(diagnose(folder))


def test_a_tokenizer_larger_than_the_embedding_is_a_problem(tmp_path):
    folder = hf(tmp_path, "gpt2")
    (folder / "vocab.json").unlink()
    write_fast_tokenizer(folder, V, added=[(V, "<|im_start|>"), (V + 1, "<|im_end|>")])
    report = diagnose(folder)
    assert not_ok(report) == [("problem", "sizes.ids_beyond_matrix")]
    finding = report.findings[1]
    assert finding.data["ids"] == [V, V + 1]
    assert "'<|im_end|>'" in finding.values["tokens"] and finding.values["tokenizer_size"] == V + 2


def test_config_vocab_size_that_disagrees_with_the_matrix_is_a_problem(tmp_path):
    folder = hf(tmp_path, "bert")
    edit_config(folder, vocab_size=V + 4)
    assert ("problem", "sizes.config_vs_matrix") in not_ok(diagnose(folder))


@pytest.mark.parametrize("zero", [True, False])
def test_padding_rows_are_named_and_whether_untouched(tmp_path, zero):
    folder = hf(tmp_path, "llama")
    write_vocab(folder, V - 8)  # rows V-8 .. V-1 are padding
    if zero:
        state = tensors(folder)
        state["model.embed_tokens.weight"][V - 8:] = 0
        rewrite(folder, state)
    report = diagnose(folder)
    key = "sizes.padding_zero" if zero else "sizes.padding_like_used"
    assert not_ok(report) == [("warning", key)]  # zero padding rows are not called unreachable
    assert report.findings[1].values["first"] == V - 8 and report.findings[1].values["padding"] == 8


def test_under_trained_rows_are_listed_with_their_tokens(tmp_path):
    folder = hf(tmp_path, "gpt2")
    state = tensors(folder)
    E = state["transformer.wte.weight"]
    trained = np.ones(V, dtype=bool)
    trained[[7, 40]] = False
    E[trained] *= 10  # the trained rows grew; rows 7 and 40 stayed at their initialisation
    E[60] = 0  # and one row is zero
    rewrite(folder, state)
    report = diagnose(folder)
    rows = next(f for f in report.findings if f.check == "rows")
    assert (rows.status, rows.key) == ("warning", "rows.tied")
    assert rows.data["small"] == [7, 40] and rows.data["zero"] == [60]
    assert "7 'tok7'" in rows.values["tokens"]


def test_a_token_inside_the_convex_hull_is_proved_unreachable(tmp_path):
    folder = hf(tmp_path, "qwen2", tied=False)
    state = tensors(folder)
    W = state["lm_head.weight"]
    W[11] = 0.5 * W[3] + 0.3 * W[20] + 0.2 * W[50]  # inside the hull of rows 3, 20, 50
    rewrite(folder, state)
    report = diagnose(folder)
    assert not_ok(report) == [("problem", "reach.unreachable")]
    finding = next(f for f in report.findings if f.key == "reach.unreachable")
    assert list(finding.data["unreachable"]) == ["11"]
    mix = finding.data["unreachable"]["11"]  # the heaviest rows of the mixture found by the LP
    rebuilt = sum(weight * W[j] for j, weight in mix)
    assert np.linalg.norm(rebuilt - W[11]) < 1e-4 * np.linalg.norm(W[11])


def test_sharded_bf16_and_pickled_folders_read_like_the_single_file(tmp_path):
    import torch

    single = diagnose(hf(tmp_path, "llama")).subject.E
    sharded = build_hf("llama", True, tmp_path / "sharded", max_shard_size="20KB")
    assert (sharded / "model.safetensors.index.json").is_file()
    report = diagnose(sharded)
    assert np.array_equal(report.subject.E, single) and not_ok(report) == []
    pickled = build_hf("llama", True, tmp_path / "bin", safe_serialization=False)
    if (pickled / "pytorch_model.bin").is_file():  # transformers 5 may write safetensors anyway
        assert np.array_equal(diagnose(pickled).subject.E, single)
    # bfloat16: read without torch by widening the raw 16-bit words
    from safetensors.torch import save_file

    bf = tmp_path / "bf16"
    bf.mkdir()
    (bf / "config.json").write_text((tmp_path / "llama-tied" / "config.json").read_text())
    E16 = torch.from_numpy(single).to(torch.bfloat16)
    save_file({"model.embed_tokens.weight": E16}, str(bf / "model.safetensors"))
    assert np.array_equal(diagnose(bf).subject.E, E16.float().numpy())
