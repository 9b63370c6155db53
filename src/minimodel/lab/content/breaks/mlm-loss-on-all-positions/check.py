"""Checks for `mlm-loss-on-all-positions`: MLM labels are -100 except at the chosen targets."""

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
from minimodel.data import mask_tokens  # noqa: E402

checks = Checks()
V, MASK, PAD = 50, 1, 0
ids = np.random.default_rng(0).integers(2, V, size=(200, 64))
inputs, labels = mask_tokens(ids, MASK, V, rng=3, special_ids=(PAD,))
scored = labels != -100


@checks.case("fraction", "about 15% of the positions carry a label",
             "alrededor del 15% de las posiciones lleva etiqueta")
def _():
    if not 0.12 < scored.mean() < 0.18:
        raise CheckFailed(f"{scored.mean():.1%} of positions are labelled",
                          f"el {scored.mean():.1%} de las posiciones tiene etiqueta")


@checks.case("ignore-elsewhere", "every position that was not chosen has label -100 and its "
             "input unchanged", "toda posición no elegida tiene etiqueta -100 y su entrada intacta")
def _():
    changed = inputs != ids
    if (changed & ~scored).any():
        raise CheckFailed("an input was changed at a position without a label",
                          "se cambió una entrada en una posición sin etiqueta")
    if not np.array_equal(labels[scored], ids[scored]):
        raise CheckFailed("a label differs from the original token",
                          "una etiqueta difiere del token original")


@checks.case("mostly-hidden", "about 80% of the labelled positions are [MASK] in the input",
             "alrededor del 80% de las posiciones etiquetadas son [MASK] en la entrada")
def _():
    share = float((inputs[scored] == MASK).mean()) if scored.any() else 0.0
    if not 0.74 < share < 0.86:
        raise CheckFailed(f"{share:.1%} of labelled positions are [MASK]",
                          f"el {share:.1%} de las posiciones etiquetadas es [MASK]")


@checks.case("specials", "special tokens are never labelled",
             "los tokens especiales nunca llevan etiqueta")
def _():
    row = np.array([[PAD, PAD, 5, 6, 7, 8, PAD]])
    _, lab = mask_tokens(row, MASK, V, rng=4, mask_prob=1.0, special_ids=(PAD,))
    if (lab[row == PAD] != -100).any():
        raise CheckFailed(f"labels at [PAD] positions: {lab[row == PAD].tolist()}",
                          f"etiquetas en posiciones [PAD]: {lab[row == PAD].tolist()}")


checks.finish()
