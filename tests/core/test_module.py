"""nn.Module: registration, traversal, modes, state dicts, parameter counts, repr."""

from __future__ import annotations

import numpy as np
import pytest

from minimodel import Tensor, nn


class Net(nn.Module):
    """token + position embeddings, a block, final norm and an untied or tied head."""

    def __init__(self, tied: bool = False) -> None:
        super().__init__()
        rng = np.random.default_rng(0)
        self.token_emb = nn.Embedding(10, 8, rng=rng)
        self.pos_emb = nn.Embedding(4, 8, rng=rng)
        self.block = nn.Block(8, 2, rng=rng)
        self.ln_f = nn.LayerNorm(8)
        self.lm_head = nn.TiedHead(self.token_emb) if tied else nn.LMHead(8, 10, rng=rng)
        self.scale = nn.Parameter(np.ones(8, dtype=np.float32))
        self.note = "not a parameter"

    def forward(self, ids):
        T = ids.shape[1]
        h = self.token_emb(ids) + self.pos_emb(np.arange(T))
        return self.lm_head(self.ln_f(self.block(h)) * self.scale)




def block_param_count(d: int) -> int:
    attn = (d * 3 * d + 3 * d) + (d * d + d)
    mlp = (d * 4 * d + 4 * d) + (4 * d * d + d)
    return attn + mlp + 2 * (2 * d)


def test_attribute_assignment_registers_parameters_and_submodules():
    """Parameters and Modules assigned as attributes are registered; plain values are not."""
    net = Net()
    assert set(net._modules) == {"token_emb", "pos_emb", "block", "ln_f", "lm_head"}
    assert list(net._parameters) == ["scale"]
    assert net.note == "not a parameter" and "note" not in net._parameters
    names = [n for n, _ in net.named_parameters()]
    # own parameters first, then submodules in assignment order (as in PyTorch)
    assert names[:3] == ["scale", "token_emb.weight", "pos_emb.weight"]
    assert "block.attn.c_attn.weight" in names and "scale" in names
    assert net.scale is net._parameters["scale"]


def test_reassigning_an_attribute_to_a_plain_value_unregisters_it():
    """Replacing a registered Parameter by None removes it from parameters()."""
    lin = nn.Linear(3, 2)
    assert len(list(lin.parameters())) == 2
    lin.bias = None
    assert lin.bias is None and len(list(lin.parameters())) == 1
    del lin.weight
    assert list(lin.parameters()) == []


def test_misspelt_attribute_raises_attribute_error_with_suggestion():
    """A typo raises AttributeError (never returns None) and suggests the close name."""
    net = Net()
    with pytest.raises(AttributeError, match="did you mean 'token_emb'"):
        net.token_embb
    with pytest.raises(AttributeError, match="lm_haed"):
        net.lm_haed
    assert not hasattr(net, "definitely_missing")


def test_forgetting_super_init_gives_a_clear_error():
    """Assigning before super().__init__() explains the fix."""
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.ones(2))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad()


def test_repr_shows_the_submodule_tree():
    """repr lists submodules by attribute name, nested, with their sizes."""
    text = repr(Net())
    for part in ["Net(", "(token_emb): Embedding(10, 8)", "(block): Block(", "(attn):",
                 "(c_attn): Linear(in=8, out=24", "(ln_f): LayerNorm(8", "(lm_head): LMHead("]:
        assert part in text, part
    assert "tied to Embedding(10, 8)" in repr(Net(tied=True))


def test_train_and_eval_propagate_to_every_submodule():
    """eval() turns training off everywhere, train() back on; both return the module."""
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    assert net.block.attn.resid_dropout.training is False
    net.train()
    assert all(m.training for m in net.modules())


def test_dropout_depends_on_mode():
    """Dropout zeroes ~p of the values and rescales in train mode; identity in eval mode."""
    drop = nn.Dropout(0.5, rng=np.random.default_rng(0))
    x = Tensor(np.ones((100, 100), dtype=np.float32))
    y = drop(x).data
    assert set(np.unique(y)) == {0.0, 2.0}
    assert 0.45 < (y == 0).mean() < 0.55
    drop.eval()
    assert drop(x) is x


