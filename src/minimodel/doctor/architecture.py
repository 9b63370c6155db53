"""What transformers itself says a model is: its embedding, its head, its tie, its key layouts.

A config.json names an architecture (``architectures: ["LlavaForConditionalGeneration"]``,
``model_type: "llava"``). When transformers is installed, the doctor builds that class from the
config on PyTorch's **meta device** (parameters with shapes and no memory, so a 70 B config
costs milliseconds) and reads off the facts the checks need, in the installed version's own
terms instead of a table of names we chose:

* the embedding E: the parameter of ``get_input_embeddings()``, under the name
  ``save_pretrained`` writes (when several names share it, the tie's *source*);
* the head W: the parameter of ``get_output_embeddings()`` (``lm_head``, ``proj_out``,
  ``cls.predictions.decoder``, ``embed_out``, ...), and its bias; ``None`` when the class has
  no head (CLIP's text model);
* the tie: whether, in the model built from this config (class defaults included, nested
  text configs included), the head *is* the embedding parameter — exactly what the
  installed transformers does in memory; and which config flag decided it;
* aliases: other names of E (T5's ``encoder.embed_tokens``);
* the shapes transformers expects for E and W (the sub-config that sizes each of them);
* key renames between checkpoint layouts (e.g. the older Llava layout
  ``language_model.model.embed_tokens.weight``), through transformers' own conversion
  mapping, so a stored name is compared with the model's name;
* the tables E (and W) is made of, in row order: one in most models, several when the
  embedding module holds more than one table (Idefics' ``additional_embedding``, looked up for
  ids past the first table) or when the conversion mapping concatenates several stored tables
  into one (Molmo2's ``wte.embedding`` + ``wte.new_embedding``): E is then
  ``concat(E_1, E_2, ...)`` along the rows, (V_1 + V_2 + ..., d).

The answer depends only on the versions and the config, so it is cached on disk
(:mod:`.arch_cache`): a later run with the same config imports neither torch nor transformers.
The first run asks in a child process while the doctor reads the model (:mod:`.background`).

Without transformers (or for a config it cannot build) :func:`ask_transformers` returns
``None`` and the doctor falls back on its built-in table (:mod:`.names`); the report says which
source the verdict used.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata, util
from pathlib import Path
from typing import Any

# The task mappings a folder's model_type is looked up in when config.json has no
# "architectures" entry: the language-model heads, the ones with a tie to check.
# Sequence-to-sequence first (Whisper, Marian: the full model, not its decoder alone), masked
# LM before causal LM (BERT folders are masked LMs), the bare model last (CLIP's text model).
MAPPINGS = ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
            "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
            "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_MAPPING_NAMES")


# Packages transformers imports when they are installed but never uses to build a model on the
# meta device: accelerate (device maps, offloading), scipy (the object-detection losses'
# matching) and jinja2 (chat templates). The child process of :mod:`.background` hides them
# (:func:`hide_unused_packages`): importing them is about 1 s of a first run, all of it on the
# run's critical path. ``benchmarks/doctor_hf_sweep.py`` checks that hiding them changes no answer.
UNUSED_FOR_BUILDING = ("accelerate", "scipy", "jinja2")

# The transformers version whose loading code the doctor's statements were checked against,
# named in a message when transformers is not installed.
CHECKED_VERSION = "5.24"


def installed_version() -> str | None:
    """The installed transformers' version (from its metadata, without importing it), or None."""
    try:
        return metadata.version("transformers")
    except metadata.PackageNotFoundError:
        return None


