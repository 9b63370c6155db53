"""`minimodel train --lang es`: a Spanish-speaking learner reads every line of a run in Spanish
(progress, summary, next steps, Ctrl-C / SIGTERM, errors, divergence), with the same figures
as in English; `--json` is for programs and stays the same in both languages."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

from minimodel.cli import main

LONG = ["--steps", "100000", "--eval-interval", "1"]  # never finishes; a line every step


def _train(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["train", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _shape(line: str) -> str:
    """A line without its figures and paths: what stays when only the language changes."""
    return re.sub(r"\S*/\S*|[\d.,]+", "#", line).strip()


def test_a_spanish_run_prints_every_line_in_spanish_with_the_same_figures(
        tiny_corpus, tiny, tmp_path, capsys):
    code_en, english, _ = _train(capsys, "--corpus", str(tiny_corpus), *tiny,
                                 "--out", str(tmp_path / "en"))
    code_es, spanish, _ = _train(capsys, "--corpus", str(tiny_corpus), *tiny,
                                 "--out", str(tmp_path / "es"), "--lang", "es")
    assert code_en == code_es == 0
    english_shapes = {_shape(line) for line in english.splitlines()}
    still_english = [line for line in spanish.splitlines()
                     if line.strip() and _shape(line) in english_shapes]
    assert still_english == []
    lines = spanish.splitlines()
    assert lines[0] == "hilos de BLAS: 1"
    assert re.fullmatch(r"paso  5/20  entrenamiento \d\.\d{4}  validación \d\.\d{4}  ppl [\d.]+  "
                        r"lr [\d.]+e-0\d  [\d\u00a0]+ tok/s  [\d.]+ s transcurridos", lines[3])
    # counts grouped as Spanish writes them (a no-break space; a comma would read as a decimal
    # comma), as English groups them with commas
    assert "12\u00a0000 caracteres" in spanish and "12,000 chars" in english
    assert re.findall(r"\d,\d{3}(?!\d)", spanish) == []
    n = int(re.search(r"([\d,]+) parameters", english).group(1).replace(",", ""))
    assert 1000 <= n < 10_000 and f"{n} parámetros" in spanish   # four digits: not grouped (RAE)
    assert "evaluando con toda la partición de validación ..." in lines
    assert any(line.startswith("rango efectivo de E: ") for line in lines)
    # figures in a sentence carry the decimal comma, as the rest of the Spanish lab writes them
    assert re.search(r"^rango efectivo de E: \d+,\d de \d+", spanish, re.M)
    assert re.search(r"^effective rank of E \d+\.\d of \d+", english, re.M)
    assert re.search(r"referencias: unigrama \d,\d{4}, uniforme ln V \d,\d{4}", spanish)
    assert re.search(r"unigram \d\.\d{4}", english)
    # the commands it suggests carry --lang es, as the lab's do
    assert f"  minimodel doctor {tmp_path / 'es'} --lang es " in spanish
    assert "  minimodel lab next --lang es " in spanish

    # the times say what they measure, and agree: the last step line's elapsed time is at
    # most the run's elapsed time, of which the training steps are a part
    last = float(re.findall(r"tok/s  ([\d.]+)s elapsed$", english, re.M)[-1])
    steps, elapsed = map(float, re.search(r"([\d.]+)s in training steps of ([\d.]+)s elapsed",
                                          english).groups())
    assert steps <= last <= elapsed
    assert "train time" not in english
    assert re.search(r"\d+,\d s en pasos de entrenamiento de \d+,\d s transcurridos", spanish)

    def figures(text: str) -> list[str]:  # the losses of the evaluation lines, as printed
        return re.findall(r"(?:train|entrenamiento) (\d\.\d{4})  (?:val|validación) (\d\.\d{4})",
                          text)
    assert len(figures(spanish)) == 4 and figures(spanish) == figures(english)


def test_sigterm_says_in_spanish_where_the_checkpoint_is_and_how_to_resume(
        tiny_corpus, tiny, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "minimodel", "train", "--corpus",
                             str(tiny_corpus), *tiny, *LONG, "--out", str(out), "--lang", "es"],
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for line in proc.stdout:
        if line.startswith("paso "):
            break
    else:
        raise AssertionError(f"the run ended before its first step: {proc.stderr.read()}")
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    step = json.loads((out / "checkpoints" / "LATEST").read_text())["step"]
    assert (f"interrumpido en el paso {step}/100000; punto de control guardado en {out}.\n"
            f"reanuda con:  minimodel train --resume --out {out} --lang es") in rest
    assert "interrupted" not in rest + err and "resume with" not in rest + err


def test_usage_errors_are_said_in_spanish_with_exit_code_2(tiny_corpus, tiny, tmp_path, capsys):
    code, _, err = _train(capsys, "--resume", "--force", "--lang", "es")
    assert code == 2
    assert err == ("error: --resume continúa una ejecución y --force la empieza de nuevo; "
                   "elige una de las dos\n")
    code, _, err = _train(capsys, *tiny, "--d-model", "30", "--n-head", "4", "--lang", "es")
    assert code == 2 and err == ("error: --d-model 30 debe ser divisible entre --n-head 4 (cada "
                                 "cabeza de atención recibe d_model / n_head dimensiones)\n")
    code, _, err = _train(capsys, "--corpus", str(tmp_path / "nada.txt"), *tiny, "--lang", "es")
    assert code == 2 and err.startswith(f"error: el archivo de corpus {tmp_path / 'nada.txt'} "
                                        "no existe;")
    out = tmp_path / "run"
    assert _train(capsys, "--corpus", str(tiny_corpus), *tiny, "--out", str(out))[0] == 0
    code, _, err = _train(capsys, "--corpus", str(tiny_corpus), *tiny, "--out", str(out),
                          "--lang", "es")
    assert code == 2
    assert err.startswith(f"error: {out} ya contiene una ejecución terminada (paso 20/20). "
                          "Para volver a entrenar, empieza de nuevo con `--force`")


def test_a_diverging_run_says_what_to_try_in_spanish(tiny_corpus, tiny, tmp_path, capsys):
    code, _, err = _train(capsys, "--corpus", str(tiny_corpus), *tiny, "--out",
                          str(tmp_path / "run"), "--lr", "1e30", "--grad-clip", "0",
                          "--warmup", "0", "--eval-interval", "1", "--lang", "es")
    assert code == 1
    assert re.match(r"error: la pérdida de (entrenamiento|validación) pasó a ser \S+ en el paso "
                    r"\d+: la ejecución divergió\. No se guardó nada de este paso", err)
    assert "Prueba una --lr más baja (actual: 1e+30; por ejemplo, 0.003, el valor por defecto)" in err
    assert "activa --grad-clip" in err and "diverged" not in err


def test_json_output_is_the_same_in_both_languages(tiny_corpus, tiny, tmp_path, capsys):
    def events(lang: str) -> list[dict]:
        out = tmp_path / lang
        code, text, _ = _train(capsys, "--corpus", str(tiny_corpus), *tiny, "--out", str(out),
                               "--json", "--lang", lang)
        assert code == 0
        rows = [json.loads(line.replace(str(out), "OUT")) for line in text.splitlines()]
        timing = {"tokens_per_s", "elapsed", "train_time_s", "elapsed_s"}
        return [{k: v for k, v in row.items() if k not in timing} for row in rows]

    english, spanish = events("en"), events("es")
    assert [row["event"] for row in english][:4] == ["start"] + ["message"] * 3
    assert english[1]["text"] == "BLAS threads: 1"
    assert spanish == english
