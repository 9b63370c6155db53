"""The doctor's sentences, in English and Spanish: (found, why it matters, the fix) per finding.

``{name}`` placeholders are filled from :attr:`Finding.values`. Spanish follows
``lab/content/glossary.yaml`` (atadura, cabeza de salida, consulta, decaimiento de pesos...).
"""

from __future__ import annotations

from typing import Any

LANGS = ("en", "es")

CHECK_TITLES = {
    "tie": {"en": "claimed vs stored", "es": "lo declarado y lo guardado"},
    "sizes": {"en": "sizes agree", "es": "los tamaños coinciden"},
    "rows": {"en": "under-trained rows", "es": "filas poco entrenadas"},
    "reachability": {"en": "unreachable tokens", "es": "tokens inalcanzables"},
    "optimizer": {"en": "optimizer holds E once", "es": "el optimizador guarda E una vez"},
    "ledger": {"en": "gradient ledger", "es": "cuentas del gradiente"},
}

STATUS_WORDS = {"ok": {"en": "ok", "es": "bien"},
                "warning": {"en": "warning", "es": "aviso"},
                "problem": {"en": "problem", "es": "problema"},
                "skipped": {"en": "skipped", "es": "omitido"}}

TEXTS: dict[str, dict[str, tuple[str, str, str]]] = {
    # ----------------------------------------------------------------------- claimed vs stored
    "tie.flags_disagree": {
        "en": ("The tie flags disagree: {flags}.",
               "Loaders read different flags, so one ties the head to the embedding and another "
               "builds a separate, randomly initialised head (the model then speaks gibberish).",
               "Write the same tie_word_embeddings value at the top level and in every nested "
               "config."),
        "es": ("Las marcas de atadura no coinciden: {flags}.",
               "Cada cargador lee una marca distinta: uno ata la cabeza de salida al embedding y "
               "otro crea una cabeza aparte con inicialización aleatoria (y el modelo dice "
               "galimatías).",
               "Escribe el mismo valor de tie_word_embeddings arriba y en cada configuración "
               "anidada."),
    },
    "tie.tied_stored_once": {
        "en": ("Tied, and stored once: {embedding} ({shape}) is both the lookup table and the "
               "head; {head} is absent as expected.",
               "A tied model keeps one matrix; the loader ties the head back to it.",
               "Nothing to do."),
        "es": ("Atado y guardado una vez: {embedding} ({shape}) es la tabla de consulta y la "
               "cabeza de salida; {head} falta, como debe.",
               "Un modelo con pesos atados guarda una sola matriz; el cargador le vuelve a atar "
               "la cabeza.",
               "Nada que hacer."),
    },
    "tie.untied_head_absent": {
        "en": ("The config says untied ({claim}) but the file has no head ({head}).",
               "The loader will create the head with random values: every prediction is "
               "noise although the embedding is trained.",
               "If the model was trained tied, set tie_word_embeddings to true; otherwise save "
               "the trained head too."),
        "es": ("La configuración dice sin atar ({claim}) pero el archivo no tiene cabeza de "
               "salida ({head}).",
               "El cargador creará la cabeza con valores aleatorios: cada predicción será ruido "
               "aunque el embedding esté entrenado.",
               "Si el modelo se entrenó con pesos atados, pon tie_word_embeddings a true; si "
               "no, guarda también la cabeza entrenada."),
    },
    "tie.unknown_head_absent": {
        "en": ("No tie flag is written and the file has no head ({head}).",
               "Whether the head is tied or random then depends on the loader's default for "
               "this architecture.",
               "Write tie_word_embeddings: true in config.json."),
        "es": ("No hay marca de atadura escrita y el archivo no tiene cabeza ({head}).",
               "Que la cabeza quede atada o aleatoria depende entonces del valor por defecto "
               "del cargador para esta arquitectura.",
               "Escribe tie_word_embeddings: true en config.json."),
    },
    "tie.stored_twice": {
        "en": ("Tied, but the head {head} is stored too, identical to {embedding} (an extra "
               "{mib} MiB).",
               "Harmless: loaders that tie keep one copy. But the file is larger, and a tool "
               "that loads tensors by name may keep two copies that later drift apart.",
               "Save without the head (save_pretrained does this for a tied model)."),
        "es": ("Atado, pero la cabeza {head} también está guardada, idéntica a {embedding} "
               "({mib} MiB de más).",
               "No hace daño: los cargadores que atan guardan una copia. Pero el archivo pesa "
               "más, y una herramienta que carga tensores por nombre puede quedarse con dos "
               "copias que luego se separan.",
               "Guarda sin la cabeza (save_pretrained lo hace con un modelo atado)."),
    },
    "tie.tied_but_different": {
        "en": ("The config says tied ({claim}) but {head} differs from {embedding}: "
               "{rows_differ} rows differ, largest difference {max_abs}, "
               "|W - E| / |E| = {relative}.",
               "A contradiction: transformers ties on load, keeps {embedding} and silently "
               "drops the stored head; a plain load_state_dict keeps both, untied. The two "
               "give different predictions.",
               "Decide which is right: if the head was trained on purpose, set "
               "tie_word_embeddings to false; if not, save again without the head."),
        "es": ("La configuración dice atado ({claim}) pero {head} no es igual a {embedding}: "
               "difieren {rows_differ} filas, la mayor diferencia es {max_abs}, "
               "|W - E| / |E| = {relative}.",
               "Una contradicción: transformers ata al cargar, se queda con {embedding} y "
               "descarta sin avisar la cabeza guardada; un load_state_dict simple guarda las "
               "dos, sin atar. Cada uno predice distinto.",
               "Decide cuál es la correcta: si la cabeza se entrenó a propósito, pon "
               "tie_word_embeddings a false; si no, vuelve a guardar sin la cabeza."),
    },
    "tie.tied_shapes_differ": {
        "en": ("The config says tied but the head {head} is {head_shape} and the embedding "
               "{shape}.",
               "A tied head is the embedding matrix itself, so it cannot have another shape; "
               "loading fails or drops one of them.",
               "Resize one to the other (resize_token_embeddings) or mark the model untied."),
        "es": ("La configuración dice atado pero la cabeza {head} es {head_shape} y el "
               "embedding {shape}.",
               "Una cabeza atada es la propia matriz de embeddings, así que no puede tener otra "
               "forma; la carga falla o descarta una de las dos.",
               "Ajusta una al tamaño de la otra (resize_token_embeddings) o marca el modelo "
               "sin atar."),
    },
    "tie.untied_ok": {
        "en": ("Untied: the head {head} and the embedding {embedding} are two matrices, as the "
               "config says.",
               "Each matrix learns on its own; nothing contradicts the config.",
               "Nothing to do."),
        "es": ("Sin atar: la cabeza {head} y el embedding {embedding} son dos matrices, como "
               "dice la configuración.",
               "Cada matriz aprende por su cuenta; nada contradice la configuración.",
               "Nada que hacer."),
    },
    "tie.no_claim_untied": {
        "en": ("No tie flag is written; the head {head} and the embedding {embedding} are two "
               "different matrices: untied.",
               "Nothing claims a tie, and the file holds two matrices, so nothing contradicts.",
               "Nothing to do (writing tie_word_embeddings: false makes it explicit)."),
        "es": ("No hay marca de atadura escrita; la cabeza {head} y el embedding {embedding} "
               "son dos matrices distintas: sin atar.",
               "Nada declara una atadura y el archivo guarda dos matrices: no hay contradicción.",
               "Nada que hacer (escribir tie_word_embeddings: false lo deja explícito)."),
    },
    "tie.untied_identical": {
        "en": ("The config says untied, yet {head} equals {embedding} exactly.",
               "Two equal matrices are a copy, not a tie: training (or fine-tuning) will move "
               "them apart, and the file stores the same numbers twice.",
               "If you meant a tie, set tie_word_embeddings to true and save without the head."),
        "es": ("La configuración dice sin atar, pero {head} es exactamente igual a "
               "{embedding}.",
               "Dos matrices iguales son una copia, no una atadura: el entrenamiento (o el "
               "ajuste fino) las separará, y el archivo guarda los mismos números dos veces.",
               "Si querías atarlas, pon tie_word_embeddings a true y guarda sin la cabeza."),
    },
    "tie.alias_differs": {
        "en": ("{alias} should be {embedding} under another name but differs (largest "
               "difference {max_abs}).",
               "The encoder or decoder would look tokens up in another table than the one the "
               "model shares; loaders keep only one of them.",
               "Save again from the loaded model so that the shared table is written once."),
        "es": ("{alias} debería ser {embedding} con otro nombre, pero difiere (mayor "
               "diferencia {max_abs}).",
               "El codificador o el decodificador consultarían otra tabla que la compartida; "
               "los cargadores se quedan solo con una.",
               "Vuelve a guardar desde el modelo cargado para que la tabla compartida se "
               "escriba una vez."),
    },
    # ----------------------------------------------------------------------- sizes
    "sizes.agree": {
        "en": ("Tokenizer ids 0..{tokenizer_size} - 1 ({added} added, {special} special), "
               "{rows} embedding rows: they match.",
               "Every id the tokenizer produces has its row, and every row is a real token.",
               "Nothing to do."),
        "es": ("Ids del tokenizador 0..{tokenizer_size} - 1 ({added} añadidos, {special} "
               "especiales), {rows} filas de embedding: coinciden.",
               "Cada id que produce el tokenizador tiene su fila, y cada fila es un token real.",
               "Nada que hacer."),
    },
    "sizes.config_vs_matrix": {
        "en": ("{where} = {config}, but {embedding} has {rows} rows.",
               "Loaders build the model from the config, then refuse the stored matrix (size "
               "mismatch) or leave rows uninitialised.",
               "Set {where} to {rows} in config.json."),
        "es": ("{where} = {config}, pero {embedding} tiene {rows} filas.",
               "Los cargadores construyen el modelo según la configuración y luego rechazan la "
               "matriz guardada (tamaños distintos) o dejan filas sin inicializar.",
               "Pon {where} a {rows} en config.json."),
    },
    "sizes.head_vs_embedding": {
        "en": ("The head {head} has {head_rows} rows, the embedding {rows}.",
               "The model scores other ids than it can read: some predicted ids have no "
               "embedding, or some tokens can never be predicted.",
               "Resize both to the tokenizer's size: model.resize_token_embeddings(len(tok))."),
        "es": ("La cabeza {head} tiene {head_rows} filas y el embedding {rows}.",
               "El modelo puntúa otros ids que los que puede leer: algunos ids predichos no "
               "tienen embedding, o algunos tokens nunca se pueden predecir.",
               "Ajusta ambas al tamaño del tokenizador: model.resize_token_embeddings(len(tok))."),
    },
    "sizes.no_tokenizer": {
        "en": ("No tokenizer was read ({note}); only the {rows} matrix rows were checked.",
               "Without the tokenizer, ids beyond the matrix and padding rows cannot be told "
               "apart.",
               "Give it: --tokenizer PATH (tokenizer.json, vocab.json or vocab.txt)."),
        "es": ("No se leyó ningún tokenizador ({note}); solo se comprobaron las {rows} filas "
               "de la matriz.",
               "Sin el tokenizador no se distinguen los ids que se salen de la matriz ni las "
               "filas de relleno.",
               "Indícalo: --tokenizer RUTA (tokenizer.json, vocab.json o vocab.txt)."),
    },
    "sizes.ids_beyond_matrix": {
        "en": ("The tokenizer produces ids up to {tokenizer_size} - 1 but the embedding has "
               "{rows} rows: {count} ids have no row ({tokens}).",
               "Looking one of these ids up fails (an index error; on a GPU a device-side "
               "assert), typically on the first text that contains an added token.",
               "model.resize_token_embeddings(len(tokenizer)) (it resizes a tied head with "
               "it), then train or fine-tune the new rows."),
        "es": ("El tokenizador produce ids hasta {tokenizer_size} - 1 pero el embedding tiene "
               "{rows} filas: {count} ids no tienen fila ({tokens}).",
               "Consultar uno de esos ids falla (un error de índice; en una GPU, un "
               "device-side assert), normalmente con el primer texto que tenga un token "
               "añadido.",
               "model.resize_token_embeddings(len(tokenizer)) (ajusta también una cabeza "
               "atada) y después entrena o haz ajuste fino de las filas nuevas."),
    },
    "sizes.padding_zero": {
        "en": ("Rows {first}..{last} ({padding}) are padding beyond the tokenizer's "
               "{tokenizer_size} ids, and untouched: all zero.",
               "Padding rounds the matrix up for fast kernels and is never looked up; but the "
               "head still scores those ids (logit 0), so sampling can pick one the tokenizer "
               "cannot decode.",
               "Mask logits of ids >= {tokenizer_size} when generating, or resize to the "
               "tokenizer."),
        "es": ("Las filas {first}..{last} ({padding}) son relleno más allá de los "
               "{tokenizer_size} ids del tokenizador, y están intactas: todo ceros.",
               "El relleno redondea la matriz para que los núcleos sean rápidos y nunca se "
               "consulta; pero la cabeza sigue puntuando esos ids (logit 0), así que el "
               "muestreo puede elegir uno que el tokenizador no sabe decodificar.",
               "Enmascara los logits de los ids >= {tokenizer_size} al generar, o ajusta el "
               "tamaño al del tokenizador."),
    },
    "sizes.padding_equal": {
        "en": ("Rows {first}..{last} ({padding}) are padding beyond the tokenizer's "
               "{tokenizer_size} ids, and untouched: all equal.",
               "Padding is never looked up; but the head still scores those ids, so sampling "
               "can pick one the tokenizer cannot decode.",
               "Mask logits of ids >= {tokenizer_size} when generating, or resize to the "
               "tokenizer."),
        "es": ("Las filas {first}..{last} ({padding}) son relleno más allá de los "
               "{tokenizer_size} ids del tokenizador, y están intactas: todas iguales.",
               "El relleno nunca se consulta; pero la cabeza sigue puntuando esos ids, así que "
               "el muestreo puede elegir uno que el tokenizador no sabe decodificar.",
               "Enmascara los logits de los ids >= {tokenizer_size} al generar, o ajusta el "
               "tamaño al del tokenizador."),
    },
    "sizes.padding_small": {
        "en": ("Rows {first}..{last} ({padding}) are padding beyond the tokenizer's "
               "{tokenizer_size} ids; their median norm {padding_median_norm} is far below "
               "the used rows' {used_median_norm}: never trained.",
               "Padding is never looked up; the head still scores those ids, so sampling can "
               "pick one the tokenizer cannot decode.",
               "Mask logits of ids >= {tokenizer_size} when generating, or resize to the "
               "tokenizer."),
        "es": ("Las filas {first}..{last} ({padding}) son relleno más allá de los "
               "{tokenizer_size} ids del tokenizador; su norma mediana {padding_median_norm} "
               "está muy por debajo de la de las filas usadas ({used_median_norm}): nunca se "
               "entrenaron.",
               "El relleno nunca se consulta; la cabeza sigue puntuando esos ids, así que el "
               "muestreo puede elegir uno que el tokenizador no sabe decodificar.",
               "Enmascara los logits de los ids >= {tokenizer_size} al generar, o ajusta el "
               "tamaño al del tokenizador."),
    },
    "sizes.padding_like_used": {
        "en": ("Rows {first}..{last} ({padding}) are padding beyond the tokenizer's "
               "{tokenizer_size} ids; they look like the used rows (median norm "
               "{padding_median_norm} vs {used_median_norm}).",
               "Padding is never looked up; rows like the used ones were initialised like them "
               "(or, in a tied model, moved by the head). The head still scores those ids.",
               "Mask logits of ids >= {tokenizer_size} when generating, or resize to the "
               "tokenizer."),
        "es": ("Las filas {first}..{last} ({padding}) son relleno más allá de los "
               "{tokenizer_size} ids del tokenizador; se parecen a las filas usadas (norma "
               "mediana {padding_median_norm} frente a {used_median_norm}).",
               "El relleno nunca se consulta; unas filas así se inicializaron como las demás "
               "(o, con pesos atados, las movió la cabeza). La cabeza sigue puntuando esos ids.",
               "Enmascara los logits de los ids >= {tokenizer_size} al generar, o ajusta el "
               "tamaño al del tokenizador."),
    },
    # ----------------------------------------------------------------------- rows
    "rows.none": {
        "en": ("No row of the {rows} stands out: none is zero, duplicated or far smaller "
               "than the others.",
               "Rows that training never reached look different from the rest; none does.",
               "Nothing to do."),
        "es": ("Ninguna de las {rows} filas destaca: ninguna es cero, está repetida o es mucho "
               "más pequeña que las demás.",
               "Las filas a las que nunca llegó el entrenamiento se ven distintas del resto; "
               "ninguna lo es.",
               "Nada que hacer."),
    },
    "rows.tied": {
        "en": ("{count} of {rows} rows look under-trained ({zero} zero, {duplicate} exact "
               "duplicates, {small} with a norm far below the median {median_norm}): {tokens}.",
               "Their tokens (almost) never appeared in the training text, so the lookup never "
               "updated them; in a tied model they learned only through the head, which at "
               "every step pushes their scores down. Such tokens give garbage when they do "
               "appear, and can destabilise generation.",
               "Re-initialise them (e.g. to the mean row), exclude them from the tokenizer, or "
               "train on text that contains them."),
        "es": ("{count} de {rows} filas parecen poco entrenadas ({zero} en cero, {duplicate} "
               "repetidas exactamente, {small} con una norma muy por debajo de la mediana "
               "{median_norm}): {tokens}.",
               "Sus tokens (casi) nunca aparecieron en el texto de entrenamiento, así que la "
               "consulta nunca las actualizó; con pesos atados solo aprendieron a través de la "
               "cabeza, que en cada paso de entrenamiento empuja sus puntuaciones hacia abajo. "
               "Cuando esos tokens aparecen dan basura y pueden desestabilizar la generación.",
               "Reinicialízalas (p. ej. con la fila media), quítalas del tokenizador o entrena "
               "con texto que las contenga."),
    },
    "rows.untied": {
        "en": ("{count} of {rows} rows look under-trained ({zero} zero, {duplicate} exact "
               "duplicates, {small} with a norm far below the median {median_norm}): {tokens}.",
               "Their tokens (almost) never appeared in the training text, so the lookup never "
               "updated these rows: the model reads noise when they appear.",
               "Re-initialise them (e.g. to the mean row), exclude them from the tokenizer, or "
               "train on text that contains them."),
        "es": ("{count} de {rows} filas parecen poco entrenadas ({zero} en cero, {duplicate} "
               "repetidas exactamente, {small} con una norma muy por debajo de la mediana "
               "{median_norm}): {tokens}.",
               "Sus tokens (casi) nunca aparecieron en el texto de entrenamiento, así que la "
               "consulta nunca actualizó esas filas: el modelo lee ruido cuando aparecen.",
               "Reinicialízalas (p. ej. con la fila media), quítalas del tokenizador o entrena "
               "con texto que las contenga."),
    },
    # ----------------------------------------------------------------------- reachability
    "reach.all": {
        "en": ("{reachable} of {checked} rows of {matrix} checked ({method}) can be the argmax: "
               "a hidden state that makes each one win was found or proved to exist{lp}.",
               "A token whose row lies inside the convex hull of the others can never be the "
               "most likely prediction, whatever the model computes.",
               "Nothing to do."),
        "es": ("{reachable} de {checked} filas de {matrix} comprobadas ({method}) pueden ser "
               "el argmax: se encontró, o se demostró que existe, un estado oculto con el que "
               "cada una gana{lp}.",
               "Un token cuya fila está dentro de la envolvente convexa de las demás nunca "
               "puede ser la predicción más probable, calcule lo que calcule el modelo.",
               "Nada que hacer."),
    },
    "reach.all_but_padding": {
        "en": ("{reachable} of {checked} rows of {matrix} checked ({method}) can be the argmax{lp}; "
               "the rest are padding ({padding}), never meant to be predicted.",
               "A token whose row lies inside the convex hull of the others can never be the "
               "most likely prediction; for the padding token that is as it should be.",
               "Nothing to do."),
        "es": ("{reachable} de {checked} filas de {matrix} comprobadas ({method}) pueden ser el "
               "argmax{lp}; el resto es relleno ({padding}), que nunca debe predecirse.",
               "Un token cuya fila está dentro de la envolvente convexa de las demás nunca "
               "puede ser la predicción más probable; para el token de relleno es lo correcto.",
               "Nada que hacer."),
    },
    "reach.unreachable": {
        "en": ("{count} tokens can never be the argmax (proved by linear programming): "
               "{tokens}. E.g. row {example} = {mix}.",
               "Its row is a weighted average of other rows, so for every hidden state one of "
               "those scores at least as high: greedy decoding can never emit the token "
               "(\"stolen probability\"). Biases are ignored.",
               "Move the row out of the hull: re-initialise it and train on text that contains "
               "the token, or give the head a bias."),
        "es": ("{count} tokens nunca pueden ser el argmax (demostrado por programación "
               "lineal): {tokens}. P. ej. la fila {example} = {mix}.",
               "Su fila es una media ponderada de otras filas, así que con cualquier estado "
               "oculto alguna de ellas puntúa al menos igual: la decodificación voraz nunca "
               "emite ese token (\"probabilidad robada\"). Se ignoran los sesgos.",
               "Saca la fila de la envolvente: reinicialízala y entrena con texto que contenga "
               "el token, o dale un sesgo a la cabeza."),
    },
    "reach.undecided": {
        "en": ("{undecided} rows of {checked} checked ({method}) have no witness and were not "
               "decided{lp}: {tokens}.",
               "They may lie inside the convex hull of the others (then they can never be "
               "predicted); the doctor claims that only when it can prove it.",
               "Install scipy (pip install 'minimodel[doctor]') for the exact test."),
        "es": ("{undecided} de las {checked} filas comprobadas ({method}) no tienen testigo y "
               "quedaron sin decidir{lp}: {tokens}.",
               "Puede que estén dentro de la envolvente convexa de las demás (y entonces nunca "
               "se predicen); el doctor solo lo afirma cuando lo puede demostrar.",
               "Instala scipy (pip install 'minimodel[doctor]') para la prueba exacta."),
    },
    # ----------------------------------------------------------------------- training state
    "optimizer.once": {
        "en": ("The optimizer holds {entries} entry(ies) of shape {shape}, one per such matrix "
               "of the model ({matrices}); weight decay {decays}, applied once per step.",
               "Each parameter is updated once per step, at the learning rate you chose.",
               "Nothing to do."),
        "es": ("El optimizador guarda {entries} entrada(s) de forma {shape}, una por cada "
               "matriz así del modelo ({matrices}); decaimiento de pesos {decays}, aplicado una "
               "vez por paso.",
               "Cada parámetro se actualiza una vez por paso, con la tasa de aprendizaje "
               "elegida.",
               "Nada que hacer."),
    },
    "optimizer.twice": {
        "en": ("The optimizer holds {entries} entries of shape {shape} but the model has "
               "{matrices} such matrix ({repeated} indices listed twice); weight decay "
               "{decays}.",
               "The tied matrix is updated once per entry: twice the learning rate and twice "
               "the weight decay on E (the break tied-updated-twice).",
               "Build the optimizer from model.parameters(), which lists a tied matrix once, "
               "and resume from a checkpoint saved before the duplication."),
        "es": ("El optimizador guarda {entries} entradas de forma {shape} pero el modelo tiene "
               "{matrices} matriz así ({repeated} índices repetidos); decaimiento de pesos "
               "{decays}.",
               "La matriz atada se actualiza una vez por entrada: el doble de tasa de "
               "aprendizaje y el doble de decaimiento de pesos sobre E (la avería "
               "tied-updated-twice).",
               "Construye el optimizador con model.parameters(), que lista una matriz atada una "
               "vez, y reanuda desde un punto de control anterior al duplicado."),
    },
    "ledger.shares": {
        "en": ("One batch ({batch}): the lookup gives {all_share} of E's gradient; "
               "{frequent_share} for the {frequent_rows} most frequent tokens, {seen_share} "
               "for the {seen_rows} rarer seen ones, {unseen_share} for the {unseen_rows} "
               "unseen (the head gives the rest; paths sum to the tied gradient within "
               "{error}).",
               "Rare tokens' rows learn almost only through the head: with a tie, the output "
               "layer trains the inputs of tokens the model seldom reads.",
               "Nothing to do; this is what the tie does."),
        "es": ("Un lote ({batch}): la consulta aporta {all_share} del gradiente de E; "
               "{frequent_share} en los {frequent_rows} tokens más frecuentes, {seen_share} en "
               "los {seen_rows} vistos menos frecuentes, {unseen_share} en los {unseen_rows} "
               "no vistos (el resto viene de la cabeza; las dos vías suman el gradiente atado "
               "con error {error}).",
               "Las filas de los tokens poco frecuentes aprenden casi solo a través de la "
               "cabeza: con la atadura, la capa de salida entrena las entradas de los tokens "
               "que el modelo casi nunca lee.",
               "Nada que hacer; esto es lo que hace la atadura."),
    },
    "ledger.sum_mismatch": {
        "en": ("The lookup and head paths do not add up to E's gradient (error {error}).",
               "The tie is not one object: the lookup and the head use two matrices.",
               "Tie with TiedHead(embedding), never with a copy."),
        "es": ("Las vías de la consulta y de la cabeza no suman el gradiente de E (error "
               "{error}).",
               "La atadura no es un solo objeto: la consulta y la cabeza usan dos matrices.",
               "Ata con TiedHead(embedding), nunca con una copia."),
    },
    "ledger.not_tied_gpt": {
        "en": ("The ledger is for a tied GPT; this run is a {model} without a tie to split.",
               "With no tie, E gets only the lookup's gradient.", "-"),
        "es": ("Las cuentas son para un GPT con pesos atados; esta ejecución es un {model} sin "
               "atadura que repartir.",
               "Sin atadura, E solo recibe el gradiente de la consulta.", "-"),
    },
    "ledger.no_corpus": {
        "en": ("The run's corpus could not be read ({why}).",
               "The ledger needs one batch of the training text.",
               "Put the corpus back where the run found it."),
        "es": ("No se pudo leer el corpus de la ejecución ({why}).",
               "Las cuentas necesitan un lote del texto de entrenamiento.",
               "Vuelve a poner el corpus donde lo encontró la ejecución."),
    },
}


# Short words a finding's values carry (a Phrase), said in the report's language.
PHRASES = {
    "all rows": {"en": "all rows", "es": "todas las filas"},
    "sampled": {"en": "sampled: the rows nearest the centre and the flagged ones",
                "es": "muestreo: las filas más cercanas al centro y las señaladas"},
    "no scipy": {"en": " (scipy is not installed: no linear programme)",
                 "es": " (scipy no está instalado: sin programación lineal)"},
    "": {"en": "", "es": ""},
}


class Phrase(str):
    """A value that is a phrase of :data:`PHRASES`, translated when the text is filled in."""


def words(key: str, values: dict[str, Any], lang: str) -> tuple[str, str, str]:
    """(found, why, fix) of text ``key`` in ``lang`` with ``values`` filled in."""
    filled = {k: PHRASES[v][lang] if isinstance(v, Phrase) else v for k, v in values.items()}
    found, why, fix = TEXTS[key][lang]
    return found.format(**filled), why.format(**filled), fix.format(**filled)
