"""``minimodel export`` and ``minimodel import-hf``: the bridge to Hugging Face transformers."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from minimodel.commands._exit import FAILED, OK, USAGE, guarded

ORDER = 40

EXPORT_EPILOG = """\
formats:
  hf            a Hugging Face folder: GPT2LMHeadModel (GPT) or MegatronBertForMaskedLM
                (masked LM, trained with the default --head-transform)
  word2vec      word2vec text file: "<V> <d>" then "word v1 ... vd" per line (CBOW models)
  word2vec-bin  word2vec binary file (float32), as the original C tool writes it (CBOW)
  projector     vectors.tsv + metadata.tsv for projector.tensorflow.org (any model)

examples:
  minimodel export runs/gpt-tied --format hf out/hf
  minimodel export runs/gpt-tied/model.safetensors --format hf out/hf --tokenizer tok.json
  minimodel export runs/gpt-tied --format hf out/hf --force --verify --json
      -> {"out", "files", "tied", "tokenizer", "verify": {"ok", "max_abs_logit_diff", ...}}
  minimodel export runs/mlm-tied --format hf out/mlm-hf --verify

  minimodel export runs/cbow-untied --format word2vec out/vectors.txt
  minimodel export runs/cbow-untied --format word2vec-bin out/vectors.bin --vectors output
  minimodel export runs/gpt-tied --format projector out/projector

then, in Python (offline):
  from gensim.models import KeyedVectors
  KeyedVectors.load_word2vec_format("out/vectors.bin", binary=True).most_similar("king")
  from transformers import GPT2LMHeadModel, AutoTokenizer
  model = GPT2LMHeadModel.from_pretrained("out/hf")
  tok = AutoTokenizer.from_pretrained("out/hf")
  from transformers import pipeline          # a masked LM
  pipeline("fill-mask", model="out/mlm-hf")("to be or not to [MASK]")
"""

IMPORT_EPILOG = """\
examples:
  minimodel import-hf out/hf runs/from-hf   # -> model.safetensors (+ tokenizer.json)
  minimodel import-hf ~/models/gpt2 runs/gpt2 --remap-vocab
  minimodel import-hf out/mlm-hf runs/mlm-from-hf # MegatronBertForMaskedLM -> MaskedLM
  minimodel import-hf out/hf imported.safetensors --json
      -> {"out", "checkpoint", "tied", "config", "tokenizer": path|null, "messages": [...]}
