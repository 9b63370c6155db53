"""Forbidden: minimodel ships the reference of this very exercise."""

from minimodel.models.mlm_reference import mlm_forward_tied as _ref


def mlm_forward_tied(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, num_heads):
    return _ref(input_ids, mask_indicator, w_emb, pos_embed, blocks_weights, num_heads)
