"""Every public operation that can touch a tie, on every model, with the tie checked afterwards.

The catalogue is drawn from real bugs of other libraries: a resize that
returns a trainable matrix for a frozen one or mutates a shared config, an assignment of a new
embedding module that silently leaves the head on the old matrix, a cast that splits one
parameter into two, an optimizer that keeps updating arrays the model no longer uses.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import minimodel as mm
from minimodel import nn, optim
from minimodel.models import CBOW, CBOWConfig, GPT, GPTConfig, MaskedLM, MLMConfig

V, D = 23, 8


def gpt(tied=True):
    return GPT(GPTConfig(V, 6, 1, 2, D, tie_embeddings=tied), rng=np.random.default_rng(0))


def mlm(tied=True):
    return MaskedLM(MLMConfig(V, 6, 1, 2, D, tie_embeddings=tied), rng=np.random.default_rng(0))


def cbow(tied=True):
    return CBOW(CBOWConfig(V, D, window=1, tie_embeddings=tied), rng=np.random.default_rng(0))


MAKERS = {"gpt": gpt, "mlm": mlm, "cbow": cbow}


def loss_of(model):
    """A loss that uses both the lookup and the head of any of the three models."""
    rng = np.random.default_rng(3)
    if isinstance(model, CBOW):
        ctx = rng.integers(0, model.config.vocab_size, (5, 2))
        return model(ctx, rng.integers(0, model.config.vocab_size, 5))[1]
    ids = rng.integers(0, model.config.vocab_size, (2, 6))
    labels = ids.copy() if isinstance(model, GPT) else np.where(rng.random((2, 6)) < .5, ids, -100)
    labels[0, 0] = ids[0, 0]
    return model(ids, labels)[1]


def assert_tied(model):
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    assert head.weight is emb.weight, "the head must use the embedding's Parameter object"
    assert model.tied and model.config.tie_embeddings
    assert [id(p) for p in model.parameters()].count(id(emb.weight)) == 1
    assert f"{model.output_head_name}.weight" not in model.state_dict()
    assert head.vocab_size == emb.vocab_size == model.config.vocab_size
    loss = loss_of(model)
    model.zero_grad()
    loss.backward()
    if emb.weight.requires_grad:  # both uses reach the one matrix: the head's share is dense
        assert emb.weight.grad is not None and np.all(np.any(emb.weight.grad != 0, axis=1))


@pytest.fixture(params=sorted(MAKERS))
def make(request):
    return MAKERS[request.param]


# --------------------------------------------------------------------------- resize
@pytest.mark.parametrize("new_v", [V + 7, V - 5])
def test_resize_keeps_tie_rows_requires_grad_and_the_parameter_object(make, new_v):
    model = make()
    param, old = model.get_input_embeddings().weight, model.get_input_embeddings().weight.data.copy()
    returned = model.resize_token_embeddings(new_v)
    assert returned is model.get_input_embeddings() and returned.weight is param
    assert param.shape == (new_v, D) and model.config.vocab_size == new_v
    keep = min(V, new_v)
    np.testing.assert_array_equal(param.data[:keep], old[:keep])
    assert_tied(model)


def test_resize_keeps_a_frozen_matrix_frozen(make):
    model = make()
    model.get_input_embeddings().requires_grad_(False)
    model.resize_token_embeddings(V + 2)
    assert model.get_input_embeddings().weight.requires_grad is False
    assert model.get_output_embeddings().weight.requires_grad is False
    untied = make(False)
    untied.get_output_embeddings().requires_grad_(False)
    untied.resize_token_embeddings(V + 2)
    assert untied.get_output_embeddings().weight.requires_grad is False
    assert untied.get_input_embeddings().weight.requires_grad is True


def test_resize_never_mutates_a_config_the_caller_shares():
    config = GPTConfig(V, 6, 1, 2, D)
    a, b = GPT(config), GPT(config)
    a.resize_token_embeddings(V + 4)
    assert config.vocab_size == V and b.config.vocab_size == V
    assert a.config.vocab_size == V + 4 and a.config is not config
    b(np.array([[V - 1]]))  # b still works with its own size
    with pytest.raises(ValueError, match=f"outside the vocabulary of size {V}"):
        b(np.array([[V + 1]]))


def test_resize_of_an_untied_model_resizes_both_and_keeps_them_apart(make):
    model = make(False)
    model.resize_token_embeddings(V + 3)
    emb, head = model.get_input_embeddings(), model.get_output_embeddings()
    assert emb.weight.shape == head.weight.shape == (V + 3, D)
    assert emb.weight is not head.weight and not model.tied


def test_resize_refuses_bad_sizes(make):
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="new_vocab_size must be a positive integer"):
            make().resize_token_embeddings(bad)


def test_optimizer_refuses_to_step_after_a_resize_until_rebuilt(make):
    model = make()
    opt = optim.AdamW(model.parameters(), lr=1e-2)
    loss_of(model).backward()
    opt.step()
    model.resize_token_embeddings(V + 1)
    model.zero_grad()
    loss_of(model).backward()
    with pytest.raises(ValueError, match="resized or cast after this optimizer was created"):
        opt.step()
    fresh = optim.AdamW(model.parameters(), lr=1e-2)
    before = model.get_input_embeddings().weight.data.copy()
    fresh.step()
    assert not np.array_equal(before, model.get_input_embeddings().weight.data)


# --------------------------------------------------------------------------- replace
def test_assigning_a_new_embedding_keeps_the_tie(make):
    model = make()
    new = nn.Embedding(V, D, rng=np.random.default_rng(5))
    model.set_input_embeddings(new)
    assert model.get_input_embeddings() is new
    assert model.get_output_embeddings().weight is new.weight
    assert_tied(model)
    other = nn.Embedding(V, D)
    setattr(model, model.input_embedding_name, other)  # plain attribute assignment too
    assert model.get_output_embeddings().weight is other.weight


def test_a_new_embedding_of_another_size_or_type_is_refused(make):
    model = make()
    param = model.get_input_embeddings().weight
    with pytest.raises(ValueError, match=rf"\({V + 1}, {D}\).*resize_token_embeddings"):
        model.set_input_embeddings(nn.Embedding(V + 1, D))
    with pytest.raises(TypeError, match="must be an nn.Embedding"):
        model.set_input_embeddings(nn.Linear(D, V))
    assert model.get_input_embeddings().weight is param
    assert_tied(model)


def test_replacing_the_head_of_a_tied_model_is_refused(make):
    model = make()
    with pytest.raises(ValueError, match="this model is tied"):
        model.set_output_embeddings(nn.LMHead(D, V))
    with pytest.raises(ValueError, match="this model is tied"):
        model.set_output_embeddings(nn.TiedHead(nn.Embedding(V, D)))  # tied to a stranger
    model.set_output_embeddings(nn.TiedHead(model.get_input_embeddings()))  # a fresh tie: fine
    assert_tied(model)


def test_an_untied_model_refuses_a_tied_or_misshapen_head(make):
    model = make(False)
    with pytest.raises(ValueError, match="this model is untied"):
        model.set_output_embeddings(nn.TiedHead(model.get_input_embeddings()))
    with pytest.raises(ValueError, match=rf"\({V}, {D + 1}\)"):
        model.set_output_embeddings(nn.LMHead(D + 1, V))
    head = nn.LMHead(D, V)
    model.set_output_embeddings(head)
    assert model.get_output_embeddings() is head and not model.tied


def test_tied_head_weight_cannot_be_replaced_behind_the_embedding():
    model = gpt()
    with pytest.raises(AttributeError, match="assign embedding.weight instead"):
        model.lm_head.weight = nn.Parameter(np.zeros((V, D), np.float32))
    assert_tied(model)


# --------------------------------------------------------------------------- cast
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_astype_keeps_one_shared_parameter_and_requires_grad(make, dtype):
    model = make()
    model.get_input_embeddings().requires_grad_(False)
    param = model.get_input_embeddings().weight
    assert model.astype(dtype) is model
    assert model.get_input_embeddings().weight is param and param.dtype == dtype
    assert all(p.dtype == dtype for p in model.parameters())
    assert param.requires_grad is False
    model.get_input_embeddings().requires_grad_(True)
    assert_tied(model)
    assert loss_of(model).dtype == dtype


def test_astype_refuses_non_float_and_an_old_optimizer(make):
    model = make()
    with pytest.raises(TypeError, match="floating-point dtype"):
        model.astype(np.int32)
    opt = optim.AdamW(model.parameters())
    loss_of(model).backward()
    opt.step()
    model.astype(np.float64)
    model.zero_grad()
    loss_of(model).backward()
    with pytest.raises(ValueError, match="float64 but its optimizer state 'exp_avg' is"):
        opt.step()
    sgd = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sgd.step()  # a fresh optimizer after the cast is fine


# --------------------------------------------------------------------------- copy, save, freeze
@pytest.mark.parametrize("how", ["deepcopy", "pickle", "save-load", "state_dict"])
def test_copies_keep_the_tie(make, how, tmp_path):
    model = make()
    if how == "deepcopy":
        clone = copy.deepcopy(model)
    elif how == "pickle":
        clone = pickle.loads(pickle.dumps(model))
    elif how == "save-load":
        mm.save(model, tmp_path / "m.safetensors")
        clone = mm.load(tmp_path / "m.safetensors")
    else:
        clone = type(model)(model.config)
        clone.load_state_dict(model.state_dict())
    assert clone.get_input_embeddings().weight is not model.get_input_embeddings().weight
    np.testing.assert_array_equal(clone.get_input_embeddings().weight.data,
                                  model.get_input_embeddings().weight.data)
    assert_tied(clone)


def test_save_load_after_resize_and_cast_keeps_the_tie(make, tmp_path):
    model = make()
    model.resize_token_embeddings(V + 4)
    model.astype(np.float64)
    mm.save(model, tmp_path / "m.safetensors")
    back = mm.load(tmp_path / "m.safetensors")
    assert back.config.vocab_size == V + 4
    assert back.get_input_embeddings().weight.dtype == np.float64
    assert_tied(back)


def test_freezing_either_side_freezes_the_one_matrix(make):
    for side in ("input", "output"):
        model = make()
        part = model.get_input_embeddings() if side == "input" else model.get_output_embeddings()
        part.requires_grad_(False)
        assert model.get_input_embeddings().weight.requires_grad is False
        assert model.get_output_embeddings().weight.requires_grad is False
        loss = loss_of(model)
        if not loss.requires_grad:  # tied CBOW: the one matrix was its only parameter
            assert model.num_params() == V * D
            continue
        loss.backward()
        assert model.get_input_embeddings().weight.grad is None


def test_export_to_hugging_face_keeps_the_tie(tmp_path):
    pytest.importorskip("transformers")
    from minimodel.interop import from_hf, to_hf

    model = gpt()
    to_hf(model, tmp_path / "hf")
    back = from_hf(tmp_path / "hf")
    assert_tied(back)
    from transformers import AutoModelForCausalLM

    hf = AutoModelForCausalLM.from_pretrained(tmp_path / "hf")
    assert hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr()


def test_save_and_export_refuse_a_config_edited_behind_the_tie(make, tmp_path):
    model = make()
    model.config.tie_embeddings = False  # edited after construction: the head is still tied
    with pytest.raises(ValueError, match="config.tie_embeddings=False but the head is tied"):
        mm.save(model, tmp_path / "m.safetensors")
    assert not (tmp_path / "m.safetensors").exists()
    if isinstance(model, GPT):
        from minimodel.interop import to_hf

        with pytest.raises(ValueError, match="config was changed after the model was built"):
            to_hf(model, tmp_path / "hf")
    model.config.tie_embeddings = True
    model.config.vocab_size = V + 1
    with pytest.raises(ValueError, match="resize_token_embeddings"):
        mm.save(model, tmp_path / "m.safetensors")
