"""Bad inputs fail early with ValueError/TypeError whose message names the offending values,
never with a bare assert or a NumPy trace from deep inside."""

from __future__ import annotations

import numpy as np
import pytest

import minimodel.functional as F
from minimodel import Tensor, nn, ops, optim


def test_embedding_rejects_float_ids():
    """Float ids are a TypeError naming the dtype and the fix."""
    emb = nn.Embedding(10, 4)
    with pytest.raises(TypeError, match="float64"):
        emb(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="integer"):
        emb(Tensor([[0.5]]))


@pytest.mark.parametrize("bad", [10, 57, -1])
def test_embedding_rejects_out_of_range_ids_naming_id_and_vocab(bad):
    """An id outside [0, V) is a ValueError naming the id and the vocab size."""
    emb = nn.Embedding(10, 4)
    with pytest.raises(ValueError) as info:
        emb(np.array([[0, 3, bad]]))
    msg = str(info.value)
    assert str(bad) in msg and "10" in msg and "vocab" in msg


def test_cross_entropy_wrong_target_shape_names_both_shapes():
    """targets must have logits.shape[:-1]; the message gives both shapes."""
    logits = Tensor(np.zeros((2, 3, 5)))
    with pytest.raises(ValueError) as info:
        F.cross_entropy(logits, np.zeros((2, 4), dtype=np.int64))
    msg = str(info.value)
    assert "(2, 3, 5)" in msg and "(2, 4)" in msg and "(2, 3)" in msg


@pytest.mark.parametrize("bad", [5, 9, -2])
def test_cross_entropy_target_out_of_range_names_id_and_class_count(bad):
    """A target outside [0, V) (and not the ignore index) names the id and the class count."""
    logits = Tensor(np.zeros((3, 5)))
    with pytest.raises(ValueError) as info:
        F.cross_entropy(logits, np.array([0, bad, -100]))
    msg = str(info.value)
    assert str(bad) in msg and "vocabulary of size 5 (valid ids 0..4" in msg


def test_cross_entropy_rejects_float_targets():
    """Float targets are a TypeError naming the dtype."""
    with pytest.raises(TypeError, match="float"):
        F.cross_entropy(Tensor(np.zeros((2, 3))), np.array([0.0, 1.0]))


def test_matmul_shape_mismatch_names_both_shapes():
    """(2, 3) @ (4, 5) is a ValueError naming both shapes and the inner sizes."""
    with pytest.raises(ValueError) as info:
        Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5)))
    msg = str(info.value)
    assert "(2, 3)" in msg and "(4, 5)" in msg
    with pytest.raises(ValueError, match=r"\(3,\)"):
        Tensor(np.ones((2, 4))) @ Tensor(np.ones(3))


def test_impossible_reshape_names_shapes_and_sizes():
    """Reshaping 6 elements into (4, 2) names the shape, the size and the target."""
    with pytest.raises(ValueError) as info:
        Tensor(np.ones((2, 3))).reshape(4, 2)
    msg = str(info.value)
    assert "(2, 3)" in msg and "6 elements" in msg and "(4, 2)" in msg


def test_attention_d_model_not_divisible_by_heads():
    """d_model % n_heads != 0 names both numbers."""
    with pytest.raises(ValueError) as info:
        nn.MultiHeadAttention(10, 3)
    msg = str(info.value)
    assert "10" in msg and "3" in msg and "divisible" in msg
    with pytest.raises(ValueError, match="n_heads=3"):
        nn.Block(10, 3)


def test_attention_wrong_input_shape():
    """A (B, T, d') input with the wrong width names the expected and received shapes."""
    mha = nn.MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=r"\(B, T, 8\).*\(2, 3, 6\)"):
        mha(Tensor(np.ones((2, 3, 6), dtype=np.float32)))


def test_linear_wrong_input_width():
    """Linear(5, 3) on a (..., 4) input names the expected width and the input shape."""
    lin = nn.Linear(5, 3)
    with pytest.raises(ValueError) as info:
        lin(Tensor(np.ones((2, 4), dtype=np.float32)))
    msg = str(info.value)
    assert "5" in msg and "(2, 4)" in msg


