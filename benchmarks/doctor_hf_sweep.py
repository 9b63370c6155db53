"""The tie doctor against every language-model architecture the installed transformers ships.

    python benchmarks/doctor_hf_sweep.py                      # the whole sweep
    python benchmarks/doctor_hf_sweep.py --only gpt2 llava    # some model types
    python benchmarks/doctor_hf_sweep.py --timeout 120 --json sweep.json

Nothing here is a list we chose: the architectures are every entry of transformers' causal-LM,
masked-LM, seq2seq-LM and image-text-to-text mappings (and speech seq2seq, for Whisper). Each is built tiny from its default
config, shrunk generically (every hidden width, layer count, head count, expert count and
vocabulary size found anywhere in the config, nested configs included; when the config then
fails its own validation, the layer counts are kept, since per-layer lists must match them), saved with
``save_pretrained`` tied and untied (where the architecture allows it), and, from the untied
save, a config that claims a tie the stored head contradicts. For each folder, transformers' own
ground truth (after ``from_pretrained``: is the output head the input embedding *in memory*,
did loading leave the embedding, or an untied head, missing) is compared with the doctor's
verdict (tied / untied / no head, and whether it reports a problem). It prints "A of N agree", each disagreement and
each architecture skipped with the reason (one that cannot be built tiny offline, or exceeds
the per-architecture timeout).

The doctor's first run asks transformers in a child process that hides the packages building a
model does not use (``architecture.UNUSED_FOR_BUILDING``); the sweep asks such a process about
every folder too and prints how many of its answers equal the answers of this process, where
those packages are importable ("child: A of N answers identical").
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402 - after the offline switches above
import transformers  # noqa: E402
from transformers import CONFIG_MAPPING  # noqa: E402
from transformers.models.auto import modeling_auto  # noqa: E402

from safetensors import safe_open  # noqa: E402

from minimodel.doctor import architecture, diagnose  # noqa: E402

MAPPINGS = ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
            "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
            "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
            "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES")  # Whisper's proj_out head
# Generic shrinking: config entries by meaning, set wherever they appear.
WIDTH = ("hidden_size", "d_model", "n_embd", "embed_dim", "dim", "word_embed_proj_dim",
         "projection_dim", "embedding_size", "text_hidden_size", "vision_hidden_size")
FFN = ("intermediate_size", "d_ff", "ffn_dim", "encoder_ffn_dim", "decoder_ffn_dim", "n_inner",
       "moe_intermediate_size", "shared_expert_intermediate_size", "hidden_dim")
HEADS = ("num_attention_heads", "n_head", "num_heads", "encoder_attention_heads",
         "decoder_attention_heads", "n_heads", "num_key_value_heads")
LAYERS = ("num_hidden_layers", "n_layer", "num_layers", "encoder_layers", "decoder_layers",
          "num_decoder_layers", "n_layers")
DERIVED = ("layer_types", "first_k_dense_replace", "mlp_only_layers")  # rebuilt by the config
EXPERTS = ("num_experts", "num_local_experts", "n_routed_experts")
TINY = {**{k: 32 for k in WIDTH}, **{k: 64 for k in FFN}, **{k: 2 for k in HEADS}, **{k: 2 for k in EXPERTS}, "head_dim": 16, "d_kv": 16,
        "num_experts_per_tok": 1, "vocab_size": 96, "decoder_vocab_size": 96}
MAX_PARAMETERS = 20_000_000  # a default config that stays larger is not "tiny": skipped
V = 96


@dataclass
class Case:
    model_type: str
    class_name: str
    variant: str               # "tied", "untied" or "claims-tied-head-differs"
    truth: str                 # "tied", "untied", "no head" (after from_pretrained)
    truth_healthy: bool        # loading did not leave the head missing or contradict the config
    doctor: str                # "tied", "untied", "no head", or a problem key
    doctor_healthy: bool
    source: str
    agree: bool
    keys: list[str] = field(default_factory=list)
    folder: str = ""


def architectures(only: list[str] | None = None) -> list[tuple[str, str]]:
    """(model_type, class name) of every language-model head the installed transformers maps."""
    seen, out = set(), []
    for mapping in MAPPINGS:
        for model_type, name in getattr(modeling_auto, mapping).items():
            names = name if isinstance(name, (list, tuple)) else [name]
            for n in names:
                if (model_type, n) not in seen and (not only or model_type in only):
                    seen.add((model_type, n))
                    out.append((model_type, n))
    return sorted(out)


def shrink(d: dict[str, Any], layers: bool) -> dict[str, Any]:
    """A config dict with every size entry made tiny (nested dicts too); with ``layers`` one
    layer each (and the per-layer lists dropped, for the config to rebuild them)."""
    out = {}
    for key, value in d.items():
        if layers and key in DERIVED:
            continue
        if isinstance(value, dict):
            out[key] = shrink(value, layers)
        elif layers and key in LAYERS and isinstance(value, int) and not isinstance(value, bool):
            out[key] = min(value, 1)
        elif key in TINY and isinstance(value, int) and not isinstance(value, bool):
            out[key] = min(value, TINY[key])
        elif isinstance(key, str) and key.endswith(("_token_id", "_token_index")) and isinstance(value, int) \
                and not isinstance(value, bool) and value >= V:
            out[key] = V - 1
        else:
            out[key] = value
    return out


def tiny_config(model_type: str, tied: bool, layers: bool = True) -> Any:
    config_class = CONFIG_MAPPING[model_type]
    d = shrink(config_class().to_dict(), layers)
    d["tie_word_embeddings"] = tied
    for key in ("text_config", "decoder", "generator", "text_encoder"):
        if isinstance(d.get(key), dict):
            d[key]["tie_word_embeddings"] = tied
    return config_class.from_dict(d)


def in_memory(model: Any) -> str:
    """What transformers built: the head is an embedding of the model ("tied": the very same
    parameter as some nn.Embedding's weight), another matrix, or there is no head."""
    try:
        out = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        out = None
    if out is None or getattr(out, "weight", None) is None:
        return "no head"
    embeddings = [m.weight for m in model.modules() if isinstance(m, torch.nn.Embedding)]
    embeddings.append(model.get_input_embeddings().weight)
    return "tied" if any(out.weight is w for w in embeddings) else "untied"


VERDICTS = {"tie.tied_stored_once": "tied", "tie.tied_shared_storage": "tied",
            "tie.stored_twice": "tied", "tie.untied_ok": "untied",
            "tie.no_claim_untied": "untied", "tie.untied_identical": "untied",
            "tie.no_head": "no head"}


def doctor_verdict(folder: Path) -> tuple[str, bool, str, list[str]]:
    report = diagnose(folder)
    tie = [f for f in report.findings if f.check == "tie"]
    problems = [f.key for f in report.findings if f.status == "problem"]
    verdict = next((VERDICTS[f.key] for f in tie if f.key in VERDICTS), None)
    if verdict is None:
        verdict = problems[0] if problems else ",".join(f.key for f in tie)
    return verdict, report.healthy, report.subject.roles.source, \
        [f"{f.status}:{f.key}" for f in report.findings if f.status not in ("ok", "skipped")]


def load_truth(cls: Any, folder: Path) -> tuple[str, bool]:
    """(what transformers built, whether it read both matrices from the file): loading is not
    healthy when every name of the embedding, or of an untied head, is among the keys
    from_pretrained reports missing (filled with random values)."""
    model, info = cls.from_pretrained(folder, output_loading_info=True)
    state = in_memory(model)
    missing = set(info.get("missing_keys", []))
    matrices = [_input_weight(model)] + \
        ([model.get_output_embeddings().weight] if state == "untied" else [])
    unread = any(all(n in missing for n, p in model.named_parameters(remove_duplicate=False)
                     if p is m) for m in matrices if m is not None)
    return state, not unread


def _input_weight(model: Any) -> Any:
    try:
        return model.get_input_embeddings().weight
    except (AttributeError, NotImplementedError):
        return None


def claim_tied(folder: Path) -> None:
    """Edit config.json so that every tie flag says true (the head stays stored, different)."""
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["tie_word_embeddings"] = True
    for key in ("text_config", "decoder", "generator", "text_encoder"):
        if isinstance(config.get(key), dict):
            config[key]["tie_word_embeddings"] = True
    path.write_text(json.dumps(config), encoding="utf-8")


def sweep_one(model_type: str, class_name: str, work: Path) -> list[Case]:
    """Every variant of one architecture; raises to be skipped."""
    cls = getattr(transformers, class_name)
    cases = []
    ties_when_asked = False  # does this class tie at all when the flag says so?
    for tied in (True, False):
        torch.manual_seed(0)
        try:
            config = tiny_config(model_type, tied)
            with torch.device("meta"):
                size = sum(p.numel() for p in cls(config).parameters())
        except Exception:  # noqa: BLE001 - per-layer settings that must match: keep the layers
            config = tiny_config(model_type, tied, layers=False)
            with torch.device("meta"):
                size = sum(p.numel() for p in cls(config).parameters())
        if size > MAX_PARAMETERS:
            raise ValueError(f"{size / 1e6:.0f} M parameters after shrinking")
        model = cls(config)
        built = in_memory(model)
        ties_when_asked = ties_when_asked or (tied and built == "tied")
        if not tied and built == "tied":
            continue  # the architecture always ties (T5 in transformers 5): no untied variant
        folder = work / f"{model_type}-{class_name}-{'tied' if tied else 'untied'}"
        model.save_pretrained(folder)
        variants = [("tied" if tied else "untied", folder)]
        if not tied and built == "untied":
            claimed = folder.with_name(folder.name + "-claims-tied")
            model.save_pretrained(claimed)
            claim_tied(claimed)
            variants.append(("claims-tied-head-differs", claimed))
        for variant, path in variants:
            truth, truth_ok = load_truth(cls, path)
            if variant == "claims-tied-head-differs" and ties_when_asked:
                truth_ok = False  # the config describes a tie the file contradicts
            verdict, healthy, source, keys = doctor_verdict(path)
            agree = healthy == truth_ok and (verdict == truth or (not truth_ok and not healthy))
            cases.append(Case(model_type, class_name, variant, truth, truth_ok, verdict,
                              healthy, source, agree, keys, str(path)))
    return cases


# The doctor's child process, with the packages it hides hidden, answering about folders: a
# job per stdin line ({"config", "folder", "keys"}), an answer per stdout line.
HIDDEN_CHILD = """
import json, runpy, sys
arch = runpy.run_path(sys.argv[1], run_name="sweep_child")
arch["hide_unused_packages"]()
for line in sys.stdin:
    job = json.loads(line)
    found = arch["ask_transformers"](job["config"], arch["Path"](job["folder"]),
                                     lambda: job["keys"])
    print(json.dumps(None if found is None else [found.to_dict(), found.keys]), flush=True)
"""


def asked(folder: Path) -> dict[str, Any]:
    """The question the doctor asks transformers about ``folder``: its config and stored keys."""
    keys: list[str] = []
    for file in sorted(folder.glob("*.safetensors")):
        with safe_open(str(file), framework="numpy") as f:
            keys.extend(f.keys())
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return {"config": config, "folder": str(folder), "keys": sorted(keys)}


def hidden_child_differs(folders: list[Path]) -> list[str]:
    """The folders whose answer from a child hiding ``UNUSED_FOR_BUILDING`` is not the answer
    of this process (which has them), or for which the child gave none."""
    jobs = [asked(folder) for folder in folders]
    ours = []
    for job in jobs:
        found = architecture.ask_transformers(job["config"], Path(job["folder"]),
                                              lambda job=job: job["keys"])
        ours.append(None if found is None else [found.to_dict(), found.keys])
    child = subprocess.run([sys.executable, "-c", HIDDEN_CHILD, architecture.__file__],
                           input="".join(json.dumps(j) + "\n" for j in jobs), text=True,
                           capture_output=True, check=False)
    theirs = [json.loads(line) for line in child.stdout.splitlines()]
    theirs += [["no answer", child.stderr.strip()[-300:]]] * (len(jobs) - len(theirs))
    # JSON turns the tuples of this process's answers into lists: compare both as JSON
    return [str(f) for f, a, b in zip(folders, ours, theirs)
            if json.loads(json.dumps(a)) != b]


class Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Timeout()


def run(only: list[str] | None, timeout: int,
        log: Any = None) -> tuple[list[Case], dict[str, str], list[str]]:
    """Every case, every skip (key -> why), and the folders the hidden-package child answers
    differently about (:func:`hidden_child_differs`)."""
    logging.getLogger("transformers").setLevel(logging.ERROR)
    transformers.utils.logging.disable_progress_bar()
    warnings.simplefilter("ignore")
    torch.set_num_threads(1)
    cases: list[Case] = []
    skips: dict[str, str] = {}
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # the doctor's cache: not the user's
        for model_type, class_name in architectures(only):
            key = f"{model_type}/{class_name}"
            start = time.perf_counter()
            signal.alarm(timeout)
            try:
                found = sweep_one(model_type, class_name, Path(tmp))
            except Timeout:
                skips[key] = f"over the {timeout} s timeout"
                found = []
            except Exception as exc:  # noqa: BLE001 - any failure to build tiny is a skip
                skips[key] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
                found = []
            finally:
                signal.alarm(0)
            cases.extend(found)
            if log is not None:
                status = "skip" if key in skips else \
                    ("ok" if all(c.agree for c in found) else "DISAGREE")
                print(f"{key:70s} {status:8s} {time.perf_counter() - start:5.1f} s", file=log,
                      flush=True)
        differs = hidden_child_differs([Path(c.folder) for c in cases]) if cases else []
    return cases, skips, differs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*", help="model types to sweep (default: all)")
    parser.add_argument("--timeout", type=int, default=180, help="seconds per architecture")
    parser.add_argument("--json", type=Path, help="write every case and skip here")
    args = parser.parse_args(argv)
    cases, skips, differs = run(args.only, args.timeout, log=sys.stderr)
    agree = sum(c.agree for c in cases)
    archs = {(c.model_type, c.class_name) for c in cases}
    archs_agree = {a for a in archs if all(c.agree for c in cases if (c.model_type, c.class_name) == a)}
    print(f"transformers {transformers.__version__}, torch {torch.__version__}")
    print(f"{agree} of {len(cases)} agree (folders); {len(archs_agree)} of {len(archs)} "
          f"architectures agree on every variant; {len(skips)} skipped")
    print(f"child hiding {', '.join(architecture.UNUSED_FOR_BUILDING)}: "
          f"{len(cases) - len(differs)} of {len(cases)} answers identical")
    for folder in differs:
        print(f"  child answers differently: {Path(folder).name}")
    for c in cases:
        if not c.agree:
            print(f"  disagree: {c.model_type}/{c.class_name} {c.variant}: transformers "
                  f"{c.truth} (healthy {c.truth_healthy}), doctor {c.doctor} (healthy "
                  f"{c.doctor_healthy}, {c.source}) {c.keys}")
    print("skipped:")
    for key, why in sorted(skips.items()):
        print(f"  {key}: {why}")
    if args.json:
        args.json.write_text(json.dumps({"cases": [asdict(c) for c in cases], "skips": skips,
                                         "child_differs": differs}, indent=1), encoding="utf-8")
    return 0 if agree == len(cases) and not differs else 1


if __name__ == "__main__":
    sys.exit(main())