@dataclass
class Architecture:
    """The facts about one architecture, as the installed transformers builds it."""

    source: str                            # "transformers 5.24.0, LlavaForConditionalGeneration"
    version: str                           # transformers.__version__
    class_name: str
    embedding: str                         # E's name in the model ("": the class names none)
    head: str | None                       # W's name, None: the class has no output head
    head_bias: str | None
    tied: bool                             # W is E in the model built from this config
    tie_flag: str                          # which flag decided, e.g. "text_config.tie_word_..."
    tie_written: bool                      # the flag is written in config.json (else a default)
    written_value: bool | None = None      # what config.json writes there (T5's config class
                                           # forces True whatever is written: the file says)
    aliases: list[str] = field(default_factory=list)
    embedding_shape: tuple[int, ...] = ()
    head_shape: tuple[int, ...] | None = None
    vocab_where: str = "vocab_size"        # the config entry that sizes E
    embedding_parts: list[str] = field(default_factory=list)  # E's tables in row order
    head_parts: list[str] = field(default_factory=list)       # W's tables in row order
    # stored key -> [model key, position among the stored tables concatenated into that
    # model tensor, whether the model has that tensor (else transformers ignores the key)]
    keys: dict[str, list] = field(default_factory=dict)

    def rename(self, key: str) -> str:
        """The model's name for stored ``key`` (transformers' checkpoint conversions)."""
        return self.keys.get(key, [key])[0]

    def part_index(self, key: str) -> int:
        """Where stored ``key`` goes among the tables concatenated into one model tensor."""
        return self.keys.get(key, [key, 0])[1]

    def reads(self, key: str) -> bool:
        """Does transformers load stored ``key`` into the model (not an unexpected key)?"""
        return bool(self.keys.get(key, [key, 0, True])[2])

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        del out["keys"]  # kept beside it in the cache, growing as new files are examined
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], keys: dict[str, list]) -> Architecture:
        shapes = {k: tuple(d[k]) if d.get(k) is not None else None
                  for k in ("embedding_shape", "head_shape")}
        return cls(**{**d, **shapes, "embedding_shape": shapes["embedding_shape"] or (),
                      "keys": keys})


def available() -> bool:
    """Are transformers and torch importable (without importing them)?"""
    try:
        return util.find_spec("transformers") is not None and util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def ask_transformers(config: dict[str, Any], folder: Path | None,
                     keys: Callable[[], list[str]]) -> Architecture | None:
    """The architecture of ``config`` (a config.json dict, read by transformers itself from
    ``folder`` when given) as the installed transformers builds it, with the stored keys
    (``keys()``, asked for only once the model is built: a child process gets them late) read
    through its checkpoint conversions; None when transformers is not installed or cannot
    build it (then the built-in table is used). The slow path: callers go through the cache
    (:class:`.background.Question`)."""
    try:
        import torch  # noqa: F401 - optional: the meta device
        import transformers  # optional dependency, imported only here (see module docstring)
    except ImportError:
        return None
    quiet = contextlib.redirect_stderr(io.StringIO())
    level = logging.getLogger("transformers").level
    try:
        logging.getLogger("transformers").setLevel(logging.ERROR)
        with quiet, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _describe(transformers, config, folder, keys)
    except Exception:  # noqa: BLE001 - any failure to build means: use the built-in table
        return None
    finally:
        logging.getLogger("transformers").setLevel(level)


def model_class(transformers: Any, config: dict[str, Any]) -> Any:
    """The class config.json names (``architectures[0]``), else the first language-model class
    registered for its ``model_type``."""
    from transformers.models.auto import modeling_auto

    for name in config.get("architectures") or []:
        if isinstance(name, str) and hasattr(transformers, name):
            return getattr(transformers, name)
    for mapping in MAPPINGS:
        name = getattr(modeling_auto, mapping, {}).get(config["model_type"])
        if isinstance(name, str) and hasattr(transformers, name):
            return getattr(transformers, name)
    raise ValueError(f"no class for model_type {config['model_type']!r}")


def build_on_meta(transformers: Any, config: dict[str, Any], folder: Path | None = None) -> Any:
    """The model of ``config`` with every parameter on the meta device (no memory)."""
    import torch
    from transformers import CONFIG_MAPPING

    config_class = CONFIG_MAPPING[config["model_type"]]
    if folder is not None and (folder / "config.json").is_file():  # transformers' own reading
        cfg = config_class.from_pretrained(str(folder), local_files_only=True)
    else:
        cfg = config_class.from_dict(dict(config))
    cls = model_class(transformers, config)
    with torch.device("meta"):
        return cls(cfg)


