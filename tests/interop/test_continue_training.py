"""The documented path beyond one machine: export to Hugging Face, then keep training with
transformers' Trainer (examples/continue_training_hf.py); a tied model stays tied."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from minimodel.cli import main
from minimodel.data import load_corpus

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "continue_training_hf.py"
TINY = ["--d-model", "32", "--n-layer", "1", "--n-head", "2", "--block-size", "32",
        "--batch-size", "4", "--steps", "5", "--eval-interval", "5", "--threads", "1",
        "--quiet", "--tokenizer", "bpe", "--vocab-size", "300"]


def _example():
    spec = importlib.util.spec_from_file_location("continue_training_hf", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("tie", ["--tied", "--untied"])
def test_two_trainer_steps_on_the_exported_model(tmp_path, tie):
    run, hf, out = tmp_path / "run", tmp_path / "hf", tmp_path / "continued"
    assert main(["train", "--out", str(run), tie, *TINY]) == 0
    assert main(["export", str(run), "--format", "hf", str(hf)]) == 0
    example = _example()
    report = example.continue_training(hf, load_corpus()[:20_000], steps=2, out_dir=out)
    assert torch.isfinite(torch.tensor(report["loss"]))
    assert report["wte_changed"] and report["lm_head_changed"]
    assert report["tied_before"] is report["tied_after"] is (tie == "--tied")
    # The saved result loads back with the tie (or its absence) intact.
    from transformers import GPT2LMHeadModel

    again = GPT2LMHeadModel.from_pretrained(out)
    assert example.is_tied(again) is (tie == "--tied")
    if tie == "--tied":
        assert torch.equal(again.lm_head.weight, again.transformer.wte.weight)


@pytest.mark.parametrize("tie", ["--tied", "--untied"])
def test_two_trainer_steps_on_an_exported_masked_lm(tmp_path, tie):
    """The masked LM takes the same path: MegatronBertForMaskedLM + the MLM data collator."""
    run, hf, out = tmp_path / "run", tmp_path / "hf", tmp_path / "continued"
    assert main(["train", "--model", "mlm", "--out", str(run), tie, *TINY]) == 0
    assert main(["export", str(run), str(hf)]) == 0
    example = _example()
    assert example.is_masked_lm(hf)
    report = example.continue_training(hf, load_corpus()[:20_000], steps=2, out_dir=out)
    assert torch.isfinite(torch.tensor(report["loss"]))
    assert report["wte_changed"] and report["lm_head_changed"]
    assert report["tied_before"] is report["tied_after"] is (tie == "--tied")
    from transformers import AutoModelForMaskedLM

    again = AutoModelForMaskedLM.from_pretrained(out)
    assert type(again).__name__ == "MegatronBertForMaskedLM"
    assert example.is_tied(again) is (tie == "--tied")
    # ...and it comes back to minimodel with the trained weights and the tie.
    assert main(["import-hf", str(out), str(tmp_path / "back")]) == 0
    import minimodel as mm

    back = mm.load(tmp_path / "back" / "model.safetensors")
    assert back.tied is (tie == "--tied")
    assert torch.equal(torch.from_numpy(back.token_emb.weight.data),
                       again.bert.embeddings.word_embeddings.weight.detach())
