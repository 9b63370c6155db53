"""Keep training a minimodel GPT or masked LM with Hugging Face's Trainer, once NumPy on one
CPU is not enough.

    minimodel train --out runs/gpt-tied                    # train here, on the CPU
    minimodel export runs/gpt-tied --format hf out/hf      # GPT-2 folder + tokenizer
    python examples/continue_training_hf.py out/hf --steps 200 --out out/hf-continued

    minimodel train --model mlm --out runs/mlm-tied        # the masked LM works the same way
    minimodel export runs/mlm-tied out/mlm-hf              # MegatronBertForMaskedLM folder
    python examples/continue_training_hf.py out/mlm-hf --steps 200 --out out/mlm-continued

The same script runs on many GPUs or machines without a change: launch it with
``accelerate launch examples/continue_training_hf.py ...`` (``accelerate config`` once), and
``Trainer`` spreads the batches over the devices. Here it runs on the CPU.

A tied model stays tied: transformers restores ``tie_word_embeddings`` on load, so the output
layer's weight (GPT-2's ``lm_head``, MegatronBERT's ``cls.predictions.decoder``) IS the input
embedding (one tensor), the optimizer sees it once, and both names change together. The
script checks that after training and says so. A masked LM gets its [MASK] positions from
transformers' ``DataCollatorForLanguageModeling`` (15 %, BERT's 80/10/10 rule, as minimodel).
Its output bias (``cls.predictions.bias``) stays frozen at zero unless ``--train-output-bias``:
minimodel's head has no bias, so only then can ``minimodel import-hf`` bring the model back.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch
from transformers import (AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM,
                          AutoTokenizer, DataCollatorForLanguageModeling, PreTrainedModel,
                          Trainer, TrainingArguments, default_data_collator)


class TextBlocks(torch.utils.data.Dataset):
    """Consecutive blocks of ``block_size`` token ids. A causal LM shifts the labels itself, so
    input_ids and labels are the same block; a masked LM's labels come from the collator."""

    def __init__(self, ids: list[int], block_size: int, with_labels: bool = True) -> None:
        if len(ids) < block_size + 1:
            raise ValueError(f"the corpus gives {len(ids)} tokens; at least block_size + 1 = "
                             f"{block_size + 1} are needed")
        self.ids = torch.tensor(ids, dtype=torch.long)
        self.block = block_size
        self.with_labels = with_labels

    def __len__(self) -> int:
        return (len(self.ids) - 1) // self.block

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        block = self.ids[i * self.block:(i + 1) * self.block]
        return {"input_ids": block, "labels": block.clone()} if self.with_labels else \
            {"input_ids": block}


def is_masked_lm(hf_dir: str | Path) -> bool:
    """True for an exported masked LM (MegatronBERT), False for a GPT-2."""
    return AutoConfig.from_pretrained(hf_dir).model_type == "megatron-bert"


def is_tied(model: PreTrainedModel) -> bool:
    """One tensor for both roles: same object and same storage."""
    head, emb = model.get_output_embeddings().weight, model.get_input_embeddings().weight
    return head is emb or head.data_ptr() == emb.data_ptr()


def continue_training(hf_dir: str | Path, text: str, steps: int, out_dir: str | Path,
                      batch_size: int = 4, lr: float = 3e-4, seed: int = 0,
                      train_output_bias: bool = False) -> dict:
    """Train the exported model for ``steps`` optimizer steps on ``text`` with ``Trainer``.

    Returns:
        ``{"loss", "tied_before", "tied_after", "wte_changed", "lm_head_changed", "out"}``
        (``wte``: the input embedding, ``lm_head``: the output layer, whatever the model).
    """
    masked = is_masked_lm(hf_dir)
    model = (AutoModelForMaskedLM if masked else AutoModelForCausalLM).from_pretrained(hf_dir)
    tokenizer = AutoTokenizer.from_pretrained(hf_dir)
    block = min(model.config.max_position_embeddings if masked else model.config.n_positions,
                128)
    data = TextBlocks(tokenizer(text)["input_ids"], block, with_labels=not masked)
    collator = (DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15,
                                                seed=seed) if masked else default_data_collator)
    if masked and not train_output_bias:
        # Zero and frozen: the bias minimodel's head does not have (see the docstring).
        for bias in {id(b): b for b in (model.cls.predictions.bias,
                                        model.cls.predictions.decoder.bias)}.values():
            bias.requires_grad_(False)
    emb, head = model.get_input_embeddings().weight, model.get_output_embeddings().weight
    wte_before, head_before = emb.detach().clone(), head.detach().clone()
    tied_before = is_tied(model)
    args = TrainingArguments(
        output_dir=str(out_dir), max_steps=steps, per_device_train_batch_size=batch_size,
        learning_rate=lr, lr_scheduler_type="constant", logging_steps=1, save_strategy="no",
        report_to=[], use_cpu=not torch.cuda.is_available(), seed=seed,
        dataloader_num_workers=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=data, data_collator=collator)
    result = trainer.train()
    trainer.save_model(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    return {"loss": float(result.training_loss), "tied_before": tied_before,
            "tied_after": is_tied(model),
            "wte_changed": not torch.equal(wte_before, emb.detach()),
            "lm_head_changed": not torch.equal(head_before, head.detach()),
            "out": str(out_dir)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("hf_dir", help="a folder written by `minimodel export --format hf`")
    parser.add_argument("--corpus", help="UTF-8 text file (default: minimodel's bundled corpus)")
    parser.add_argument("--steps", type=int, default=100, help="optimizer steps (default 100)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--out", default="out/hf-continued", help="where the result is saved")
    parser.add_argument("--train-output-bias", action="store_true",
                        help="masked LM: train cls.predictions.bias too (the result can then "
                             "no longer be imported back into minimodel)")
    args = parser.parse_args()
    if args.steps < 1 or args.batch_size < 1 or not (math.isfinite(args.lr) and args.lr > 0):
        parser.error("--steps and --batch-size must be >= 1 and --lr a positive number")
    if args.corpus:
        text = Path(args.corpus).read_text(encoding="utf-8")
    else:
        from minimodel.data import load_corpus
        text = load_corpus()
    report = continue_training(args.hf_dir, text, args.steps, args.out, args.batch_size, args.lr,
                               train_output_bias=args.train_output_bias)
    print(f"trained {args.steps} steps, mean loss {report['loss']:.4f}; saved in {report['out']}")
    if report["tied_before"]:
        print("tie kept: the output layer's weight is the input embedding (one tensor)"
              if report["tied_after"] else "WARNING: the tie was lost during training")


if __name__ == "__main__":
    main()
