"""`minimodel export` and `minimodel import-hf`, run through the real entry point."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import minimodel as mm  # noqa: E402
from minimodel.autograd import no_grad  # noqa: E402
from minimodel.cli import main  # noqa: E402
from minimodel.data import load_tokenizer  # noqa: E402

LOGIT_TOL = 1e-4


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def run_dir(tmp_path, make_gpt, small_bpe):
    """What `minimodel train --out DIR` leaves: model.safetensors + tokenizer.json."""
    folder = tmp_path / "runs" / "gpt-tied"
    model = make_gpt(small_bpe.vocab_size, 32, 2, 2, 32, tied=True)
    mm.save(model, folder / "model.safetensors")
    small_bpe.save(folder / "tokenizer.json")
    return folder


def test_export_run_folder_then_load_with_transformers(tmp_path, capsys, run_dir, small_bpe):
    out = tmp_path / "out" / "hf"
    code, stdout, _ = _run(capsys, "export", str(run_dir), "--format", "hf", str(out), "--json")
    assert code == 0
    summary = json.loads(stdout)
    assert summary["tied"] is True and "tokenizer.json" in summary["files"]
    hf = transformers.GPT2LMHeadModel.from_pretrained(str(out), local_files_only=True).eval()
    tok = transformers.AutoTokenizer.from_pretrained(str(out), local_files_only=True)
    assert hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr()
    text = "ROMEO: Is the day so young?<|endoftext|>"
    ids = tok(text, return_tensors="pt")["input_ids"]
    assert ids[0].tolist() == small_bpe.encode(text)
    model = mm.load(run_dir / "model.safetensors").eval()
    with no_grad():
        ours = model(ids.numpy())[0].data
    with torch.no_grad():
        np.testing.assert_allclose(hf(ids).logits.numpy(), ours, atol=LOGIT_TOL, rtol=0)


def test_export_verify_reports_ok(tmp_path, capsys, run_dir):
    code, stdout, _ = _run(capsys, "export", str(run_dir), "--format", "hf",
                           str(tmp_path / "hf"), "--verify", "--json")
    report = json.loads(stdout)["verify"]
    assert code == 0 and report["ok"] and report["tokenizer_equal"]
    assert report["max_abs_logit_diff"] < LOGIT_TOL


def test_export_checkpoint_file_with_or_without_tokenizer(tmp_path, capsys, run_dir):
    ckpt = run_dir / "model.safetensors"
    code, stdout, _ = _run(capsys, "export", str(ckpt), "--format", "hf", str(tmp_path / "a"))
    # Like `minimodel generate`, a checkpoint file's tokenizer is the tokenizer.json beside it.
    assert code == 0 and "tokenizer.json -> " in stdout
    assert (tmp_path / "a" / "tokenizer.json").exists()
    lone = tmp_path / "lone" / "model.safetensors"
    lone.parent.mkdir()
    lone.write_bytes(ckpt.read_bytes())
    code, stdout, _ = _run(capsys, "export", str(lone), "--format", "hf", str(tmp_path / "b"))
    assert code == 0 and "tokenizer: none" in stdout
    assert not (tmp_path / "b" / "tokenizer.json").exists()
    code, _, _ = _run(capsys, "export", str(lone), "--format", "hf", str(tmp_path / "b"),
                      "--tokenizer", str(run_dir / "tokenizer.json"))
    assert code == 0 and (tmp_path / "b" / "tokenizer.json").exists()
    code, _, _ = _run(capsys, "export", str(run_dir), "--format", "hf", str(tmp_path / "c"),
                      "--no-tokenizer")
    assert code == 0 and not (tmp_path / "c" / "vocab.json").exists()


def test_export_errors_are_one_line(tmp_path, capsys, run_dir):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "data.csv").write_text("1,2")
    code, _, err = _run(capsys, "export", str(run_dir), "--format", "hf", str(tmp_path / "taken"))
    assert code == 2 and err.startswith("error: ") and "--force" in err
    assert "use --force (overwrite=True in Python) to replace it" in err and "CLI:" not in err
    # A file where a folder of OUT should be is named as such, not "it already exists".
    (tmp_path / "vectors.txt").write_text("x")
    code, _, err = _run(capsys, "export", str(run_dir), str(tmp_path / "vectors.txt" / "sub"))
    assert code == 2 and err == (f"error: {tmp_path / 'vectors.txt'} is a file, not a folder, "
                                 f"so {tmp_path / 'vectors.txt' / 'sub'} cannot be written "
                                 "there\n")
    code, _, _ = _run(capsys, "export", str(run_dir), "--format", "hf", str(tmp_path / "taken"),
                      "--force")
    assert code == 0
    code, _, err = _run(capsys, "export", str(tmp_path / "nope"), "--format", "hf",
                        str(tmp_path / "x"))
    assert code == 2 and "nope: no such file or directory" in err
    from minimodel.models import MaskedLM, MLMConfig

    mm.save(MaskedLM(MLMConfig(50, 8, 1, 2, 16)), tmp_path / "mlm.safetensors")
    code, _, err = _run(capsys, "export", str(tmp_path / "mlm.safetensors"), "--format", "hf",
                        str(tmp_path / "y"))
    assert code == 2 and "needs head_transform=True" in err and "\n" not in err.strip()


def test_import_hf_round_trip_keeps_tie_and_tokenizer(tmp_path, capsys, run_dir, small_bpe):
    _run(capsys, "export", str(run_dir), "--format", "hf", str(tmp_path / "hf"))
    code, stdout, _ = _run(capsys, "import-hf", str(tmp_path / "hf"), str(tmp_path / "back"),
                           "--json")
    summary = json.loads(stdout)
    assert code == 0 and summary["tied"] and summary["tokenizer"]
    back = mm.load(tmp_path / "back" / "model.safetensors")
    original = mm.load(run_dir / "model.safetensors")
    assert back.lm_head.weight is back.token_emb.weight
    for key, value in original.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[key], value)
    assert load_tokenizer(tmp_path / "back" / "tokenizer.json") == small_bpe
    # A .safetensors OUT gets its tokenizer beside it, where `minimodel generate` looks,
    # but never replaces another model's tokenizer.json without --force.
    code, stdout, _ = _run(capsys, "import-hf", str(tmp_path / "hf"),
                           str(tmp_path / "back" / "copy.safetensors"))
    assert code == 0 and "tokenizer: not written" in stdout
    code, _, _ = _run(capsys, "import-hf", str(tmp_path / "hf"),
                      str(tmp_path / "solo" / "m.safetensors"))
    assert code == 0 and (tmp_path / "solo" / "tokenizer.json").is_file()


def test_import_hf_from_save_pretrained(tmp_path, capsys, make_hf_gpt2):
    hf = make_hf_gpt2(50, 16, 2, 2, 16, tied=False)
    hf.save_pretrained(str(tmp_path / "hf"))
    ckpt = str(tmp_path / "m.safetensors")
    code, stdout, _ = _run(capsys, "import-hf", str(tmp_path / "hf"), ckpt)
    assert code == 0 and "untied" in stdout and "tokenizer: skipped" in stdout
    assert not (tmp_path / "tokenizer.json").exists()
    model = mm.load(tmp_path / "m.safetensors").eval()
    ids = np.random.default_rng(0).integers(0, 50, size=(2, 16))
    with no_grad():
        ours = model(ids)[0].data
    with torch.no_grad():
        np.testing.assert_allclose(hf(torch.from_numpy(ids)).logits.numpy(), ours,
                                   atol=LOGIT_TOL, rtol=0)
    code, _, err = _run(capsys, "import-hf", str(tmp_path / "hf"), ckpt)
    assert code == 2 and "already exists" in err


def test_import_hf_refusal_exits_2(tmp_path, capsys, make_hf_gpt2):
    make_hf_gpt2(50, 8, 1, 2, 16, activation_function="relu").save_pretrained(str(tmp_path))
    code, _, err = _run(capsys, "import-hf", str(tmp_path), str(tmp_path / "out"))
    assert code == 2 and "activation_function='relu'" in err


def test_import_hf_config_of_the_wrong_type_is_one_line(tmp_path, capsys, run_dir):
    _run(capsys, "export", str(run_dir), "--format", "hf", str(tmp_path / "hf"))
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    config["n_embd"] = "abc"
    (tmp_path / "hf" / "config.json").write_text(json.dumps(config))
    code, _, err = _run(capsys, "import-hf", str(tmp_path / "hf"), str(tmp_path / "out"))
    assert code == 2
    assert err == (f"error: cannot import {tmp_path / 'hf' / 'config.json'}: n_embd must be a "
                   "positive integer, got 'abc'\n")
    assert not (tmp_path / "out").exists()


def test_import_hf_remaps_a_gpt2_ordered_vocabulary(tmp_path, capsys, make_hf_gpt2, small_bpe):
    """GPT-2's own layout (bytes in printable order, specials last) needs --remap-vocab."""
    from minimodel.data._pretokenize import bytes_to_unicode

    src = tmp_path / "gpt2-like"
    hf = make_hf_gpt2(small_bpe.vocab_size, 32, 1, 2, 16, tied=True)
    hf.save_pretrained(str(src))
    vocab = {ch: i for i, ch in enumerate(bytes_to_unicode().values())}
    for line in small_bpe.to_gpt2_merges():
        vocab.setdefault(line.replace(" ", ""), len(vocab))
    for name in small_bpe.special_tokens:
        vocab[name] = len(vocab)
    (src / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (src / "merges.txt").write_text("\n".join(small_bpe.to_gpt2_merges()) + "\n",
                                    encoding="utf-8")
    (src / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "GPT2Tokenizer", "eos_token": "<|endoftext|>",
        "bos_token": "<|endoftext|>", "unk_token": None, "pad_token": "[PAD]",
        "mask_token": "[MASK]"}))

    code, stdout, _ = _run(capsys, "import-hf", str(src), str(tmp_path / "plain"))
    assert code == 0 and "rerun with --remap-vocab" in stdout
    assert not (tmp_path / "plain" / "tokenizer.json").exists()

    code, stdout, _ = _run(capsys, "import-hf", str(src), str(tmp_path / "remapped"),
                           "--remap-vocab")
    assert code == 0 and "rows reordered" in stdout
    model = mm.load(tmp_path / "remapped" / "model.safetensors").eval()
    ours_tok = load_tokenizer(tmp_path / "remapped" / "tokenizer.json")
    assert model.lm_head.weight is model.token_emb.weight
    text = "But, soft! what light through yonder window breaks? [MASK]"
    their_ids = transformers.AutoTokenizer.from_pretrained(str(src)).encode(text)
    our_ids = ours_tok.encode(text)
    assert len(their_ids) == len(our_ids) and their_ids != our_ids
    with no_grad():
        ours = model(np.array([our_ids]))[0].data  # (1, T, V) in our id order
    with torch.no_grad():
        theirs = hf(torch.tensor([their_ids])).logits.numpy()  # in GPT-2's id order
    perm = np.array([vocab[s] for s in ours_tok.to_gpt2_vocab()])  # our id -> their id
    np.testing.assert_allclose(ours, theirs[..., perm], atol=LOGIT_TOL, rtol=0)
