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
# (rank, wide vocabulary?) of the big cases: both ranks with a small V, and a V >= 1024 (the
# main job's vocabularies), so a fix that holds only for small (or large) V fails.
CASES = (("2-D", False), ("1-D", False), (RANKS[int(rng.integers(2))], True))


def mask(ids: np.ndarray, V: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """mask_tokens on ``ids`` (1-D or 2-D); (inputs, labels) as arrays of its shape."""
    inputs, labels = mask_tokens(ids, MASK, V, rng=int(rng.integers(1 << 30)), mask_prob=p,
                                 special_ids=(PAD,))
    return np.asarray(inputs), np.asarray(labels)


def masked(n: int, T: int, V: int, p: float, rank: str = "2-D"):
    """(ids, inputs, labels), each (n, T): one 2-D call, or every row masked as 1-D ids."""
    ids = corpus(n, T, V)
    if rank == "2-D":
        return (ids,) + mask(ids, V, p)
    rows = [mask(row, V, p) for row in ids]  # n pairs of (T,) arrays
    return ids, np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])


def big_case(rank: str, wide: bool = False):
    V, T = int(rng.integers(20, 300)), int(rng.integers(8, 33))
    V = int(rng.integers(WIDE_VOCAB, 3000)) if wide else V
    p = float(rng.uniform(0.1, 0.3))
    rows = 20000 if rank == "2-D" else 6000  # 1-D: one call per row
    return (V, T, p) + masked(max(rows // T, 100), T, V, p, rank)


@checks.case("labels-only-at-targets",
             "labels are -100 except at the targets, where they hold the original id; targets "
             "are about mask_prob of the ordinary positions (random V, T, mask_prob, V >= 1024 "
             "too; 1-D and 2-D ids)",
             "las etiquetas valen -100 salvo en los objetivos, donde guardan el id original; los "
             "objetivos suponen en torno a una fracción mask_prob de las posiciones "
             "ordinarias (V, T y mask_prob aleatorios, también V >= 1024; ids 1-D y 2-D)")
def _():
    for rank, wide in CASES:
        labels_only_at_targets(rank, *big_case(rank, wide))


def labels_only_at_targets(rank, V, T, p, ids, inputs, labels):
    rank = f"{rank}, V={V}"
    scored = labels != IGNORE
    if not array_equal(labels[scored], ids[scored]):
        raise CheckFailed(f"{rank}: a label differs from the original token",
                          f"{rank}: una etiqueta difiere del token original")
    ordinary = ids != PAD
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
    for rank, wide in CASES:
        changed_means_target(rank, *big_case(rank, wide)[3:])


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
    for rank, wide in CASES:
        V, _, _, ids, inputs, labels = big_case(rank, wide)
        split_80_10_10(rank, V, ids, inputs, labels)


def split_80_10_10(rank, V, ids, inputs, labels):
    rank = f"{rank}, V={V}"
    scored = labels != IGNORE
    n = int(scored.sum())
    shares = {"[MASK]": float((inputs[scored] == MASK).mean()),
              "random": float(((inputs != ids) & (inputs != MASK))[scored].mean()),
              "kept": float((inputs == ids)[scored].mean())}
    same_by_chance = 0.1 / (V - 2)  # a random replacement can draw the original id
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
    for what in RANKS:
        x, _, lab = masked(300, T, V, p, what)
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


if __name__ == "__main__":
    checks.finish()
