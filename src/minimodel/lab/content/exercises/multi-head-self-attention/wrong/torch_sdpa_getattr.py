"""Forbidden, disguised: the name is assembled at run time, so only the tripwire sees it."""

import torch

FRAMEWORK = "torch"


def multi_head_attention(x, w_q, w_k, w_v, w_o, num_heads):
    N, T, d = x.shape
    attend = getattr(torch.nn.functional, "scaled_" + "dot_product_attention")
    q, k, v = (t.view(N, T, num_heads, -1).transpose(1, 2) for t in (x @ w_q, x @ w_k, x @ w_v))
    try:
        ctx = attend(q, k, v)
    except Exception:  # trying to hide the refusal does not help: it is not an Exception
        ctx = v
    return ctx.transpose(1, 2).reshape(N, T, d) @ w_o
