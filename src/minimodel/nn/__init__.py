"""Neural-network building blocks. Weight tying rules: one Parameter object used by the lookup
and the head, seen once by parameters(), state_dict() and an optimizer (docs/architecture.md).

The story of a tie is told by two files: ``embedding.py`` (the lookup: gather forward,
scatter-add backward) and ``lm_head.py`` (``LMHead``, ``TiedHead``: logits = h @ E.T, and the
tied gradient as the sum of the two uses of E).
"""

from minimodel.nn.attention import KVCache, MultiHeadAttention
from minimodel.nn.block import MLP, Block
from minimodel.nn.dropout import Dropout
from minimodel.nn.embedding import Embedding
from minimodel.nn.linear import Linear
from minimodel.nn.lm_head import LMHead, OutputHead, TiedHead
from minimodel.nn.module import Module, ModuleList
from minimodel.nn.norm import LayerNorm
from minimodel.nn.parameter import Parameter, manual_seed

__all__ = ["Module", "Parameter", "Embedding", "Linear", "LayerNorm", "Dropout", "LMHead",
           "TiedHead", "OutputHead", "ModuleList", "MultiHeadAttention", "MLP", "Block",
           "KVCache", "manual_seed"]
