"""`minimodel doctor` as a command: exit codes, --json, --lang es, --tokenizer, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from doctor_helpers import V, build_hf, rewrite, tensors, write_fast_tokenizer
from minimodel.cli import main

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    return build_hf("gpt2", True, tmp_path_factory.mktemp("hf") / "gpt2")


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    folder = build_hf("gpt2", True, tmp_path_factory.mktemp("hf") / "gpt2-broken")
    state = tensors(folder)
    state["lm_head.weight"] = state["transformer.wte.weight"] + 0.5
    rewrite(folder, state)
    return folder


def test_healthy_exits_0_with_a_table(healthy, capsys):
    assert main(["doctor", str(healthy)]) == 0
    out = capsys.readouterr().out
    assert "transformer.wte.weight" in out and "0 problem(s), 0 warning(s)" in out


def test_an_80_column_terminal_shows_tensor_names_whole(broken, capsys, monkeypatch):
    # Five table columns at 80 left ~14 characters a cell: "transformer.wte.weight" came out
    # as "transformer.wt" / "e.weight". A narrow terminal gets one block per finding instead.
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["doctor", str(broken)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    body = "\n".join(lines[2:])  # below the header (folder, embedding, head; the source)
    assert body.count("transformer.wte.weight") >= 2 and body.count("lm_head.weight") >= 2
    assert "claimed vs stored: problem" in body and "1 problem(s)" in body
    monkeypatch.setenv("COLUMNS", "160")  # a wide terminal keeps the table
    main(["doctor", str(broken)])
    assert "┃ check" in capsys.readouterr().out


def test_problems_exit_1_and_json_names_them(broken, capsys):
    assert main(["doctor", str(broken), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["healthy"] is False
    tie = report["findings"][0]
    assert (tie["status"], tie["key"]) == ("problem", "tie.tied_but_different")
    assert tie["data"]["difference"]["max_abs"] == pytest.approx(0.5)
    from importlib.metadata import version

    # the statement names the installed version's behaviour (5.x: warns, loads untied)
    assert f"transformers {version('transformers')} warns and loads the model untied" in \
        tie["why"] and tie["fix"]
    assert report["source"].startswith("transformers ") and "GPT2LMHeadModel" in report["source"]


def test_spanish_report_uses_the_glossary_terms(broken, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")  # wide enough for the table
    assert main(["doctor", str(broken), "--lang", "es"]) == 1
    out = capsys.readouterr().out
    assert "hallazgo" in out and "1 problema(s)" in out
    header = " ".join(out.split("┏")[0].split())   # above the table: folder, kind, E, head
    assert "(carpeta de Hugging Face): embedding transformer.wte.weight" in header
    assert ", cabeza lm_head.weight" in header and "folder" not in header
    assert main(["doctor", str(broken), "--json", "--lang", "es"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["findings"][0]["found"].startswith("La configuración dice atado")


def test_a_tokenizer_given_elsewhere_is_used(healthy, tmp_path, capsys):
    write_fast_tokenizer(tmp_path, V, added=[(V, "<extra>")])
    assert main(["doctor", str(healthy), "--tokenizer", str(tmp_path / "tokenizer.json"),
                 "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["tokenizer"]["size"] == V + 1
    assert [f["key"] for f in report["findings"] if f["status"] == "problem"] == \
        ["sizes.ids_beyond_matrix"]


def test_a_bare_safetensors_file_without_config_or_tokenizer(tmp_path, capsys):
    from safetensors.numpy import save_file

    E = np.random.default_rng(0).normal(size=(50, 16)).astype(np.float32)
    save_file({"my_model.tok_table": E, "my_model.out_proj": E * 2}, str(tmp_path / "w.safetensors"))
    assert main(["doctor", str(tmp_path / "w.safetensors"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["embedding"]["found_by_shape"] is True
    keys = {f["key"]: f["status"] for f in report["findings"]}
    assert keys["sizes.no_tokenizer"] == "skipped"
    assert keys["tie.no_claim_untied"] == "ok"
    assert report["head"]["name"] == "my_model.out_proj"


def test_the_built_in_table_is_named_in_spanish(tmp_path, capsys):
    from safetensors.numpy import save_file

    E = np.random.default_rng(0).normal(size=(50, 16)).astype(np.float32)
    save_file({"tok_table": E}, str(tmp_path / "w.safetensors"))
    main(["doctor", str(tmp_path / "w.safetensors"), "--lang", "es"])
    out = capsys.readouterr().out
    assert "leídos de: la tabla incorporada." in out and "built-in" not in out


@pytest.mark.parametrize("bad, words, palabras", [
    ("missing", "model file {path}: no such file or directory",
     "el archivo del modelo {path}: no existe"),
    ("json", "{path} is not a readable safetensors file (it looks like JSON)",
     "{path} no es un archivo safetensors legible (parece JSON)"),
    ("corrupt", "is not a readable safetensors file (Error while deserializing header",
     "; ¿está dañado o truncado?)"),
    ("empty_dir", "{path} holds no model weights (looked for model.safetensors, its .index.json "
     "shards, and pytorch_model.bin); it holds: nothing",
     "{path} no contiene pesos de un modelo (se buscaron model.safetensors, los fragmentos de su "
     ".index.json y pytorch_model.bin); contiene: nada"),
    ("run_never_started", "{path} is a minimodel run stopped before its first step: it has no "
     "model yet (it holds: run.json, tokenizer.json); start it again, with the options you gave "
     "it: minimodel train --out {path}",
     "{path} es una ejecución de minimodel detenida antes de su primer paso: todavía no tiene "
     "modelo (contiene: run.json, tokenizer.json); vuelve a lanzarla con las opciones que le "
     "diste: minimodel train --out {path}"),
    ("device", "model file {path} is not a regular file (a device, pipe or socket?)",
     "el archivo del modelo {path} no es un archivo normal (¿un dispositivo, una tubería o un "
     "socket?)"),
    ("no_tokenizer", "{path} holds no tokenizer (tokenizer.json, vocab.json or vocab.txt)",
     "{path} no contiene ningún tokenizador (tokenizer.json, vocab.json o vocab.txt)"),
    ("not_tokenizer", "{path} is neither a tokenizer.json nor a vocab.json (token -> id) file",
     "{path} no es ni un tokenizer.json ni un vocab.json (token -> id)"),
])
def test_unreadable_input_exits_2_without_a_traceback(tmp_path, healthy, capsys, bad, words,
                                                      palabras):
    """One sentence in the report's language (--lang es: every word of it Spanish)."""
    path, tokenizer = tmp_path / bad, []
    if bad == "json":
        path = tmp_path / "tokenizer.safetensors"
        path.write_text('{"not": "weights"}')
    elif bad == "corrupt":
        path = tmp_path / "cut.safetensors"
        path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{cut")
    elif bad == "empty_dir":
        path.mkdir()
    elif bad == "run_never_started":  # `train 2>&1 | head -3`: the setup files, no step yet
        path.mkdir()
        (path / "run.json").write_text('{"config": {"steps": 200}}')
        (path / "tokenizer.json").write_text("{}")
    elif bad == "device":
        path = "/dev/null"
    elif bad in ("no_tokenizer", "not_tokenizer"):
        path.mkdir()
        if bad == "not_tokenizer":
            path = path / "tokenizer.json"
            path.write_text('{"model": 3, "not": "ids"}')
        tokenizer = ["--tokenizer", str(path)]
    for lang, expected in (("en", words), ("es", palabras)):
        model = healthy if tokenizer else path
        assert main(["doctor", str(model), *tokenizer, "--lang", lang]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err and len(err.splitlines()) == 1
        assert expected.format(path=path) in err, err


def test_a_pickled_checkpoint_without_torch_says_so(tmp_path, monkeypatch, capsys):
    (tmp_path / "config.json").write_text('{"model_type": "gpt2", "vocab_size": 8}')
    (tmp_path / "pytorch_model.bin").write_bytes(b"PK\x03\x04 not read")
    monkeypatch.setitem(__import__("sys").modules, "torch", None)  # as if not installed
    assert main(["doctor", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "PyTorch pickle and torch is not installed" in err and "Traceback" not in err
