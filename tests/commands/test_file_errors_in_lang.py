"""A file error said in the reader's language (commands/_exit.os_error_in): the kind of file,
its path and what went wrong, every word Spanish with --lang es, the English unchanged."""

from __future__ import annotations

import ast
import errno
from pathlib import Path

import pytest

from minimodel import _fileio
from minimodel._fileio import describe_os_error, require_file
from minimodel.cli import main
from minimodel.commands._exit import os_error_in
from minimodel.messages import catalogue

SRC = Path(__file__).resolve().parents[2] / "src" / "minimodel"


def test_every_plain_reason_has_its_words_in_every_language():
    """The catalogue's ``os.<words>`` are _fileio's plain words, no more, no fewer."""
    reasons = {key[len("os."):]: texts for key, texts in catalogue().items()
               if key.startswith("os.")}
    assert set(reasons) == set(_fileio._PLAIN.values())
    assert all(texts["en"] == words and texts["es"] != words for words, texts in reasons.items())


def test_every_kind_of_file_the_code_requires_has_a_name():
    """Each ``require_file(path, "<what>")`` and ``read_json(path, "<what>")`` of the source
    names a ``file_kind.<what>``."""
    kinds = {"file"}  # require_file's default
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and \
                    getattr(node.func, "id", None) in ("require_file", "read_json") \
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                kinds.add(node.args[1].value)
    assert len(kinds) >= 15
    assert sorted(k for k in kinds if f"file_kind.{k}" not in catalogue()) == []


@pytest.mark.parametrize("make, english, spanish", [
    (lambda tmp: tmp / "gone", "checkpoint {p}: no such file or directory",
     "el punto de control {p}: no existe"),
    (lambda tmp: tmp, "checkpoint {p} is a directory, not a file",
     "el punto de control {p} es una carpeta, no un archivo"),
    (lambda tmp: Path("/dev/null"),
     "checkpoint {p} is not a regular file (a device, pipe or socket?)",
     "el punto de control {p} no es un archivo normal (¿un dispositivo, una tubería o un socket?)"),
])
def test_a_required_file_is_named_in_both_languages(tmp_path, make, english, spanish):
    path = make(tmp_path)
    with pytest.raises(OSError) as info:
        require_file(path, "checkpoint")
    assert str(info.value.strerror) == english.format(p=path)  # the exception's own text
    assert os_error_in(info.value, "en") == english.format(p=path)
    assert os_error_in(info.value, "es") == spanish.format(p=path)


def test_other_file_errors_keep_their_paths_and_say_the_reason():
    full = OSError(errno.ENOSPC, "No space left on device", "runs/a/log.jsonl")
    moved = OSError(errno.EXDEV, "Invalid cross-device link", "a", None, "b")
    bare = OSError(errno.EACCES, "learner folder x is read-only")
    assert os_error_in(full, "en") == describe_os_error(full) == "runs/a/log.jsonl: the disk is full"
    assert os_error_in(full, "es") == "runs/a/log.jsonl: el disco está lleno"
    # a reason the catalogue does not hold: the system's words, in either language
    assert os_error_in(moved, "es") == "a -> b: Invalid cross-device link"
    assert os_error_in(bare, "es") == "learner folder x is read-only"


def test_the_doctor_says_a_missing_file_in_spanish(tmp_path, capsys):
    missing = tmp_path / "nada.safetensors"
    assert main(["doctor", str(missing), "--lang", "es"]) == 2
    assert capsys.readouterr().err == f"error: el archivo del modelo {missing}: no existe\n"
    assert main(["doctor", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: model file {missing}: no such file or directory\n"


@pytest.mark.parametrize("content, english, spanish", [
    ("{not json", "model config: {p} is not valid JSON (Expecting property name enclosed in "
     "double quotes: line 1 column 2 (char 1))",
     "la configuración del modelo: {p} no es un JSON válido (Expecting property name"),
    ("[1, 2]", "model config: {p} should hold a JSON object, got list",
     "la configuración del modelo: {p} debería contener un objeto JSON, no un valor de tipo list"),
])
def test_a_broken_config_json_is_said_in_both_languages(tmp_path, capsys, content, english,
                                                         spanish):
    (tmp_path / "config.json").write_text(content)
    for lang, expected in (("en", english), ("es", spanish)):
        assert main(["doctor", str(tmp_path), "--lang", lang]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: " + expected.format(p=tmp_path / "config.json")), err
