"""The site's own words in English and Spanish: headings of the generated pages, the
results page's labels and the API reference's titles. The lab's texts (quiz, breaks,
exercises) come from the lab's content, never from here."""

from __future__ import annotations

LANGS = ("en", "es")

WORDS = {
    "quiz": {"en": "Quiz questions", "es": "Preguntas del cuestionario"},
    "breaks": {"en": "Breaks", "es": "Averías"},
    "exercises": {"en": "Exercises", "es": "Ejercicios"},
    "lesson": {"en": "Lesson", "es": "Lección"},
    "story": {"en": "The story", "es": "La historia"},
    "predict": {"en": "Predict", "es": "Predice"},
    "observe": {"en": "Observe", "es": "Observa"},
    "hints": {"en": "Hint ladder", "es": "Escalera de pistas"},
    "start": {"en": "Start it", "es": "Empieza"},
    "statement": {"en": "Statement", "es": "Enunciado"},
    "signature": {"en": "Signature", "es": "Firma"},
    "rules": {"en": "Rules", "es": "Reglas"},
    "forbidden": {"en": "Forbidden (the judge refuses them)",
                  "es": "Prohibido (el juez lo rechaza)"},
    "example": {"en": "Public example", "es": "Ejemplo público"},
    "tolerance": {"en": "Tolerance", "es": "Tolerancia"},
    "lab": {"en": "The lab", "es": "El laboratorio"},
    "lab_intro": {"en": "Breaks put a known bug into a scratch copy of minimodel; exercises ask "
                        "you to write a function from scratch for the judge. Every page here is "
                        "generated from the lab's own content when the site is built.",
                  "es": "Las averías meten un fallo conocido en una copia de trabajo de "
                        "minimodel; los ejercicios te piden escribir una función desde cero "
                        "para el juez. Cada página de esta sección se genera a partir del "
                        "contenido del laboratorio al construir el sitio."},
    "quiz_page": {"en": "The phase 13 quiz", "es": "El cuestionario de la fase 13"},
    # the Measured page
    "title": {"en": "Measured: tied against untied, and the benchmarks",
              "es": "Medido: atado frente a sin atar, y las pruebas de rendimiento"},
    "intro": {"en": "Generated when the site is built from `docs/measured.json`, which "
                    "`scripts/make_results_data.py` collects from a real `minimodel compare` "
                    "run and the benchmark scripts. Machine:",
              "es": "Generada al construir el sitio a partir de `docs/measured.json`, que "
                    "`scripts/make_results_data.py` reúne de una ejecución real de "
                    "`minimodel compare` y de los scripts de rendimiento. Máquina:"},
    "compare": {"en": "Tied against untied", "es": "Atado frente a sin atar"},
    "row": {"en": "| | tied | untied |", "es": "| | atado | sin atar |"},
    "params": {"en": "parameters", "es": "parámetros"},
    "val": {"en": "validation loss (nats/token)", "es": "pérdida de validación (nats/token)"},
    "ppl": {"en": "perplexity", "es": "perplejidad"},
    "erank": {"en": "effective rank of E", "es": "rango efectivo de E"},
    "erank_w": {"en": "effective rank of W (head)", "es": "rango efectivo de W (cabeza)"},
    "speed": {"en": "training tokens/s", "es": "tokens de entrenamiento/s"},
    "curves": {"en": "Validation loss and effective rank over training",
               "es": "Pérdida de validación y rango efectivo durante el entrenamiento"},
    "cbow": {"en": "CBOW against gensim", "es": "CBOW frente a gensim"},
    "bench": {"en": "Training step against PyTorch and transformers",
              "es": "Paso de entrenamiento frente a PyTorch y transformers"},
    "cores": {"en": "cores", "es": "núcleos"},
    "setup": {"en": "{model}, d={d}, {layers} blocks, {tok} V={V}, {steps} steps, seed {seed}",
              "es": "{model}, d={d}, {layers} bloques, {tok} V={V}, {steps} pasos, semilla "
                    "{seed}"},
    "cbow_head": {"en": "| objective | implementation | words/s | WordSim-353 ρ | SimLex-999 ρ |",
                  "es": "| objetivo | implementación | palabras/s | ρ WordSim-353 | "
                        "ρ SimLex-999 |"},
    "bench_head": {"en": "| metric | measured | target | met? |",
                   "es": "| métrica | medido | objetivo | ¿cumplido? |"},
    "steps": {"en": "Step time against the width d", "es": "Tiempo por paso frente a la anchura d"},
    "steps_head": {"en": "| d | V | minimodel ms | PyTorch eager ms | transformers ms | "
                         "minimodel / best |",
                   "es": "| d | V | minimodel ms | PyTorch eager ms | transformers ms | "
                         "minimodel / mejor |"},
    "threads": {"en": "threads", "es": "hilos"},
    "plain_import": {"en": "minimodel as a plain import, no malloc tuning",
                     "es": "minimodel tal como lo deja un simple import, sin ajustar malloc"},
    "yes": {"en": "yes", "es": "sí"},
    "no": {"en": "no", "es": "no"},
    # exercise pages
    "argument": {"en": "argument", "es": "argumento"},
    "value": {"en": "value", "es": "valor"},
    "try_it": {"en": "Write the function in a file, then have the judge check it:",
               "es": "Escribe la función en un archivo y pide al juez que la compruebe:"},
    # the quiz page
    "show_answer": {"en": "Show the answer", "es": "Ver la respuesta"},
    "answer": {"en": "Answer", "es": "Respuesta"},
    "generated": {"en": "Generated from `{source}` when the site is built; take it in the "
                        "terminal with `minimodel quiz take {quiz}`.",
                  "es": "Generada a partir de `{source}` al construir el sitio; hazlo en la "
                        "terminal con `minimodel quiz take {quiz} --lang es`."},
    # lessons
    "figure": {"en": "Figure drawn by the code above", "es": "Figura dibujada por el código de "
                                                              "arriba"},
    "notebook": {"en": "Run this lesson as a notebook: `minimodel lab notebook {lesson}`.",
                 "es": "Ejecuta esta lección como cuaderno: "
                       "`minimodel lab notebook {lesson} --lang es`."},
}

