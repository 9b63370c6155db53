"""``minimodel train``: train a GPT (tied by default), a masked LM or CBOW word vectors."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from minimodel._console import stdout_to_devnull
from minimodel.commands._exit import FAILED, INTERRUPTED, OK, guarded
from minimodel.commands._run_guards import run_guards
from minimodel.commands._train_options import (add_train_options, clamp_threads,
                                               config_from_args, explicit_options)
from minimodel.data import public_domain
from minimodel.lab.suggest import Suggest
from minimodel.messages import (DEFAULT_LANG, LANGS, Phrase, PhraseError, Prose, in_lang, phrase,
                                say)

ORDER = 10

DESCRIPTION = """\
Train a model on a text corpus (default: a tied GPT on the bundled Shakespeare plays: 1 min
06 s measured on an idle 2-core AMD EPYC (Zen 4), 2-3.5 min when other jobs keep the cores
busy; see docs/results.md).

DIR (--out, default runs/<model>-<tied|untied>) receives model.safetensors, tokenizer.json,
metrics.jsonl (one JSON object per evaluation), loss.png, summary.json and the training state.
Ctrl-C, `kill` (SIGTERM), `timeout` and closing the terminal (SIGHUP) save a checkpoint;
`minimodel train --resume --out DIR` continues it and ends with the same weights as an
uninterrupted run. Exit codes: 0 trained (or already finished), 1 diverged, 2 usage or user
error, 130 stopped before the end: interrupted, or the reader of the output went away
(`train --json | head -1`), so the run did not finish."""

EPILOG = """\
examples:
  minimodel train                                  # tied GPT, BPE-1024, 1-3.5 min on 2 cores
  minimodel train --untied --out runs/untied
  minimodel train --tokenizer byte --steps 500 --d-model 64
  minimodel train --model mlm --steps 300
  minimodel train --model cbow                     # + SimLex-999 / WordSim-353 evaluation

  # word vectors from 2.0 M words (public domain, minimodel.data.public_domain): install the
  # corpus once with npm, then 4 epochs with negative sampling
  {install}
  minimodel train --model cbow --corpus public-domain --negative 5 --batch-size 4096 \\
      --lr 5e-2 --steps 1760

  minimodel train --resume --out runs/gpt-tied     # after Ctrl-C
  minimodel train --force --out runs/gpt-tied      # start over; the old run -> previous/
  minimodel train --steps 50 --json | jq -c 'select(.event == "eval")'
  minimodel train --lang es                        # every line in Spanish (--json stays English)