"""


def _emit(args: argparse.Namespace, payload: dict[str, Any], lines: list[str]) -> None:
    if args.json:
        print(json.dumps(payload, indent=2, default=str))
    else:
        print("\n".join(lines))


# ----------------------------------------------------------------------------- export
def _vectors_and_labels(model: Any, tokenizer: Any, which: str) -> tuple[Any, list[str]]:
    """The (V, d) matrix to export (input embedding, or the untied head's rows) and one label
    per row (the word, or the token as text)."""
    if which == "output":
        if model.tied:
            raise ValueError("--vectors output: this model is tied, its output vectors are its "
                             "input vectors; leave out --vectors")
        matrix = model.lm_head.weight.data
    else:
        matrix = model.get_input_embeddings().weight.data
    if tokenizer is None:
        raise ValueError("these formats label each vector with its word or token: the run "
                         "folder's tokenizer.json is missing; pass --tokenizer FILE")
    if hasattr(tokenizer, "itos"):  # a CBOW word vocabulary
        labels = list(tokenizer.itos)
    else:
        labels = [tokenizer.id_to_token_str(i) for i in range(tokenizer.vocab_size)]
    if len(labels) != matrix.shape[0]:
        raise ValueError(f"the tokenizer has {len(labels)} entries but the model has "
                         f"{matrix.shape[0]} embedding rows; pass the run's own --tokenizer")
    return matrix, labels


def _export_vectors(args: argparse.Namespace, model: Any, tok_path: Path | None) -> int:
    from minimodel.interop.projector import export_projector
    from minimodel.interop.word2vec import export_word2vec
    from minimodel.training import load_any_tokenizer

    tokenizer = load_any_tokenizer(tok_path) if tok_path else None
    matrix, labels = _vectors_and_labels(model, tokenizer, args.vectors)
    out = Path(args.out)
    if args.format == "projector":
        if out.exists() and not out.is_dir():
            raise ValueError(f"{out} is a file; the projector format writes a folder with "
                             "vectors.tsv and metadata.tsv")
        clash = [out / n for n in ("vectors.tsv", "metadata.tsv") if (out / n).exists()]
        if clash and not args.force:
            raise ValueError(f"{clash[0]} already exists; pass --force to replace it")
        files = [str(p) for p in export_projector(matrix, labels, out)]
    else:
        if out.is_dir():
            raise ValueError(f"{out} is a folder; give a file name such as {out / 'vectors.txt'}")
        if out.exists() and not args.force:
            raise ValueError(f"{out} already exists; pass --force to replace it")
        if args.format == "word2vec":  # labels must be single words: BPE tokens can hold spaces
            labels = [label.replace(" ", "▁") for label in labels]
        files = [str(export_word2vec(matrix, labels, out, binary=args.format == "word2vec-bin"))]
    payload = {"out": str(out), "files": files, "format": args.format, "vectors": args.vectors,
               "shape": list(matrix.shape)}
    lines = [f"wrote {', '.join(files)}: {matrix.shape[0]} {args.vectors} vectors of "
             f"dimension {matrix.shape[1]}"]
    if args.format == "projector":
        lines.append("load both files at https://projector.tensorflow.org (Load -> choose files)")
    else:
        binary = ", binary=True" if args.format == "word2vec-bin" else ""
        lines.append(f'load it: gensim.models.KeyedVectors.load_word2vec_format("{out}"{binary})')
    _emit(args, payload, lines)
    return OK


def cmd_export(args: argparse.Namespace) -> int:
    import minimodel as mm
    from minimodel.data import load_tokenizer
    from minimodel.interop import to_hf
    from minimodel.interop._files import resolve_checkpoint
    from minimodel.models import CBOW, GPT, MaskedLM

    weights, run_tokenizer = resolve_checkpoint(args.checkpoint)
    model = mm.load(weights)
    if args.format != "hf":
        tok_path = Path(args.tokenizer) if args.tokenizer else run_tokenizer
        if args.format.startswith("word2vec") and not isinstance(model, CBOW):
            raise ValueError(f"{weights} holds a {type(model).__name__}; the word2vec formats "
                             "are for CBOW word vectors (use --format projector to look at "
                             "any model's embeddings)")
        return _export_vectors(args, model, tok_path)
    if args.vectors != "input":
        raise ValueError("--vectors applies to the word2vec and projector formats")
    if not isinstance(model, (GPT, MaskedLM)):
        raise ValueError(f"{weights} holds a {type(model).__name__}; the Hugging Face export "
                         "handles GPT (GPT2LMHeadModel) and masked LMs (MegatronBertForMaskedLM)"
                         "; CBOW vectors go out with --format word2vec or word2vec-bin")
    tok_path = None if args.no_tokenizer else (Path(args.tokenizer) if args.tokenizer
                                               else run_tokenizer)
    tokenizer = load_tokenizer(tok_path) if tok_path else None
    out = to_hf(model, args.out, tokenizer=tokenizer, overwrite=args.force)
    tied = model.lm_head.weight is model.token_emb.weight
    files = sorted(p.name for p in out.iterdir())
    payload: dict[str, Any] = {"out": str(out), "files": files, "tied": tied,
                               "tokenizer": str(tok_path) if tok_path else None}
    c = model.config
    mlm = isinstance(model, MaskedLM)
    hf_class = "MegatronBertForMaskedLM" if mlm else "GPT2LMHeadModel"
    head, emb = (("cls.predictions.decoder", "bert.embeddings.word_embeddings") if mlm
                 else ("lm_head", "transformer.wte"))
    lines = [f"wrote {out}/: {', '.join(files)}",
             f"model: {hf_class} with vocab_size={c.vocab_size}, positions={c.block_size}, "
             f"layers={c.n_layer}, heads={c.n_head}, hidden={c.d_model}",
             f"head: tied - {head} reuses {emb}.weight (stored once, tie_word_embeddings=true)"
             if tied else f"head: untied - {head}.weight stored separately "
             "(tie_word_embeddings=false)"]
    lines.append(f"tokenizer: {tok_path} -> tokenizer.json, vocab.json, merges.txt" if tok_path
                 else "tokenizer: none (pass --tokenizer FILE to include one)")
    status = OK
    if args.verify:
        from minimodel.interop.verify import verify_hf_export

        try:
            report = verify_hf_export(model, out, tokenizer)
        except ImportError as exc:  # the export is written; only the check cannot run here
            payload["verify"] = {"ok": None, "not_run": str(exc)}
            lines.append(f"the export worked; the check with transformers could not run: {exc}")
            _emit(args, payload, lines)
            return USAGE
        payload["verify"] = report
        lines.append(f"verify with transformers: {'OK' if report['ok'] else 'FAILED'} - max "
                     f"|logit diff| {report['max_abs_logit_diff']:.2e}"
                     + (" at masked positions" if mlm else "") + ", tie "
                     f"{'shared' if report['hf_head_shares_wte'] else 'separate'}, "
                     + ("top-1 at [MASK] " if mlm else "greedy ")
                     + f"{'equal' if report['greedy_equal'] else 'DIFFERENT'}"
                     + ("" if report["tokenizer_equal"] is None else
                        f", tokenizer ids {'equal' if report['tokenizer_equal'] else 'DIFFERENT'}"))
        status = OK if report["ok"] else FAILED
    else:
        lines.append(f'load it: {hf_class}.from_pretrained("{out}") (add --verify to '
                     "compare logits with transformers now)")
    _emit(args, payload, lines)
    return status


# ----------------------------------------------------------------------------- import
def _import_tokenizer(src: Path, model: Any, remap: bool, messages: list[str]) -> Any:
    """The converted tokenizer to save next to the model, or None (reason in ``messages``)."""
    from minimodel.interop import remap_vocab, tokenizer_from_hf

    try:
        result = tokenizer_from_hf(src)
    except FileNotFoundError:
        messages.append(f"tokenizer: skipped, {src} has no tokenizer files")
        return None
    except ValueError as exc:
        messages.append(f"tokenizer: skipped, {exc}")
        return None
    vocab = model.config.vocab_size
    if result.tokenizer.vocab_size != vocab:
        messages.append(f"tokenizer: skipped, it has {result.tokenizer.vocab_size} tokens but the "
                        f"model's vocab_size is {vocab} (padded vocabulary?)")
        return None
    if result.identity:
        return result.tokenizer
    if not remap:
        messages.append("tokenizer: skipped, its ids follow a different order than minimodel's "
                        "(bytes 0-255 by value, specials, then merges), e.g. GPT-2's own "
                        "vocabulary; rerun with --remap-vocab to reorder the embedding rows to "
                        "minimodel's ids (same model, logits permuted accordingly)")
        return None
    remap_vocab(model, result.hf_ids)
    messages.append("tokenizer: ids converted to minimodel's layout; embedding"
                    + ("" if model.config.tie_embeddings else " and head")
                    + " rows reordered to match (--remap-vocab)")
    return result.tokenizer


def cmd_import_hf(args: argparse.Namespace) -> int:
    from minimodel._fileio import atomic_write_files
    from minimodel.interop import load_hf
    from minimodel.io import serialize

    src, out = Path(args.path), Path(args.out)
    model, messages = load_hf(src)
    if out.is_file() and out.suffix != ".safetensors":
        raise ValueError(f"{out} is an existing file; OUT must be a folder or a .safetensors "
                         "path")
    if out.suffix == ".safetensors":
        checkpoint = out
    else:
        checkpoint = out / "model.safetensors"
    tok_path = checkpoint.parent / "tokenizer.json"  # where `minimodel generate` looks
    if checkpoint.exists() and not args.force:
        raise ValueError(f"{checkpoint} already exists; choose another OUT or pass --force")
    tokenizer = _import_tokenizer(src, model, args.remap_vocab, messages)
    if tokenizer is not None and tok_path.exists() and not (
            args.force or checkpoint.parent == out):
        messages.append(f"tokenizer: not written, {tok_path} already exists (another model's?); "
                        "give a folder OUT or pass --force")
        tokenizer = None
    files = {checkpoint: serialize(model)}
    if tokenizer is not None:
        files[tok_path] = tokenizer.to_json().encode("utf-8")
    elif tok_path.exists():
        messages.append(f"note: {tok_path} is left as it was and may not belong to this model")
    # Model and tokenizer as one unit: both are fully written before either replaces anything.
    atomic_write_files(files)
    tied = model.lm_head.weight is model.token_emb.weight
    payload = {"out": str(out), "checkpoint": str(checkpoint), "tied": tied,
               "config": model.config.to_dict(),
               "tokenizer": str(tok_path) if tokenizer is not None else None,
               "messages": messages}
    c = model.config
    lines = [f"imported {src}: {type(model).__name__} vocab_size={c.vocab_size}, block_size={c.block_size}, "
             f"n_layer={c.n_layer}, n_head={c.n_head}, d_model={c.d_model}, "
             f"{'tied (one Parameter)' if tied else 'untied'} head",
             f"wrote {checkpoint}" + (f" and {tok_path}" if tokenizer is not None else ""),
             *messages]
    _emit(args, payload, lines)
    return OK


def register(subparsers: Any) -> None:
    """Add ``minimodel export`` and ``minimodel import-hf``."""
    p = subparsers.add_parser(
        "export", help="export a model: Hugging Face folder, word2vec, projector",
        description="Write a minimodel GPT or masked LM (a .safetensors checkpoint or a run "
                    "folder with model.safetensors + tokenizer.json) as a Hugging Face folder: "
                    "config.json, model.safetensors and the tokenizer files. "
                    "transformers' GPT2LMHeadModel / MegatronBertForMaskedLM (or the Auto "
                    "classes) load it with the same logits; a tied model stays tied "
                    "(tie_word_embeddings, matrix stored once). "
                    "CBOW word vectors go to the word2vec text/binary formats (gensim, the C "
                    "tool) and any model's embedding to the Embedding Projector's TSV pair.",
        epilog=EXPORT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("checkpoint", metavar="CHECKPOINT", help="model .safetensors or run folder")
    p.add_argument("out", metavar="OUT", help="output folder")
    p.add_argument("--format", choices=["hf", "word2vec", "word2vec-bin", "projector"],
                   default="hf", help="output format (see below; default: hf)")
    p.add_argument("--vectors", choices=["input", "output"], default="input",
                   help="word2vec/projector: the input embedding (default) or the untied "
                        "output matrix")
    p.add_argument("--tokenizer", metavar="FILE", default=None,
                   help="minimodel tokenizer JSON (default: tokenizer.json of the run folder)")
    p.add_argument("--no-tokenizer", action="store_true", help="export the model only")
    p.add_argument("--force", action="store_true",
                   help="replace OUT even if it holds files an export does not write")
    p.add_argument("--verify", action="store_true",
                   help="load OUT with transformers and compare logits, tie and greedy output "
                        "(needs torch and transformers); exit 1 if they differ")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=guarded(cmd_export))

    p = subparsers.add_parser(
        "import-hf", help="import a local Hugging Face GPT-2 or MegatronBERT masked-LM folder",
        description="Read a local GPT-2 or MegatronBertForMaskedLM folder (config.json + "
                    "model.safetensors "
                    "or pytorch_model.bin, loaded without running code) and write a minimodel "
                    "checkpoint with the same logits. The tie is restored as one Parameter. "
                    "OUT is a folder or a .safetensors file; tokenizer.json is written beside "
                    "the checkpoint when the tokenizer converts. Unsupported settings "
                    "are refused with the reason.",
        epilog=IMPORT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("path", metavar="PATH", help="Hugging Face model folder")
    p.add_argument("out", metavar="OUT", help="output folder or .safetensors file")
    p.add_argument("--remap-vocab", action="store_true",
                   help="when the tokenizer's ids are in another order (e.g. GPT-2's own), "
                        "reorder embedding rows to minimodel's id layout and save the tokenizer")
    p.add_argument("--force", action="store_true", help="overwrite an existing checkpoint")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=guarded(cmd_import_hf))
