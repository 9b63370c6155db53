"""Keep training a minimodel GPT with Hugging Face's Trainer, once NumPy on one CPU is not enough.

    minimodel train --out runs/gpt-tied                    # train here, on the CPU
    minimodel export runs/gpt-tied --format hf out/hf      # GPT-2 folder + tokenizer
    python examples/continue_training_hf.py out/hf --steps 200 --out out/hf-continued

The same script runs on many GPUs or machines without a change: launch it with
``accelerate launch examples/continue_training_hf.py ...`` (``accelerate config`` once), and
``Trainer`` spreads the batches over the devices. Here it runs on the CPU.

A tied model stays tied: transformers restores ``tie_word_embeddings`` on load, so
``lm_head.weight`` IS ``transformer.wte.weight`` (one tensor), the optimizer sees it once, and
both names change together. The script checks that after training and says so.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import torch
from transformers import (AutoTokenizer, GPT2LMHeadModel, Trainer, TrainingArguments,
                          default_data_collator)


class TextBlocks(torch.utils.data.Dataset):
    """Consecutive blocks of ``block_size + 1`` token ids; GPT2LMHeadModel shifts the labels
    itself, so input_ids and labels are the same block."""

    def __init__(self, ids: list[int], block_size: int) -> None:
        if len(ids) < block_size + 1:
            raise ValueError(f"the corpus gives {len(ids)} tokens; at least block_size + 1 = "
                             f"{block_size + 1} are needed")
        self.ids = torch.tensor(ids, dtype=torch.long)
        self.block = block_size

    def __len__(self) -> int:
        return (len(self.ids) - 1) // self.block

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        block = self.ids[i * self.block:(i + 1) * self.block]
        return {"input_ids": block, "labels": block.clone()}


def is_tied(model: GPT2LMHeadModel) -> bool:
    """One tensor for both roles: same object and same storage."""
    head, wte = model.lm_head.weight, model.transformer.wte.weight
    return head is wte or head.data_ptr() == wte.data_ptr()


def continue_training(hf_dir: str | Path, text: str, steps: int, out_dir: str | Path,
                      batch_size: int = 4, lr: float = 3e-4, seed: int = 0) -> dict:
    """Train the exported model for ``steps`` optimizer steps on ``text`` with ``Trainer``.

    Returns:
        ``{"loss", "tied_before", "tied_after", "wte_changed", "lm_head_changed", "out"}``.
    """
    model = GPT2LMHeadModel.from_pretrained(hf_dir)
    tokenizer = AutoTokenizer.from_pretrained(hf_dir)
    block = min(model.config.n_positions, 128)
    data = TextBlocks(tokenizer(text)["input_ids"], block)
    wte_before = model.transformer.wte.weight.detach().clone()
    head_before = model.lm_head.weight.detach().clone()
    tied_before = is_tied(model)
    args = TrainingArguments(
        output_dir=str(out_dir), max_steps=steps, per_device_train_batch_size=batch_size,
        learning_rate=lr, lr_scheduler_type="constant", logging_steps=1, save_strategy="no",
        report_to=[], use_cpu=not torch.cuda.is_available(), seed=seed,
        dataloader_num_workers=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=data,
                      data_collator=default_data_collator)
    result = trainer.train()
    trainer.save_model(str(out_dir))
    tokenizer.save_pretrained(str(out_dir))
    return {"loss": float(result.training_loss), "tied_before": tied_before,
            "tied_after": is_tied(model),
            "wte_changed": not torch.equal(wte_before, model.transformer.wte.weight.detach()),
            "lm_head_changed": not torch.equal(head_before, model.lm_head.weight.detach()),
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
    args = parser.parse_args()
    if args.steps < 1 or args.batch_size < 1 or not (math.isfinite(args.lr) and args.lr > 0):
        parser.error("--steps and --batch-size must be >= 1 and --lr a positive number")
    if args.corpus:
        text = Path(args.corpus).read_text(encoding="utf-8")
    else:
        from minimodel.data import load_corpus
        text = load_corpus()
    report = continue_training(args.hf_dir, text, args.steps, args.out, args.batch_size, args.lr)
    print(f"trained {args.steps} steps, mean loss {report['loss']:.4f}; saved in {report['out']}")
    if report["tied_before"]:
        print("tie kept: lm_head.weight is transformer.wte.weight" if report["tied_after"]
              else "WARNING: the tie was lost during training")


if __name__ == "__main__":
    main()
