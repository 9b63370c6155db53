"""Hugging Face interop: take a minimodel GPT or MaskedLM to PyTorch/transformers and back.

    from minimodel.interop import to_hf, from_hf
    to_hf(model, "out/hf", tokenizer=tok)        # GPT2LMHeadModel / MegatronBertForMaskedLM
    model = from_hf("out/hf")                    # a local GPT-2 or MegatronBERT folder

Only NumPy and safetensors are needed to write or read the files (torch only for a legacy
``pytorch_model.bin``). The tie is kept both ways: ``tie_word_embeddings`` in config.json, one
stored matrix, one Parameter after import. See docs/interop.md.
"""

from minimodel.interop.gpt2 import (from_hf_gpt2, hf_config, hf_state_dict, load_hf_gpt2,
                                    to_hf_gpt2)
from minimodel.interop.hf import from_hf, load_hf, to_hf
from minimodel.interop.mlm_hf import hf_config_mlm, hf_state_dict_mlm, load_hf_mlm, to_hf_mlm
from minimodel.interop.tokenizer_export import export_tokenizer, tokenizer_files
from minimodel.interop.tokenizer_import import (HFTokenizerImport, remap_vocab,
                                                tokenizer_from_hf)

__all__ = ["to_hf", "from_hf", "load_hf", "to_hf_gpt2", "from_hf_gpt2", "load_hf_gpt2",
           "hf_config", "hf_state_dict", "to_hf_mlm", "load_hf_mlm", "hf_config_mlm",
           "hf_state_dict_mlm", "export_tokenizer", "tokenizer_files", "tokenizer_from_hf",
           "HFTokenizerImport", "remap_vocab"]
