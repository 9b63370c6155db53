"""GPT: shapes, tying, initial loss, generation, resize, overfitting and torch parity."""

import copy
import pickle

import numpy as np
import pytest

import minimodel as mm
from minimodel.models import GPT, GPTConfig


def tiny(tie=True, **kw):
    cfg = dict(vocab_size=48, block_size=12, n_layer=2, n_head=2, d_model=16, tie_embeddings=tie)
    cfg.update(kw)
    mm.nn.manual_seed(0)
    return GPT(GPTConfig(**cfg))


def batch(V=48, B=3, T=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))


def test_forward_shapes_and_loss():
    model = tiny()
    x, y = batch()
    logits, loss = model(x, y)
    assert logits.shape == (3, 12, 48)
    assert loss.shape == ()
    assert model(x)[1] is None


def test_fresh_model_loss_close_to_ln_vocab():
    """The tied matrix is initialised as an output layer (std 0.02): loss ~ ln V at step 0."""
    model = tiny(vocab_size=512, d_model=32)
    rng = np.random.default_rng(1)
    x = rng.integers(0, 512, (4, 12))
    y = rng.integers(0, 512, (4, 12))
    _, loss = model(x, y)
    assert abs(loss.item() - np.log(512)) < 0.1


def test_tied_structure_and_counts():
    tied, untied = tiny(True), tiny(False)
    assert tied.lm_head.weight is tied.token_emb.weight
    assert untied.lm_head.weight is not untied.token_emb.weight
    assert untied.num_params() - tied.num_params() == 48 * 16
    assert "lm_head.weight" not in tied.state_dict()
    assert "lm_head.weight" in untied.state_dict()
    assert tied.tie_groups() == [["token_emb.weight", "lm_head.weight"]]
    # non-embedding count excludes token and position tables
    assert tied.num_params(non_embedding=True) == tied.num_params() - 48 * 16 - 12 * 16


def test_tied_gradient_receives_both_uses():
    model = tiny()
    x, y = batch()
    _, loss = model(x, y)
    loss.backward()
    g = model.token_emb.weight.grad
    # the head's share is dense: every row has a gradient, even ids absent from the batch
    absent = np.setdiff1d(np.arange(48), x)
    assert absent.size > 0 and np.all(np.abs(g[absent]).sum(axis=1) > 0)


def test_untied_embedding_gradient_is_row_sparse():
    model = tiny(False)
    x, y = batch()
    _, loss = model(x, y)
    loss.backward()
    rows = np.flatnonzero(np.any(model.token_emb.weight.grad != 0, axis=1))
    np.testing.assert_array_equal(rows, np.unique(x))


def test_deepcopy_and_pickle_keep_the_tie():
    model = tiny()
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert clone.lm_head.weight is clone.token_emb.weight
        x, _ = batch()
        np.testing.assert_allclose(clone(x)[0].data, model(x)[0].data)


def test_resize_keeps_tie_and_rows():
    model = tiny()
    old = model.token_emb.weight.data.copy()
    model.resize_token_embeddings(60)
    assert model.lm_head.weight is model.token_emb.weight
    assert model.token_emb.weight.shape == (60, 16)
    np.testing.assert_array_equal(model.token_emb.weight.data[:48], old)
    assert model(np.array([[59, 1]]))[0].shape == (1, 2, 60)
    untied = tiny(False)
    untied.resize_token_embeddings(50)
    assert untied.lm_head.weight.shape == (50, 16)


def test_generate_greedy_matches_argmax_of_forward():
    model = tiny()
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    out = model.generate(prompt, 4, temperature=0)
    assert out.shape == (2, 7)
    np.testing.assert_array_equal(out[:, :3], prompt)
    ids = prompt
    for _ in range(4):
        nxt = model(ids)[0].data[:, -1].argmax(-1)
        ids = np.concatenate([ids, nxt[:, None]], axis=1)
    np.testing.assert_array_equal(out, ids)


def test_a_paused_stream_leaves_the_caller_in_its_own_mode():
    """Between two streamed tokens the caller's code records graphs and the model keeps its
    training mode: eval mode and no_grad hold only while a token is computed."""
    model = tiny(dropout=0.1)
    model.blocks[0].train(False)  # a per-module mode must survive too
    stream = model.generate_stream(np.array([[1, 2, 3]]), 5, temperature=0)
    first = next(stream)
    assert mm.autograd.is_grad_enabled()
    assert model.training and not model.blocks[0].training and model.blocks[1].training
    rest = list(stream)
    assert len(rest) == 4 and first.shape == (1,)
    assert model.training and not model.blocks[0].training