def test_layer_norm_and_heads_wrong_width():
    """LayerNorm, LMHead and TiedHead check the last axis too."""
    x = Tensor(np.ones((2, 3), dtype=np.float32))
    for layer in (nn.LayerNorm(4), nn.LMHead(4, 7), nn.TiedHead(nn.Embedding(7, 4))):
        with pytest.raises(ValueError, match=r"size 4.*\(2, 3\)"):
            layer(x)


def test_layer_size_arguments_are_validated():
    """Non-positive sizes and a TiedHead over a non-Embedding are rejected clearly."""
    with pytest.raises(ValueError, match="vocab_size must be a positive integer, got 0"):
        nn.Embedding(0, 4)
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(-1, 3)
    with pytest.raises(TypeError, match="Embedding"):
        nn.TiedHead(nn.Linear(4, 7))


def test_functional_layer_norm_affine_shapes_and_weight_alone():
    """weight and bias are each optional and must have shape (d,)."""
    x = Tensor(np.arange(8.0).reshape(2, 4))
    x_hat = F.layer_norm(x, 1e-5).data
    np.testing.assert_allclose(F.layer_norm(x, 1e-5, Tensor(np.full(4, 2.0))).data, 2 * x_hat)
    np.testing.assert_allclose(F.layer_norm(x, 1e-5, bias=Tensor(np.ones(4))).data, x_hat + 1)
    with pytest.raises(ValueError, match=r"weight of shape \(4,\), got \(3,\)"):
        F.layer_norm(x, 1e-5, Tensor(np.ones(3)), Tensor(np.ones(3)))
    with pytest.raises(ValueError, match=r"bias of shape \(4,\), got \(5,\)"):
        F.layer_norm(x, 1e-5, None, Tensor(np.ones(5)))


def test_shape_op_errors():
    """Bad transpose axes, split sizes, stack shapes and indexes name the values involved."""
    x = Tensor(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"\(0, 0\)"):
        x.transpose(0, 0)
    with pytest.raises(ValueError, match="size 3 into 2"):
        F.split(x, 2, axis=1)
    with pytest.raises(ValueError, match=r"\[1, 1\].*3"):
        F.split(x, [1, 1], axis=1)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(3, 2\)|\(3, 2\).*\(2, 3\)"):
        F.stack([x, x.T])
    with pytest.raises(IndexError, match=r"\(2, 3\)"):
        x[5]
    with pytest.raises(ValueError, match="axis 2"):
        x.sum(axis=2)


def test_optimizer_argument_errors():
    """Empty parameter lists, frozen tensors and negative hyper-parameters are refused."""
    p = nn.Parameter(np.ones(2))
    with pytest.raises(ValueError, match="empty"):
        optim.AdamW([])
    with pytest.raises(TypeError, match="requires_grad"):
        optim.SGD([Tensor(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="lr=-1"):
        optim.AdamW([p], lr=-1)
    with pytest.raises(ValueError, match="betas"):
        optim.AdamW([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="momentum"):
        optim.SGD([p], lr=0.1, momentum=-0.5)
    with pytest.raises(ValueError, match="unknown options"):
        optim.SGD([{"params": [p], "lrr": 0.1}], lr=0.1)


def test_tensor_construction_errors():
    """Non-numeric data and tensor exponents give TypeErrors with a hint."""
    with pytest.raises(TypeError, match="numbers"):
        Tensor([1.0, "a", None])
    with pytest.raises(TypeError, match="exp"):
        Tensor(np.ones(2)) ** Tensor(np.ones(2))


def test_elementwise_and_batched_matmul_shape_errors_are_ours():
    """Non-broadcasting shapes fail with minimodel's message naming both shapes."""
    import numpy as np
    import pytest

    import minimodel as mm

    a, b = mm.Tensor(np.ones((2, 3))), mm.Tensor(np.ones((4,)))
    for op in (lambda: a + b, lambda: a - b, lambda: a * b, lambda: a / b):
        with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\) do not broadcast"):
            op()
    with pytest.raises(ValueError, match=r"batch axes \(2,\) and \(3,\)"):
        mm.Tensor(np.ones((2, 4, 5))) @ mm.Tensor(np.ones((3, 5, 6)))


def test_tied_head_weight_cannot_be_reassigned():
    import pytest

    from minimodel import nn

    head = nn.TiedHead(nn.Embedding(5, 3))
    with pytest.raises(AttributeError, match="assign embedding.weight instead"):
        head.weight = nn.Parameter([[0.0] * 3] * 5)
