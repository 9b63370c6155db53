"""The claims of lesson 15 (GPT-2's lm_head and wte) checked on transformers' GPT2LMHeadModel."""

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture
def gpt2():
    config = transformers.GPT2Config(vocab_size=512, n_positions=8, n_embd=16, n_layer=1,
                                     n_head=2, bos_token_id=0, eos_token_id=0)
    return transformers.GPT2LMHeadModel(config)


def test_lm_head_is_wte_and_is_listed_once(gpt2):
    assert gpt2.lm_head.weight is gpt2.transformer.wte.weight
    names = [n for n, _ in gpt2.named_parameters()]
    assert "lm_head.weight" not in names and "transformer.wte.weight" in names
    state = gpt2.state_dict()                 # both keys, one storage
    assert state["lm_head.weight"].data_ptr() == state["transformer.wte.weight"].data_ptr()


def test_a_linear_d_to_v_stores_its_weight_as_v_by_d(gpt2):
    assert tuple(torch.nn.Linear(16, 512).weight.shape) == (512, 16)
    assert tuple(gpt2.lm_head.weight.shape) == tuple(gpt2.transformer.wte.weight.shape) == (512, 16)


def test_freezing_one_name_freezes_both(gpt2):
    gpt2.transformer.wte.weight.requires_grad_(False)
    assert gpt2.lm_head.weight.requires_grad is False


def test_gpt2_small_counts_of_lesson_06():
    # lesson 06: 124,439,808 parameters tied, and the tie saves V * d = 38,597,376
    with torch.device("meta"):                # shapes only, no memory, no download
        tied = transformers.GPT2LMHeadModel(transformers.GPT2Config())
        untied = transformers.GPT2LMHeadModel(transformers.GPT2Config(tie_word_embeddings=False))
    n_tied = sum(p.numel() for p in tied.parameters())
    n_untied = sum(p.numel() for p in untied.parameters())
    assert n_tied == 124_439_808
    assert n_untied - n_tied == 50257 * 768 == 38_597_376
