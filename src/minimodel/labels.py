"""The one label that marks "no target here": ``IGNORE_INDEX = -100``.

The same value as PyTorch's ``ignore_index`` and Hugging Face's labels. The data pipeline writes
it (masked-LM labels at the positions that are not predicted) and the losses skip it
(``F.cross_entropy``, ``F.linear_cross_entropy``: the mean runs over the other positions only).
A module of its own, at the bottom of the layers, so that the data package can use it without
importing the autograd engine.
"""

IGNORE_INDEX = -100
