"""Models built from minimodel's layers: GPT (decoder), MaskedLM (encoder) and CBOW.

``mlm_forward`` / ``mlm_forward_tied`` are the pure-NumPy reference of the lab's seed exercise.
"""

from minimodel.models.cbow import CBOW, CBOWConfig
from minimodel.models.gpt import GPT, GPTConfig
from minimodel.models.mlm import MaskedLM, MLMConfig
from minimodel.models.mlm_reference import mlm_forward, mlm_forward_tied

MODEL_CLASSES = {"GPT": (GPT, GPTConfig), "MaskedLM": (MaskedLM, MLMConfig),
                 "CBOW": (CBOW, CBOWConfig)}

__all__ = ["GPT", "GPTConfig", "MaskedLM", "MLMConfig", "CBOW", "CBOWConfig", "mlm_forward",
           "mlm_forward_tied", "MODEL_CLASSES"]
