"""Invariants behind `mask-never-learned`: the MLM loss is scored on the chosen targets
only (BERT: ~15 % of the positions), and every corrupted position is one of them.

``mask_tokens`` returns (inputs, labels); the invariants read both against the original ids,
for random shapes, vocabularies, masking rates and special tokens, and every check runs on
both ranks mask_tokens accepts: one (N, T) batch, and the same number of rows each masked on
its own as 1-D ids (T,):

* labels are -100 except at the targets, where they hold the original id;
* a position whose input was changed is a target; a non-target keeps its input;
* of the targets about 80 % show [MASK], 10 % a random token and 10 % their own token;
* every row with an ordinary token has at least one target; specials never get a label.

Every check calls mask_tokens the ways the library's callers do: ``rng`` as an int seed and
as a ``np.random.Generator`` (the trainer and the experiment pass a Generator, one per run,
reused call after call), ids as an array and as a plain list. One more check replays the
experiment's own call (its V, T and batch, [MASK] the last id, no other special token, the
default mask_prob, one Generator for every batch), so a fix that holds only for some seed
type, id type or configuration fails.

Everything is drawn afresh on every run (``checks.seed``). Run by `minimodel break check`;
`break run` reads the same checks.
"""

import numpy as np

from minimodel_break_harness import (WIDE_VOCAB, CheckFailed, Checks, array_equal, es_num,
                                     use_workspace)

mm = use_workspace()
from minimodel.data import mask_tokens  # noqa: E402

checks = Checks()
rng = np.random.default_rng(checks.seed)
PAD, MASK = 0, 1
IGNORE = -100


def corpus(n: int, T: int, V: int) -> np.ndarray:
    """Ordinary ids 2..V-1 with a few [PAD] runs at row ends (specials must stay unlabelled)."""
    ids = rng.integers(2, V, size=(n, T))
    pad_from = rng.integers(T // 2, T + 1, size=n)
    ids[np.arange(T)[None, :] >= pad_from[:, None]] = PAD
    ids[0, :] = PAD  # one row with nothing to predict
    return ids


RANKS = ("2-D", "1-D")  # one (N, T) call, or N calls on (T,) rows
SEEDS = ("Generator", "int")  # what ``rng`` is: the trainer's Generator, or a seed
# (rank, seed kind, wide vocabulary?) of the big cases: both ranks with both kinds of rng and
# a small V, and a V >= 1024 (the main job's vocabularies) with a rank and kind drawn, so a fix
# that holds only for one rank, one kind of rng or small (or large) V fails.
CASES = tuple((rank, seed, False) for rank in RANKS for seed in SEEDS) + (
    (RANKS[int(rng.integers(2))], SEEDS[int(rng.integers(2))], True),)


def generator_or_seed(seed: str):
    """A fresh ``np.random.Generator``, or an int seed, drawn from the run's rng."""
    drawn = int(rng.integers(1 << 30))
    return np.random.default_rng(drawn) if seed == "Generator" else drawn


def mask(ids, V: int, p: float, source) -> tuple[np.ndarray, np.ndarray]:
    """mask_tokens on ``ids`` (1-D or 2-D, array or list); (inputs, labels) as arrays."""
    inputs, labels = mask_tokens(ids, MASK, V, rng=source, mask_prob=p, special_ids=(PAD,))
    return np.asarray(inputs), np.asarray(labels)


def masked(n: int, T: int, V: int, p: float, rank: str = "2-D", seed: str = "int"):
    """(ids, inputs, labels), each (n, T): one 2-D call, or every row masked as 1-D ids.
    A Generator is made once and reused for every row, as the trainer does; a seed is drawn
    afresh per call. Every other 1-D row goes in as a list, as a tokenizer returns it."""
    ids = corpus(n, T, V)
    source = generator_or_seed(seed)
    if rank == "2-D":
        return (ids,) + mask(ids, V, p, source)
    rows = [mask(row.tolist() if i % 2 else row, V, p,
                 source if seed == "Generator" else generator_or_seed(seed))
            for i, row in enumerate(ids)]  # n pairs of (T,) arrays
    return ids, np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])