""".format(install=public_domain.INSTALL)


def register(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train a GPT / masked LM / CBOW model",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_train_options(parser)
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="run directory (default runs/<model>-<tied|untied>)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted run in --out (default as above) with its "
                             "saved settings")
    parser.add_argument("--force", action="store_true",
                        help="start over in a DIR that already holds a run; its files are moved "
                             "to DIR/previous/ (previous-2/... if taken; never deleted)")
    parser.add_argument("--no-snapshots", dest="snapshots", action="store_false",
                        help="keep no snapshots of the token matrices in DIR/snapshots/ (by "
                             "default about 32, log-spaced, at most 64 MiB, for "
                             "`minimodel explore`)")
    parser.add_argument("--json", action="store_true",
                        help="machine-readable output: one JSON object per line (events "
                             "start, step, eval, message, summary); see "
                             "minimodel.training.report.JsonReporter (English whatever --lang "
                             "says)")
    parser.add_argument("--lang", choices=LANGS, default=DEFAULT_LANG,
                        help="language of the progress, the summary and the errors (default en)")
    parser.set_defaults(func=guarded(run))


def gap_words(val: float, baseline: float) -> Phrase:
    gap = baseline - val
    return (phrase("train.below_unigram", gap=Prose(gap)) if gap > 0
            else phrase("train.above_unigram", gap=Prose(-gap)))


def format_summary(s: dict, lang: str = DEFAULT_LANG) -> str:
    """The four closing lines of a run (figures from summary.json), in ``lang``."""
    from minimodel.training.report import format_perplexity

    if s.get("negative"):
        # The train loss is the negative-sampling objective; validation is always the full
        # softmax, which that objective does not calibrate, so no "not learned" verdict.
        comparison = phrase("train.comparison_negative", negative=s["negative"])
    else:
        comparison = phrase("train.comparison", gap=gap_words(s["val_loss"],
                                                              s["unigram_baseline"]))
    erank_head = (phrase("train.erank_head", erank=Prose(s["erank_head"])) if s.get("erank_head")
                  else "")
    lines = [phrase("train.final", train_loss=s["train_loss"], val_loss=s["val_loss"],
                    ppl=format_perplexity(s["val_ppl"])),
             phrase("train.baselines", unigram=Prose(s["unigram_baseline"]),
                    uniform=Prose(s["uniform_baseline"]), comparison=comparison),
             phrase("train.speed", parameters=s["parameters"],
                    tie=phrase("train.tied" if s["tied"] else "train.untied"),
                    tokens_per_s=s["tokens_per_s"], train_time=Prose(s["train_time_s"]),
                    elapsed=Prose(s["elapsed_s"])),
             phrase("train.erank", erank=Prose(s["erank_embedding"]),
                    most=min(s["vocab_size"], s["d_model"]), head=erank_head)]
    return "\n".join(line.in_lang(lang) for line in lines)


def saved_and_next(out: Path, model: str, lang: str = DEFAULT_LANG) -> str:
    """What the run folder holds (the files present) and what to do with it next, each
    command as the lab suggests it (``--lang es`` for a Spanish reader)."""
    suggest = Suggest(lang)
    kept = [name + ("/" if (out / name).is_dir() else "")
            for name in ("model.safetensors", "tokenizer.json", "metrics.jsonl", "loss.png",
                         "snapshots", "checkpoints") if (out / name).exists()]
    steps = ([(f'minimodel generate {out} --prompt "ROMEO:"', phrase("train.why_generate"))]
             if model == "gpt" else []) + [
        (suggest("explore", out, "--out", f"{out}/explorer.html"), phrase("train.why_explore")),
        (suggest("doctor", out), phrase("train.why_doctor")),
        (suggest("lab", "next"), phrase("train.why_lab_next"))]
    width = max(len(command) for command, _ in steps)
    return "\n".join([say("train.saved_in", lang, out=out, files=", ".join(kept)),
                      say("train.next", lang)]
                     + [f"  {command:<{width}}   # {why.in_lang(lang)}"
                        for command, why in steps])


def run(args: argparse.Namespace) -> int:
    from minimodel.training import (JsonReporter, check_options, default_out_dir, make_reporter,
                                    train)
    from minimodel.training.report import configure_run

    if args.resume and args.force:
        raise PhraseError(phrase("train.resume_and_force"))
    explicit = explicit_options(args)
    # a bad option (or nothing to resume): its one line and exit 2 before anything else is said
    check_options(config_from_args(args), args.out, args.resume, explicit, force=args.force)
    reporter = make_reporter(args.quiet, as_json=args.json, lang=args.lang)
    threads, note = clamp_threads(args.threads)
    try:
        if note:
            reporter.message(note)
        reporter.message(configure_run(threads))
        out = args.out or default_out_dir(config_from_args(args).resolved())
        with run_guards():
            result = train(config_from_args(args), args.out, resume=args.resume,
                           reporter=reporter, explicit=explicit, force=args.force,
                           snapshots=args.snapshots,
                           resume_command=Suggest(args.lang)("train", "--resume", "--out", out))
    except KeyboardInterrupt:  # outside the loop (tokenizer, final evaluation): no new save
        out = args.out or default_out_dir(config_from_args(args).resolved())
        print(say("train.interrupted_outside_loop", args.lang,
                  command=Suggest(args.lang)("train", "--resume", "--out", out)),
              file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:  # `train --json | head -1`: the reader left before the loop began
        stdout_to_devnull()
        print(say("cli.error", args.lang, message=say("train.reader_gone_early", args.lang)),
              file=sys.stderr)
        return INTERRUPTED
    except FloatingPointError as exc:  # diverged: the last good checkpoint is kept
        if isinstance(reporter, JsonReporter):
            reporter.emit("error", message=str(exc))
            return FAILED
        print(say("cli.error", args.lang, message=in_lang(exc, args.lang)), file=sys.stderr)
        return FAILED
    finally:
        reporter.close()   # idempotent: with --json, says what was held for the start event
    if result.interrupted:
        return INTERRUPTED
    if result.summary:
        if isinstance(reporter, JsonReporter):
            reporter.emit("summary", out_dir=str(result.out_dir), **result.summary)
        else:
            print(format_summary(result.summary, args.lang))
            print(saved_and_next(result.out_dir, result.config.model, args.lang))
        if not math.isfinite(result.summary["val_loss"]):
            return FAILED
    return OK