def _describe(transformers: Any, config: dict[str, Any], folder: Path | None,
              keys: Callable[[], list[str]]) -> Architecture:
    import torch  # optional dependency, as transformers (see describe)

    model = build_on_meta(transformers, config, folder)
    names = _names_by_parameter(model)
    modules: dict[int, str] = {}
    for name, module in model.named_modules(remove_duplicate=False):
        modules.setdefault(id(module), name)  # the first name of a shared module
    tied_map = dict(getattr(model, "all_tied_weights_keys", None) or {})  # target -> source
    output = _output_embeddings(model)
    try:
        inputs = model.get_input_embeddings()
    except NotImplementedError:  # a class that does not say (Dia); its head decides below
        if output is not None:
            raise
        return _headless(transformers.__version__, model, keys())
    if output is not None and getattr(output, "weight", None) is not None:
        # E is the table the head is tied to (Marian's decoder table, not its encoder's), else
        # the input embedding of the (sub-)model that owns the head (an encoder-decoder's)
        partner = next((m for m in model.modules() if isinstance(m, torch.nn.Embedding)
                        and m.weight is output.weight), None)
        _, owner = _submodel_of(model, f"{_prefix(modules[id(output)])}weight")
        inputs = partner if partner is not None and partner is not inputs else \
            (owner.get_input_embeddings() if owner is not model else inputs)
    embedding = _saved_name(f"{_prefix(modules[id(inputs)])}weight", tied_map)
    head = bias = None
    tied = False
    if output is not None and getattr(output, "weight", None) is not None:
        head = f"{_prefix(modules[id(output)])}weight"
        tied = output.weight is inputs.weight
        if getattr(output, "bias", None) is not None:
            bias = _saved_name(f"{_prefix(modules[id(output)])}bias", tied_map)
    e_tables = _tables(inputs)
    w_tables = _tables(output) if head is not None else []
    shared = names[id(inputs.weight)]
    aliases = [n for n in shared if n not in (embedding, head)]
    flag, written = _deciding_flag(model, head, config)
    value: Any = config
    for part in flag.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    version = transformers.__version__
    return Architecture(
        source=f"transformers {version}, {type(model).__name__}", version=version,
        class_name=type(model).__name__, embedding=embedding, head=head, head_bias=bias,
        tied=tied, tie_flag=flag, tie_written=written,
        written_value=value if isinstance(value, bool) else None, aliases=aliases,
        embedding_shape=_stacked(e_tables), head_shape=_stacked(w_tables) if w_tables else None,
        vocab_where=_vocab_where(model, embedding, tuple(inputs.weight.shape)),
        embedding_parts=[embedding] + [_saved_name(names[id(t)][0], tied_map) for t in e_tables[1:]],
        head_parts=[] if head is None else [head] + [names[id(t)][0] for t in w_tables[1:]],
        keys=_stored_keys(model, keys()))


def _tables(module: Any) -> list[Any]:
    """The tables of an embedding (or head) module, in row order: its own weight, then the
    weight of each embedding or linear layer inside it with the same width (Idefics'
    ``additional_embedding`` holds the rows of the ids past the first table)."""
    import torch

    kinds = (torch.nn.Embedding, torch.nn.Linear)
    inner = [m.weight for m in module.modules() if m is not module and isinstance(m, kinds)
             and getattr(m, "weight", None) is not None
             and tuple(m.weight.shape[1:]) == tuple(module.weight.shape[1:])]
    return [module.weight, *inner]


def _stacked(tables: list[Any]) -> tuple[int, ...]:
    """The shape of the tables concatenated along the rows: (V_1 + V_2 + ..., d)."""
    return (sum(int(t.shape[0]) for t in tables), *map(int, tables[0].shape[1:]))


def _headless(version: str, model: Any, keys: list[str]) -> Architecture:
    """A class with no output head and no named input embedding: nothing to tie; the built-in
    table finds the embedding to check."""
    return Architecture(source=f"transformers {version}, {type(model).__name__}",
                        version=version, class_name=type(model).__name__, embedding="",
                        head=None, head_bias=None, tied=False, tie_flag="-", tie_written=False,
                        keys=_stored_keys(model, keys))


def _output_embeddings(model: Any) -> Any:
    try:
        return model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None


def _prefix(module_name: str) -> str:
    return f"{module_name}." if module_name else ""


def _names_by_parameter(model: Any) -> dict[int, list[str]]:
    """Every name of every parameter (a tied parameter has several)."""
    out: dict[int, list[str]] = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        out.setdefault(id(p), []).append(name)
    return out


def _saved_name(name: str, tied_map: dict[str, str]) -> str:
    """The name save_pretrained writes for ``name``: a tie's target is stored as its source."""
    return tied_map.get(name, name)


def _submodel_of(model: Any, name: str) -> tuple[str, Any]:
    """(prefix, sub-model) of the innermost PreTrainedModel holding parameter ``name``."""
    from transformers import PreTrainedModel

    best = ("", model)
    for prefix, sub in model.named_modules():
        if isinstance(sub, PreTrainedModel) and prefix and name.startswith(prefix + ".") \
                and len(prefix) > len(best[0]):
            best = (prefix, sub)
    return best