def big_case(rank: str, seed: str, wide: bool = False):
    V, T = int(rng.integers(20, 300)), int(rng.integers(8, 33))
    V = int(rng.integers(WIDE_VOCAB, 3000)) if wide else V
    p = float(rng.uniform(0.1, 0.3))
    rows = 12000 if rank == "2-D" else 3000  # 1-D: one call per row
    return (V, T, p) + masked(max(rows // T, 100), T, V, p, rank, seed)


@checks.case("labels-only-at-targets",
             "labels are -100 except at the targets, where they hold the original id; targets "
             "are about mask_prob of the ordinary positions (random V, T, mask_prob, V >= 1024 "
             "too; 1-D and 2-D ids)",
             "las etiquetas valen -100 salvo en los objetivos, donde guardan el id original; los "
             "objetivos suponen en torno a una fracción mask_prob de las posiciones "
             "ordinarias (V, T y mask_prob aleatorios, también V >= 1024; ids 1-D y 2-D)")
def _():
    for rank, seed, wide in CASES:
        labels_only_at_targets(f"{rank}, rng {seed}", *big_case(rank, seed, wide))


def labels_only_at_targets(rank, V, T, p, ids, inputs, labels, specials=(PAD,)):
    rank = f"{rank}, V={V}"
    scored = labels != IGNORE
    if not array_equal(labels[scored], ids[scored]):
        raise CheckFailed(f"{rank}: a label differs from the original token",
                          f"{rank}: una etiqueta difiere del token original")
    ordinary = ~np.isin(ids, specials)
    share = float(scored[ordinary].mean())
    # rows with no target by chance get one promoted: at most (1-p)^k extra for a row of k
    extra = float(np.mean([(1 - p) ** max(k, 1) / max(k, 1) for k in ordinary.sum(1) if k]))
    spread = 6 * np.sqrt(p * (1 - p) / ordinary.sum()) + 0.01
    if not p - spread < share < p + extra + spread:
        raise CheckFailed(f"{rank}: {share:.1%} of the ordinary positions carry a label; "
                          f"mask_prob={p:.2f}",
                          f"{rank}: el {es_num(share, '.1%')} de las posiciones ordinarias "
                          f"lleva etiqueta; mask_prob={es_num(p, '.2f')}")


@checks.case("changed-means-target",
             "every position whose input was changed is a target, and every other position "
             "keeps its input and has label -100 (1-D and 2-D ids; V >= 1024 too)",
             "toda posición cuya entrada cambió es un objetivo, y las demás conservan su entrada "
             "y tienen etiqueta -100 (ids 1-D y 2-D; también V >= 1024)")
def _():
    for rank, seed, wide in CASES:
        changed_means_target(f"{rank}, rng {seed}", *big_case(rank, seed, wide)[3:])


def changed_means_target(rank, ids, inputs, labels):
    scored, changed = labels != IGNORE, inputs != ids
    if (changed & ~scored).any():
        r, c = np.argwhere(changed & ~scored)[0]
        raise CheckFailed(f"{rank}: row {r}, position {c}: input changed from {ids[r, c]} to "
                          f"{inputs[r, c]} but the label is -100 (the model is never told)",
                          f"{rank}: fila {r}, posición {c}: la entrada cambió de {ids[r, c]} a "
                          f"{inputs[r, c]} pero la etiqueta es -100 (nadie se lo dice al modelo)")
    unchanged_scored = float((scored & ~changed).sum()) / max(int(scored.sum()), 1)
    if unchanged_scored > 0.25:
        raise CheckFailed(f"{rank}: {unchanged_scored:.0%} of the labelled positions show their "
                          "answer unchanged in the input (BERT: about 10%)",
                          f"{rank}: el {es_num(unchanged_scored, '.0%')} de las posiciones "
                          "etiquetadas muestra su respuesta sin cambiar en la entrada (BERT: "
                          "cerca del 10 %)")


@checks.case("split-80-10-10",
             "of the targets about 80% show [MASK], 10% a random token and 10% their own token "
             "(1-D and 2-D ids; V >= 1024 too)",
             "de los objetivos, en torno al 80 % muestra [MASK], el 10 % un token aleatorio y el "
             "10 % su propio token (ids 1-D y 2-D; también V >= 1024)")
def _():
    for rank, seed, wide in CASES:
        V, _, _, ids, inputs, labels = big_case(rank, seed, wide)
        split_80_10_10(f"{rank}, rng {seed}", V, ids, inputs, labels)


def split_80_10_10(rank, V, ids, inputs, labels, mask_id=MASK, specials=2):
    """``specials``: how many ids are never a random replacement ([MASK] and the others)."""
    rank = f"{rank}, V={V}"
    scored = labels != IGNORE
    n = int(scored.sum())
    shares = {"[MASK]": float((inputs[scored] == mask_id).mean()),
              "random": float(((inputs != ids) & (inputs != mask_id))[scored].mean()),
              "kept": float((inputs == ids)[scored].mean())}
    same_by_chance = 0.1 / (V - specials)  # a random replacement can draw the original id
    want = {"[MASK]": 0.8, "random": 0.1 - same_by_chance, "kept": 0.1 + same_by_chance}
    for name, share in shares.items():
        spread = 6 * np.sqrt(want[name] * (1 - want[name]) / max(n, 1))
        if abs(share - want[name]) > spread:
            raise CheckFailed(f"{rank}, {name}: {share:.1%} of the {n} labelled positions, "
                              f"expected {want[name]:.1%}",
                              f"{rank}, {name}: {es_num(share, '.1%')} de las {n} posiciones "
                              f"etiquetadas, se esperaba {es_num(want[name], '.1%')}")


@checks.case("targets-per-row",
             "with a low mask_prob and short rows (1-D and 2-D ids), every row with an ordinary "
             "token still has a target and [PAD] is never labelled",
             "con mask_prob baja y filas cortas (ids 1-D y 2-D), toda fila con un token "
             "ordinario tiene un objetivo y [PAD] nunca lleva etiqueta")
def _():
    V, T = int(rng.integers(5, 50)), int(rng.integers(2, 7))
    p = float(rng.uniform(0.01, 0.05))
    for what, seed in ((rank, seed) for rank in RANKS for seed in SEEDS):
        x, _, lab = masked(150, T, V, p, what, seed)
        what = f"{what}, rng {seed}"
        has_ordinary = (x != PAD).any(axis=1)
        targets = (lab != IGNORE).sum(axis=1)
        if (targets[has_ordinary] < 1).any():
            raise CheckFailed(f"{what}: {int((targets[has_ordinary] < 1).sum())} row(s) with "
                              "ordinary tokens have no target",
                              f"{what}: {int((targets[has_ordinary] < 1).sum())} fila(s) con "
                              "tokens ordinarios no tienen objetivo")
        if (lab[x == PAD] != IGNORE).any():
            raise CheckFailed(f"{what}: [PAD] positions carry labels", f"{what}: posiciones "
                              "[PAD] llevan etiqueta")


# The experiment's own call: V = 62 characters plus [MASK] as the last id, batches of 16 rows
# of 16, no other special token, the default mask_prob, one Generator reused for every batch.
EXPERIMENT_V, EXPERIMENT_T, EXPERIMENT_B, EXPERIMENT_BATCHES = 63, 16, 16, 120


@checks.case("experiment-configuration",
             "the experiment's own call (V = 63 with [MASK] the last id, 16 x 16 batches, no "
             "other special token, default mask_prob, one Generator for every batch): labels "
             "only at the targets, changed inputs only there, the 80/10/10 split",
             "la llamada del propio experimento (V = 63 con [MASK] como último id, lotes de "
             "16 x 16, ningún otro token especial, mask_prob por defecto, un Generator para "
             "todos los lotes): etiquetas solo en los objetivos, entradas cambiadas solo allí, "
             "el reparto 80/10/10")
def _():
    V, T, mask_id = EXPERIMENT_V, EXPERIMENT_T, EXPERIMENT_V - 1
    source = generator_or_seed("Generator")
    ids = rng.integers(0, mask_id, size=(EXPERIMENT_BATCHES, EXPERIMENT_B, T))
    pairs = [mask_tokens(batch, mask_id, V, rng=source) for batch in ids]
    inputs = np.concatenate([np.asarray(pair[0]) for pair in pairs])  # (batches * B, T)
    labels = np.concatenate([np.asarray(pair[1]) for pair in pairs])
    ids = ids.reshape(-1, T)
    what = "experiment's call"
    labels_only_at_targets(what, V, T, 0.15, ids, inputs, labels, specials=(mask_id,))
    changed_means_target(what, ids, inputs, labels)
    split_80_10_10(what, V, ids, inputs, labels, mask_id=mask_id, specials=1)


if __name__ == "__main__":
    checks.finish()
