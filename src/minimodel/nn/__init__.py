"""Neural-network building blocks. Weight tying rules: DESIGN.md section 3."""

from minimodel.nn.attention import MLP, Block, KVCache, MultiHeadAttention
from minimodel.nn.layers import (Dropout, Embedding, LayerNorm, Linear, LMHead, ModuleList,
                                  TiedHead)
from minimodel.nn.module import Module
from minimodel.nn.parameter import Parameter, manual_seed

__all__ = ["Module", "Parameter", "Embedding", "Linear", "LayerNorm", "Dropout", "LMHead",
           "TiedHead", "ModuleList", "MultiHeadAttention", "MLP", "Block", "KVCache", "manual_seed"]