# The API reference: one page per module (rendered by mkdocstrings), its title per language.
REFERENCE = {
    "nn-embedding": ("minimodel.nn.embedding", {"en": "Embedding", "es": "Embedding"}),
    "nn-lm-head": ("minimodel.nn.lm_head", {"en": "Output heads", "es": "Cabezas de salida"}),
    "functional-losses": ("minimodel.functional.losses", {"en": "Losses", "es": "Pérdidas"}),
    "functional-activations": ("minimodel.functional.activations",
                               {"en": "Activations", "es": "Activaciones"}),
    "functional-attention": ("minimodel.functional.attention",
                             {"en": "Attention", "es": "Atención"}),
    "models-gpt": ("minimodel.models.gpt", {"en": "GPT", "es": "GPT"}),
    "models-mlm": ("minimodel.models.mlm", {"en": "Masked LM",
                                            "es": "Modelo de lenguaje enmascarado"}),
    "models-cbow": ("minimodel.models.cbow", {"en": "CBOW", "es": "CBOW"}),
    "diagnostics": ("minimodel.diagnostics", {"en": "Diagnostics", "es": "Diagnósticos"}),
    "interop-word2vec": ("minimodel.interop.word2vec",
                         {"en": "word2vec files", "es": "Archivos word2vec"}),
    "interop-hf": ("minimodel.interop.hf", {"en": "Hugging Face: to_hf / from_hf",
                                            "es": "Hugging Face: to_hf / from_hf"}),
    "interop-gpt2": ("minimodel.interop.gpt2", {"en": "Hugging Face GPT-2",
                                                "es": "GPT-2 de Hugging Face"}),
    "interop-mlm-hf": ("minimodel.interop.mlm_hf",
                       {"en": "Hugging Face MegatronBERT (masked LM)",
                        "es": "MegatronBERT de Hugging Face (modelo enmascarado)"}),
    "data-masking": ("minimodel.data.masking", {"en": "Masking for the MLM",
                                                "es": "Enmascarado para el modelo enmascarado"}),
    "evaluation": ("minimodel.evaluation", {"en": "Word similarity",
                                            "es": "Similitud entre palabras"}),
    "functional-normalization": ("minimodel.functional.normalization",
                                 {"en": "Layer normalisation", "es": "Normalización de capa"}),
    "functional-tensors": ("minimodel.functional.tensors",
                           {"en": "Tensor helpers (where, masked_fill)",
                            "es": "Utilidades de tensores (where, masked_fill)"}),
    "nn-norm": ("minimodel.nn.norm", {"en": "LayerNorm", "es": "LayerNorm"}),
    "nn-attention": ("minimodel.nn.attention", {"en": "MultiHeadAttention",
                                                "es": "MultiHeadAttention"}),
    "nn-block": ("minimodel.nn.block", {"en": "The pre-LN block", "es": "El bloque pre-LN"}),
    "data-corpus": ("minimodel.data.corpus", {"en": "Corpus and batches",
                                              "es": "Corpus y lotes"}),
    "data-tokenizers": ("minimodel.data.tokenizers", {"en": "Tokenizers", "es": "Tokenizadores"}),
}


def w(key: str, lang: str, **values: str) -> str:
    """``WORDS[key]`` in ``lang``, with ``{placeholders}`` filled in."""
    text = WORDS[key][lang]
    return text.format(**values) if values else text


def page_name(stem: str, lang: str, suffix: str = ".md") -> str:
    """mkdocs-static-i18n's suffix layout: ``x.md`` (English) and ``x.es.md``."""
    return f"{stem}{suffix}" if lang == "en" else f"{stem}.{lang}{suffix}"


def number(value: float, spec: str, lang: str) -> str:
    """``format(value, spec)`` written the way ``lang`` writes numbers in prose.

    Spanish groups thousands with a (non-breaking) space and uses a decimal comma, and a
    four-digit number is not grouped: 544 256, 4,2177, 2048.
    """
    text = format(value, spec)
    if lang != "es":
        return text
    whole = text.split(".")[0].lstrip("-")
    if len(whole.replace(",", "")) <= 4:
        text = text.replace(",", "", 1)
    return text.translate({ord(","): "\u00a0", ord("."): ","})