def _config_path(model: Any, sub_config: Any) -> str:
    """Where ``sub_config`` sits in the top config: "" (the top) or e.g. "text_config."."""
    if sub_config is model.config:
        return ""
    for key, value in vars(model.config).items():
        if value is sub_config:
            return f"{key}."
    return ""


def _deciding_flag(model: Any, head: str | None, config: dict[str, Any]) -> tuple[str, bool]:
    """(the tie flag transformers read for this head, whether config.json writes it)."""
    if head is None:
        return "-", False
    _, sub = _submodel_of(model, head)
    path = _config_path(model, sub.config)
    raw: Any = config
    for part in path.rstrip(".").split(".") if path else []:
        raw = raw.get(part) if isinstance(raw, dict) else None
    written = isinstance(raw, dict) and isinstance(raw.get("tie_word_embeddings"), bool)
    return f"{path}tie_word_embeddings", written


def _vocab_where(model: Any, embedding: str, shape: tuple[int, ...]) -> str:
    """The config entry that sizes E (``text_config.vocab_size``, ``decoder_vocab_size``...)."""
    _, sub = _submodel_of(model, embedding)
    path = _config_path(model, sub.config)
    for key in ("vocab_size", "decoder_vocab_size"):
        if getattr(sub.config, key, None) == shape[0]:
            return f"{path}{key}"
    return f"{path}vocab_size"


def _stored_keys(model: Any, keys: list[str]) -> dict[str, list]:
    """stored key -> [model key, part index, read by the model], with the installed
    transformers' checkpoint conversions (older layouts, a base model's keys without the task
    head's prefix, several stored tables concatenated into one tensor)."""
    known = set(model.state_dict(keep_vars=True)) | \
        {name for name, _ in model.named_parameters(remove_duplicate=False)}
    try:
        from transformers.conversion_mapping import get_model_conversion_mapping
        from transformers.core_model_loading import (
            Concatenate,
            WeightRenaming,
            rename_source_key,
        )
    except ImportError:  # an older transformers: keys are compared as stored
        return {key: [key, 0, key in known] for key in keys}
    transforms = get_model_conversion_mapping(model)
    renamings = [t for t in transforms if isinstance(t, WeightRenaming)]
    converters = [t for t in transforms if not isinstance(t, WeightRenaming)]
    # the stored tables a converter stacks along the rows, in order (Molmo2's embedding)
    position = {pattern: i for t in converters
                if any(isinstance(op, Concatenate) and op.dim == 0
                       for op in getattr(t, "operations", []))
                for i, pattern in enumerate(t.source_patterns)}
    flags = {name: True for name in known}
    prefix = getattr(model, "base_model_prefix", None) or None
    out = {}
    for key in keys:
        try:
            renamed, pattern = rename_source_key(key, renamings, converters, prefix, flags)
        except Exception:  # noqa: BLE001 - a key no conversion understands stays as stored
            renamed, pattern = key, None
        out[key] = [renamed, position.get(pattern, 0), renamed in known]
    return out


def hide_unused_packages() -> None:
    """Make transformers see :data:`UNUSED_FOR_BUILDING` as not installed in this process, as on
    a machine without them: a ``None`` in ``sys.modules`` makes ``import scipy`` fail and
    ``importlib.util.find_spec("scipy")`` (transformers' availability test) answer ``None``.
    A package already imported stays."""
    for name in UNUSED_FOR_BUILDING:
        sys.modules.setdefault(name, None)


def answer_on_stdout() -> None:
    """The child process of :mod:`.background`: the config (and its folder) on stdin's first
    line, the stored keys on its second, sent late; prints ``{"architecture": {...} or null,
    "keys": {...}}``. This module imports nothing of minimodel, so the child runs this file
    alone (``runpy.run_path``) and spends its time on transformers' imports only, less the
    packages building does not use (:func:`hide_unused_packages`)."""
    hide_unused_packages()
    first = json.loads(sys.stdin.readline())
    folder = Path(first["folder"]) if first["folder"] else None

    def keys() -> list[str]:  # read only once the model is built: the parent sends them late
        return json.loads(sys.stdin.readline())

    arch = ask_transformers(first["config"], folder, keys)
    print(json.dumps({"architecture": None if arch is None else arch.to_dict(),
                      "keys": {} if arch is None else arch.keys}))


if __name__ == "__main__":
    answer_on_stdout()