def test_zero_grad_sets_every_grad_to_none():
    """After backward every parameter has a grad; zero_grad() sets all of them to None."""
    net = Net()
    net(np.array([[1, 2, 3]])).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_num_params_total_and_non_embedding():
    """num_params counts every parameter once; non_embedding leaves out Embedding tables."""
    d, V, T = 8, 10, 4
    untied, tied = Net(), Net(tied=True)
    rest = block_param_count(d) + 2 * d + d  # block, ln_f, scale
    assert untied.num_params() == V * d + T * d + rest + V * d
    assert untied.num_params(non_embedding=True) == rest + V * d  # untied head still counts
    assert tied.num_params() == V * d + T * d + rest
    assert tied.num_params(non_embedding=True) == rest
    assert untied.num_params() == sum(p.size for p in untied.parameters())


def test_state_dict_round_trip_between_two_models():
    """load_state_dict(other.state_dict()) makes outputs identical, keeping parameter objects."""
    a, b = Net(), Net()
    for p in b.parameters():
        p.data[...] = np.random.default_rng(1).standard_normal(p.shape)
    objs = [id(p) for p in a.parameters()]
    result = a.load_state_dict({k: v.copy() for k, v in b.state_dict().items()})
    assert result == {"missing_keys": [], "unexpected_keys": []}
    assert [id(p) for p in a.parameters()] == objs
    ids = np.array([[1, 2, 3, 4]])
    np.testing.assert_array_equal(a(ids).data, b(ids).data)


def test_load_state_dict_strict_reports_missing_keys():
    """A missing key is a ValueError naming the key; nothing is loaded."""
    net = Net()
    sd = {k: v.copy() + 1 for k, v in net.state_dict().items()}
    del sd["ln_f.bias"]
    before = net.ln_f.weight.data.copy()
    with pytest.raises(ValueError, match="missing keys: ln_f.bias"):
        net.load_state_dict(sd)
    np.testing.assert_array_equal(net.ln_f.weight.data, before)


def test_load_state_dict_strict_reports_unexpected_keys():
    """An extra key is a ValueError naming the key."""
    net = Net()
    sd = dict(net.state_dict())
    sd["block.attn.c_attn.extra"] = np.zeros(3)
    with pytest.raises(ValueError, match="unexpected keys: block.attn.c_attn.extra"):
        net.load_state_dict(sd)


def test_load_state_dict_non_strict_loads_matching_keys_and_reports_the_rest():
    """strict=False loads what matches and returns the missing / unexpected names."""
    net = Net()
    sd = {"ln_f.weight": np.full(8, 3.0), "bogus": np.zeros(1)}
    result = net.load_state_dict(sd, strict=False)
    assert result["unexpected_keys"] == ["bogus"]
    assert "ln_f.bias" in result["missing_keys"] and "ln_f.weight" not in result["missing_keys"]
    np.testing.assert_array_equal(net.ln_f.weight.data, np.full(8, 3.0))


def test_load_state_dict_shape_mismatch_names_key_and_both_shapes():
    """A wrong-shaped array is a ValueError naming the key and both shapes."""
    net = Net()
    sd = dict(net.state_dict())
    sd["token_emb.weight"] = np.zeros((12, 8))
    with pytest.raises(ValueError, match=r"token_emb.weight.*\(12, 8\).*\(10, 8\)"):
        net.load_state_dict(sd)


def test_load_state_dict_untied_checkpoint_into_tied_model_with_different_matrices():
    """A real untied checkpoint (different head) refuses to load into a tied model."""
    untied, tied = Net(), Net(tied=True)
    sd = dict(untied.state_dict())
    with pytest.raises(ValueError, match="max \\|difference\\|"):
        tied.load_state_dict(sd)


def test_named_modules_and_children():
    """named_modules walks depth first with dotted names; children are the direct submodules."""
    net = Net()
    names = [n for n, _ in net.named_modules()]
    assert names[0] == "" and "block.attn.c_proj" in names and "block.mlp.c_fc" in names
    assert [type(c).__name__ for c in net.children()] == ["Embedding", "Embedding", "Block",
                                                          "LayerNorm", "LMHead"]


def test_register_buffer_is_saved_but_not_a_parameter():
    """Buffers appear in state_dict but not in parameters()."""
    lin = nn.Linear(2, 2)
    lin.register_buffer("running", np.arange(2.0))
    assert "running" in lin.state_dict()
    assert len(list(lin.parameters())) == 2
    lin.load_state_dict({**lin.state_dict(), "running": np.array([5.0, 6.0])})
    np.testing.assert_array_equal(lin.running, [5.0, 6.0])
