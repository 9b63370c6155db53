"""Training loop, evaluation, checkpoints and metrics: the public face of
:mod:`minimodel.training` (split into a package because it outgrew one file).

    from minimodel.train import TrainConfig, train, unigram_baseline
"""

from minimodel.training import (DEFAULTS, TrainConfig, Trainer, TrainResult, default_out_dir,
                                load_any_tokenizer, param_groups, train, unigram_baseline)

__all__ = ["TrainConfig", "TrainResult", "Trainer", "train", "default_out_dir", "DEFAULTS",
           "unigram_baseline", "param_groups", "load_any_tokenizer"]