def test_generate_sampling_is_seeded_and_respects_top_k():
    model = tiny()
    prompt = np.array([[1, 2]])
    a = model.generate(prompt, 6, temperature=1.0, seed=3)
    b = model.generate(prompt, 6, temperature=1.0, seed=3)
    np.testing.assert_array_equal(a, b)
    greedy = model.generate(prompt, 6, temperature=0)
    np.testing.assert_array_equal(model.generate(prompt, 6, top_k=1, seed=9), greedy)


def naive_greedy(model, ids, n):
    """Reference: full forward over the (cropped) context for every new token, no cache."""
    for _ in range(n):
        nxt = model(ids[:, -model.config.block_size:])[0].data[:, -1].argmax(-1)
        ids = np.concatenate([ids, nxt[:, None]], axis=1)
    return ids


@pytest.mark.parametrize("prompt_len", [1, 9, 12, 15])
def test_cached_generation_equals_naive_loop_across_the_block_edge(prompt_len):
    model = tiny()
    prompt = np.random.default_rng(prompt_len).integers(0, 48, (2, prompt_len))
    out = model.generate(prompt, 6, temperature=0)
    assert out.shape == (2, prompt_len + 6)
    np.testing.assert_array_equal(out, naive_greedy(model, prompt, 6))


def test_overfits_one_batch():
    model = tiny()
    x, y = batch(B=2, T=8)
    opt = mm.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(60):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.1


@pytest.mark.parametrize("bad, err", [
    (np.array([[1.0, 2.0]]), TypeError),
    (np.array([[1, 48]]), ValueError),
    (np.zeros((1, 13), dtype=np.int64), ValueError),
    (np.array([1, 2]), ValueError),
])
def test_bad_inputs(bad, err):
    with pytest.raises(err):
        tiny()(bad)


def test_config_validation_names_values():
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(10, 8, 1, 3, 16)
    with pytest.raises(ValueError, match="vocab_size"):
        GPTConfig(0, 8, 1, 2, 16)


def test_generate_argument_validation():
    model = tiny()
    with pytest.raises(ValueError, match="temperature"):
        model.generate(np.array([[1]]), 2, temperature=-1)
    with pytest.raises(ValueError, match="top_k"):
        model.generate(np.array([[1]]), 2, top_k=0)


def test_parity_with_torch():
    """Same weights in a hand-written PyTorch GPT-2 give the same logits and gradients."""
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    model = tiny(True)
    for p in model.parameters():
        p.data = p.data.astype(np.float64)
    x, y = batch()
    logits, loss = model(x, y)
    loss.backward()
    P = {n: torch.tensor(p.data, requires_grad=True) for n, p in model.named_parameters()}
    T = x.shape[1]
    h = P["token_emb.weight"][torch.tensor(x)] + P["pos_emb.weight"][:T]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for i in range(2):
        pre = f"blocks.{i}."
        a = tf.layer_norm(h, (16,), P[pre + "ln_1.weight"], P[pre + "ln_1.bias"], 1e-5)
        qkv = a @ P[pre + "attn.c_attn.weight"].T + P[pre + "attn.c_attn.bias"]
        q, k, v = (t.reshape(3, T, 2, 8).transpose(1, 2) for t in qkv.split(16, -1))
        att = (q @ k.transpose(-1, -2)) / np.sqrt(8)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        o = (att @ v).transpose(1, 2).reshape(3, T, 16)
        h = h + o @ P[pre + "attn.c_proj.weight"].T + P[pre + "attn.c_proj.bias"]
        a = tf.layer_norm(h, (16,), P[pre + "ln_2.weight"], P[pre + "ln_2.bias"], 1e-5)
        m = tf.gelu(a @ P[pre + "mlp.c_fc.weight"].T + P[pre + "mlp.c_fc.bias"], approximate="tanh")
        h = h + m @ P[pre + "mlp.c_proj.weight"].T + P[pre + "mlp.c_proj.bias"]
    h = tf.layer_norm(h, (16,), P["ln_f.weight"], P["ln_f.bias"], 1e-5)
    t_logits = h @ P["token_emb.weight"].T
    t_loss = tf.cross_entropy(t_logits.reshape(-1, 48), torch.tensor(y).reshape(-1))
    t_loss.backward()
    np.testing.assert_allclose(logits.data, t_logits.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(loss.item(), t_loss.item(), atol=1e-10)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(p.grad, P[n].grad.numpy(), atol=1e-9, err_msg=n)
