"""Run-time half of the forbidden-API rule, installed in the judged child before the solution
is imported (see ``docs/judge.md``, "Forbidden APIs").

The static scan judges names as they are written. A name can also be made while the file runs
(``from torch.nn.functional import *``, ``F: object = torch.nn.functional``, a walrus, a
default argument, ``vars(F)["gelu"]``, ``getattr(F, "ge" + "lu")``, ``importlib``), but every
such spelling ends up calling one object. So the object is replaced where it lives, once,
before any line of the solution runs:

* every module namespace of the library (``torch.nn.functional``, ``torch``, ``torch._C._nn``,
  ``torch._VF`` ...) and every attribute of ``torch.Tensor`` that holds a forbidden callable
  (by identity: the forbidden list resolved here, in this process) or a callable of its family
  (:mod:`family`: ``torch.embedding``, ``torch._C._nn.cross_entropy_loss``, private fused ops);
* ``torch._C._VariableFunctions`` (a C object whose attributes cannot be set) by a stand-in
  that answers the same except for the forbidden names;
* the ``torch.ops`` packets of the family, in every namespace torch's registry lists
  (``torch.ops.aten.gelu``, ``torch.ops.quantized.layer_norm``): the Python entries to the
  operators; in the gelu family, every op that takes its activation as an argument
  (``torch.ops.mkldnn._linear_pointwise(x, w, b, "gelu", [], "tanh")``,
  ``torch._addmm_activation(..., use_gelu=True)``), read from torch's op schemas
  (``family.fused_activation_ops``);
* a forbidden class (``torch.nn.LayerNorm``) keeps its identity: its ``__init__``,
  ``__call__`` and every method it defines are replaced in place, so every name of it, every
  subclass and every method (``_forward_impl``) is covered;
* what a module named by a family defines (``math_attention`` in
  ``torch._higher_order_ops.flex_attention``, ``_sfdp_pattern_1`` in
  ``torch._inductor.fx_passes.fuse_attention``: ``family.module_in_family``), as the static
  scan refuses the path;
* a library module imported later (by the solution or lazily by torch) is covered as soon as
  its import ends; importing a forbidden package (``minimodel``) is refused, and so is the
  solution's own import of torch's compiler stacks (:data:`COMPILER_STACKS`,
  :class:`StackImports`).

Whatever name reaches it, a call lands on a stub that sends ``{"event": "forbidden", "name":
API, "line": N}`` through the judge's pipe and ends the process at once (``os._exit``: no
``except`` or ``finally`` of the solution runs). ATen kernels themselves are not intercepted:
an allowed function that runs the same kernel inside torch's C++ (``F.nll_loss`` runs the
kernel ``F.cross_entropy`` uses) must never be refused.

It imports nothing of minimodel (the package is out of sight in the sandbox): ``family.py`` is
copied next to it. Undoing the stubs on purpose (reloading a module from disk, ``ctypes``,
``gc``) is out of scope, as for the static rule.
"""

import builtins
import importlib.machinery
import os
import sys
import types
import warnings


def resolve(path):
    """The object ``path`` names among the loaded modules (nothing is imported), or None."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        obj = sys.modules.get(".".join(parts[:i]))
        if obj is not None:
            break
    else:
        return None
    for attr in parts[i:]:
        try:  # a module's own names only: its __getattr__ may import (torch._dynamo)
            obj = vars(obj).get(attr) if isinstance(obj, types.ModuleType) \
                else getattr(obj, attr)
        except Exception:  # noqa: BLE001 - a missing or raising attribute: not here
            return None
        if obj is None:
            return None
    return obj


class Shadow:
    """Stands in for an object whose attributes cannot be replaced (a C type such as
    ``torch._C._VariableFunctions``): the same answers, except the forbidden names."""

    def __init__(self, real, replaced):
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_replaced", replaced)

    def __getattr__(self, name):
        replaced = object.__getattribute__(self, "_replaced")
        if name in replaced:
            return replaced[name]
        return getattr(object.__getattribute__(self, "_real"), name)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_real"))


# What an op packet or overload holds that runs the op: the C++ callable (``_op``, ``op``),
# the one for a dispatch key (``_op_dk``), and the Python kernels registered for it
# (``py_kernels`` and its tables). Its methods that run it are replaced in ForbiddenOp.
RUNS_THE_OP = {"_op", "op", "_op_dk"}
KERNEL_TABLES = {"py_kernels", "_dispatch_cache", "python_key_table", "functorch_table"}


class ForbiddenHandle:
    """Stands in for a forbidden op's dispatcher handle (``overload._handle``, which
    ``redispatch`` goes through): ``redispatch_boxed`` reports; ``schema()`` and ``debug()``
    are the real handle's."""

    def __init__(self, stub, real):
        self._stub, self._real = stub, real

    def redispatch_boxed(self, *args, **kwargs):
        return self._stub()

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_real"), name)


class ForbiddenOp:
    """Stands in for a ``torch.ops.aten`` packet, or one of its overloads (``.default``,
    ``.out``): calling it reports, and so does calling what it holds that runs the op
    (:data:`RUNS_THE_OP`: ``aten.gelu.default._op(x)``; ``redispatch``, ``decompose``,
    ``_get_dispatch``; the dispatcher handle is a :class:`ForbiddenHandle`; its tables of
    Python kernels read empty). Everything else is the real one's (its ``_schema``,
    its overload names, ``overloads()``), so torch code that only reads them keeps working
    (``torch.distributed.tensor`` registers its sharding rules by each op's schema); an
    overload read from a packet, and the packet read from an overload (``overloadpacket``),
    are ForbiddenOps too."""

    def __init__(self, stub, real=None):
        self._stub, self._real = stub, real

    def __call__(self, *args, **kwargs):
        return self._stub()

    # Defined here, so they win over torch's own (the typed stand-in is also an OpOverload):
    # each of torch's runs the op through the dispatcher.
    def redispatch(self, *args, **kwargs):
        return self._stub()

    def decompose(self, *args, **kwargs):
        return self._stub()

    def _get_dispatch(self, *args, **kwargs):
        return lambda *a, **k: self._stub()

    @property
    def _handle(self):
        real = object.__getattribute__(self, "_real")
        return ForbiddenHandle(self._stub, getattr(real, "_handle"))

    def __getattr__(self, name):
        real = object.__getattribute__(self, "_real")
        if real is None:  # nothing to read from: every overload is this stub
            if name.startswith("__"):
                raise AttributeError(name)
            return self
        if name in RUNS_THE_OP:
            stub = object.__getattribute__(self, "_stub")
            return lambda *args, **kwargs: stub()
        if name in KERNEL_TABLES:
            return {}
        value = getattr(real, name)
        ops = sys.modules.get("torch._ops")
        kinds = tuple(getattr(ops, kind) for kind in ("OpOverload", "OpOverloadPacket")
                      if hasattr(ops, kind))
        if kinds and isinstance(value, kinds):  # an overload, or its packet (overloadpacket)
            return forbidden_op(object.__getattribute__(self, "_stub"), value)
        return value

    def __iter__(self):
        return iter(object.__getattribute__(self, "_real") or ())

    # Equal to the real op, as a key: torch keeps tables keyed by op (vmap's decompositions,
    # registered on first use), and an honest ``torch.vmap`` looks the stub up in them.
    def __eq__(self, other):
        real = object.__getattribute__(self, "_real")
        return self is other if real is None else real == other

    def __hash__(self):
        real = object.__getattribute__(self, "_real")
        return id(self) if real is None else hash(real)

    def __repr__(self):
        return f"<forbidden {object.__getattribute__(self, '_real')!r}>"


_TYPED_OPS = {}  # torch's packet or overload class -> its ForbiddenOp subclass


def forbidden_op(stub, real=None):
    """A :class:`ForbiddenOp` for ``real``, and an instance of ``real``'s own class
    (``OpOverloadPacket``, ``OpOverload``): torch code that checks the type of what it
    registers (``torch.utils.flop_counter``'s ``register_flop_formula``, imported lazily by
    ``flex_attention``) keeps working; only a call reports."""
    kind = type(real)
    if real is None or kind.__module__ != "torch._ops":
        return ForbiddenOp(stub, real)
    if kind not in _TYPED_OPS:
        _TYPED_OPS[kind] = type("Forbidden" + kind.__name__, (ForbiddenOp, kind), {})
    op = object.__new__(_TYPED_OPS[kind])  # torch's __init__ would build a real one
    ForbiddenOp.__init__(op, stub, real)
    return op


# torch's Python re-implementations of its own operators (refused whole by the static scan,
# astscan.FENCE_FORBIDDEN): their public helpers hold an op's words with a suffix
# (``native_batch_norm_helper``, ``native_batch_norm_decomposition``, ``native_layer_norm_fake``)
# and compute it, so at run time their names are read as private ones (all the words, any more)
REIMPLEMENTATIONS = ("torch._refs.", "torch._prims.", "torch._decomp.")
HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class written in Python (its attributes can be set)


def own_methods(cls):
    """The names of the methods ``cls`` defines itself: functions, static and class methods,
    ``__call__``; not the other dunders."""
    return [name for name, value in vars(cls).items()
            if (name == "__call__" or not name.startswith("__"))
            and isinstance(value, (types.FunctionType, staticmethod, classmethod))]


class Enforcer:
    """Replaces the forbidden callables; ``report(api)`` is called by any of them (and must
    not return)."""

    def __init__(self, entries, refused, report, family, backward_kernels=False):
        self.entries = entries      # [{"api": name, "paths": [names], "family": last or None}]
        self.refused = refused      # packages whose import is refused (minimodel)
        self.report = report
        self.same_family = family.same_family
        self.words = family.words
        self.joined = family.joined
        self.module_in_family = family.module_in_family
        self.named_by_family_word = family.named_by_family_word
        self.bare_family_word = family.bare_family_word
        self.tops = {e["api"].split(".")[0] for e in entries} - set(refused)
        # (api, library, last name, its last word: a quick necessary test before the rule),
        # for the entries that are functions or classes here (never for a whole module)
        self.families = []
        self.owners = {}  # module name -> the api whose family names a part of it, or None
        self.targets = {}  # id -> (original object, api): held, so ids stay unique
        self.stubs = {}    # api -> stub
        self.stub_ids = set()
        self.patched = set()  # ids of classes patched in place
        self.depth = 0     # nested library imports under way
        self.replaced = {}  # "module.name" -> api: what was replaced (for the tests)
        self.walked = set()  # modules already covered: a later import walks only new ones
        self.torch_covered = False
        self.packets = {}  # "ns::op" -> its ForbiddenOp, once torch is covered
        self.walked_tables = set()  # ids of torch's decomposition tables already covered
        # "without autograd": every ATen op whose name holds the word backward, read from
        # torch's own op registry when torch is loaded (a gradient kernel computes the
        # gradient the exercise asks for, whatever Python name reaches it)
        self.backward_kernels = backward_kernels
        self.backward_ops = set()
        # the gelu family's ops that take their activation as an argument (oneDNN's
        # _linear_pointwise(..., "gelu", ...), _addmm_activation(..., use_gelu=True)), read
        # from torch's op schemas when torch is loaded: "ns::name" -> the api a verdict names,
        # and the same by last name, for the Python callables that bind them
        self.fused_activation = any(e["api"] == family.FUSED_ACTIVATION for e in entries)
        self.fused_activation_ops = family.fused_activation_ops
        self.activation_ops = {}
        self.activation_names = {}
        # "without autograd": id(original) -> (original, replacement) for torch's C switches
        # that turn gradient recording on (grad_switches), replaced wherever they are held
        self.switches = {}

    # -- the stubs ---------------------------------------------------------------------------
    def stub(self, api):
        if api not in self.stubs:
            report = self.report

            def forbidden(*args, **kwargs):
                report(api)

            forbidden.__name__ = forbidden.__qualname__ = api.rsplit(".", 1)[-1]
            forbidden.__doc__ = f"{api} is forbidden in this exercise"
            self.stubs[api] = forbidden
            self.stub_ids.add(id(forbidden))
        return self.stubs[api]

    def patch_class(self, cls, api):
        """A forbidden class keeps its identity: constructing it, calling it or any method of
        its own (``forward``, ``_forward_impl``, a static or class method) reports. Its other
        dunders (``__repr__``, ``__setstate__`` ...) are left alone: they compute nothing.
        False for a class that cannot be changed (a C type): its names are replaced."""
        if id(cls) in self.patched:
            return True
        self.targets.setdefault(id(cls), (cls, api))
        stub = self.stub(api)
        for attr in ("__init__", "__call__", "forward", *own_methods(cls)):
            if attr in ("__init__", "__call__") or hasattr(cls, attr):
                try:
                    setattr(cls, attr, stub)
                except (AttributeError, TypeError):
                    if attr in ("__init__", "forward"):
                        return False  # a C type: nothing of it can be set
        self.patched.add(id(cls))
        return True

    def keeps_identity(self, obj, api, top):
        """A callable instance whose class is itself of the family (a higher-order op,
        ``FlexAttentionHOP``): its class is patched, so the instance keeps its type (torch
        checks it: ``register_flop_formula`` wants a ``HigherOrderOperator``) and a call of it
        reports. An instance of a shared class is replaced by name instead."""
        kind = type(obj)
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType,
                            types.MethodType)) or not kind.__flags__ & HEAP_TYPE \
                or str(kind.__module__).split(".")[0] != top:
            return False  # a C type (torch._C's) cannot be patched: its names are replaced
        if self.verdict(kind.__name__, kind, top) != api:
            return False
        return self.patch_class(kind, api)

    # -- what is forbidden -------------------------------------------------------------------
    def family_of(self, name, obj, top):
        """The api whose family ``name`` belongs to, for a callable of library ``top``."""
        if top == "torch" and name in self.backward_ops:
            return f"torch.ops.aten.{name}"
        if top == "torch" and name in self.activation_names:
            return self.activation_names[name]
        spelled = self.joined(name)  # its words run together: CrossMapLRN2d's hold "norm"
        for api, fam_top, last, word in self.families:
            if fam_top == top and word in spelled and self.same_family(name, last):
                return api
        return None

    def verdict(self, name, obj, top):
        hit = self.targets.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        if name.startswith("__") or id(obj) in self.stub_ids \
                or isinstance(obj, types.ModuleType):
            return None
        try:
            if not callable(obj):
                return None
            owner = getattr(obj, "__module__", None) or top
        except Exception:  # noqa: BLE001 - an object that refuses to be looked at
            return None
        if not isinstance(owner, str) or owner.split(".")[0] != top:
            return None  # re.compile imported into a torch module is not torch.compile
        if (owner + ".").startswith(REIMPLEMENTATIONS) and not name.startswith("_"):
            name = "_" + name  # a re-implementation's helper: read as a private name
        # an instance is defined where its class is (a higher-order op says its __module__
        # is torch.ops.higher_order; its class lives in torch._higher_order_ops.flex_attention)
        defined = owner if isinstance(obj, (type, types.FunctionType,
                                            types.BuiltinFunctionType)) \
            else getattr(type(obj), "__module__", owner)
        return (self.family_of(name, obj, top) or self.named_family(name, top)
                or self.module_family(owner, top) or self.module_family(defined, top))

    def named_family(self, name, top):
        """The api whose family's word is exactly the name of this callable
        (``torch.onnx.ops.attention``: ``family.named_by_family_word``). Only for a callable's
        own name: a module's (``torch.nn.attention``) goes through :meth:`module_family`."""
        if self.bare_family_word(name) is None:
            return None
        return next((api for api, fam_top, last, _word in self.families
                     if fam_top == top and self.named_by_family_word(name, last)), None)

    def module_family(self, owner, top):
        """The api whose family names a part of module ``owner``, or None: what a module of
        the family defines belongs to it (``math_attention`` and ``sdpa_dense``, defined in
        ``torch._higher_order_ops.flex_attention``, compute flex attention; ``_sfdp_pattern_1``,
        defined in ``torch._inductor.fx_passes.fuse_attention``, is a scaled dot-product
        attention). A part names the family when it is a member's name (``flex_attention``) or
        holds the family's word (``family.module_in_family``: ``fuse_attention``,
        ``batchnorm``, ``efficient_conv_bn_eval``). The static scan refuses every name under
        such a path (``astscan._Rule.match``); this is the same rule for the callables such a
        module defines."""
        if not isinstance(owner, str) or owner.split(".")[0] != top:
            return None
        if owner not in self.owners:
            self.owners[owner] = next(
                (api for part in owner.split(".")[1:]
                 if (api := self.family_of(part, None, top)
                     or self.family_word_of(part, top)) is not None), None)
        return self.owners[owner]

    def family_word_of(self, part, top):
        """The api of the first forbidden family whose word ``part`` (a module's name) holds."""
        return next((api for api, fam_top, last, _word in self.families
                     if fam_top == top and self.module_in_family(part, last)), None)

    def cover(self, holder, items, top):
        """Replace the forbidden callables among ``items`` (name, object) of ``holder``."""
        where = getattr(holder, "__name__", "?")
        for name, obj in items:
            switch = self.switches.get(id(obj))
            if switch is not None and switch[0] is obj:
                try:
                    setattr(holder, name, switch[1])
                except (AttributeError, TypeError):
                    pass
                continue
            api = self.verdict(name, obj, top)
            if api is None:
                continue
            self.targets.setdefault(id(obj), (obj, api))
            if self.keeps_identity(obj, api, top):
                pass  # its class is patched in place: the object stays what torch expects
            elif not (isinstance(obj, type) and self.patch_class(obj, api)):
                try:
                    setattr(holder, name, self.stub(api))
                except (AttributeError, TypeError):
                    continue
            self.replaced[f"{where}.{name}"] = api

    # -- where -------------------------------------------------------------------------------
    def install(self):
        """Resolve the forbidden list here and replace it everywhere it is held; after a
        library import, in the modules it brought."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated attributes warn when looked at
            self._install()

    def _install(self):
        torch = sys.modules.get("torch")
        if self.backward_kernels and not self.backward_ops and torch is not None \
                and hasattr(torch, "_C"):
            self.backward_ops = backward_op_names(torch)
            self.switches = {id(real): (real, guard)
                             for real, guard in grad_switches(torch, self.report)}
        if self.fused_activation and not self.activation_ops and torch is not None \
                and hasattr(torch, "_C"):
            self.activation_ops = self.fused_activation_ops(
                getattr(torch._C, "_jit_get_all_schemas", lambda: [])())
            self.activation_names = {q.split("::", 1)[1]: api
                                     for q, api in self.activation_ops.items()}
        families = {}
        for entry in self.entries:
            # a family is known by its name, loaded or not: a module walked now holds
            # members of a family whose own module torch loads later (flex attention)
            last = entry.get("family")
            if last and self.words(last):
                families[entry["api"]] = (entry["api"], entry["api"].split(".")[0], last,
                                          self.words(last)[-1])
            for path in entry["paths"]:
                obj = resolve(path)
                if obj is None or isinstance(obj, types.ModuleType):
                    continue
                if id(obj) not in self.stub_ids:
                    self.targets.setdefault(id(obj), (obj, entry["api"]))
        if list(families.values()) != self.families:
            self.owners = {}
        self.families = list(families.values())
        for name, module in list(sys.modules.items()):
            top = name.split(".")[0]
            if top in self.tops and name not in self.walked \
                    and isinstance(module, types.ModuleType):
                self.walked.add(name)
                try:
                    items = list(vars(module).items())
                except TypeError:
                    continue
                self.cover(module, items, top)
        if "torch" in self.tops and not self.torch_covered and torch is not None \
                and hasattr(torch, "Tensor"):
            self.torch_covered = True
            self.cover_torch(torch)
        self.cover_decompositions()  # torch._decomp may come later, with a lazy import

    def cover_torch(self, torch):
        tensor = torch.Tensor
        self.cover(tensor, [(n, getattr(tensor, n, None)) for n in dir(tensor)], "torch")
        functions = getattr(torch._C, "_VariableFunctions", None)
        if functions is not None and not isinstance(functions, Shadow):
            replaced = {}
            for name in dir(functions):
                if name.startswith("__"):
                    continue  # its own machinery (__class__), never a computation
                obj = getattr(functions, name, None)
                api = self.verdict(name, obj, "torch")
                if api is not None:
                    self.targets.setdefault(id(obj), (obj, api))
                    replaced[name] = self.stub(api)
            self.replaced.update({f"torch._C._VariableFunctions.{n}": self.targets.get(
                id(getattr(functions, n)), (None, "?"))[1] for n in replaced})
            shadow = Shadow(functions, replaced)
            torch._C._VariableFunctions = shadow
            torch._C._VariableFunctionsClass = shadow
            vf = sys.modules.get("torch._VF")
            if vf is not None:
                vf.vf = shadow  # torch._VF forwards every other name to it
                for name, stub in replaced.items():
                    setattr(vf, name, stub)
        packets = self.cover_op_packets(torch)
        self.cover_op_lookup(torch, packets)
        for real, wrapper in op_lookups_by_name(torch, packets):
            self.switches[id(real)] = (real, wrapper)
            setattr(torch._C, real.__name__, wrapper)
        self.packets = packets
        self.cover_decompositions()

    def cover_op_packets(self, torch):
        """Replace the ``torch.ops`` packet of every forbidden op, in every namespace torch's
        registry lists (``aten``, and ``mkldnn``, ``onednn``, ``quantized``, ``static_runtime``
        ...: a layer norm or a fused GELU there is the same computation); returns
        ``{"ns::op": its ForbiddenOp}``."""
        ops = getattr(torch, "ops", None)
        names = getattr(torch._C, "_dispatch_get_all_op_names", lambda: [])()
        packets = {}  # "ns::op" -> its ForbiddenOp, for every namespace object of that name
        for qualified in sorted({n.split(".")[0] for n in names if "::" in n}):
            space, _, op = qualified.partition("::")
            # outside aten (quantized, oneDNN, static runtime kernels) every name reads as a
            # private one: quantized::batch_norm1d_relu is a batch norm fused with a relu
            read_as = op if space == "aten" or op.startswith("_") else "_" + op
            api = self.activation_ops.get(qualified) or self.family_of(read_as, None, "torch")
            if api is None or ops is None:
                continue
            try:
                namespace = getattr(ops, space)
            except Exception:  # noqa: BLE001 - a namespace torch lists but cannot build
                continue
            try:
                real = getattr(namespace, op)
            except Exception:  # noqa: BLE001 - an op torch lists but cannot build here
                real = None
            packet = forbidden_op(self.stub(api), None if isinstance(real, ForbiddenOp)
                                  else real)
            self.stub_ids.add(id(packet))
            setattr(namespace, op, packet)
            packets[qualified] = packet
            self.replaced[f"torch.ops.{space}.{op}"] = api
        return packets

    def cover_decompositions(self):
        """torch's Python decompositions of a forbidden op (``embedding_dense_backward``
        written in Python, for the compilers and vmap) sit in dictionaries keyed by op, not
        in module names: each is replaced by the op's stub, in every table loaded so far."""
        decomp = sys.modules.get("torch._decomp")
        if not self.packets or decomp is None:
            return
        for table_name in ("decomposition_table", "pre_autograd_decomposition_table"):
            table = vars(decomp).get(table_name)
            if not isinstance(table, dict) or id(table) in self.walked_tables:
                continue
            self.walked_tables.add(id(table))
            for key in list(table):
                op = getattr(key, "__name__", "").split(".")[0]
                qualified = f"{getattr(key, 'namespace', '')}::{op}"
                if qualified in self.packets:
                    table[key] = self.packets[qualified]

    def cover_op_lookup(self, torch, packets):
        """A second ``_OpNamespace("aten")`` object, or torch's packet lookup called by name,
        would build the real packet afresh: both answer with the stub for a forbidden op."""
        ops = getattr(torch, "_ops", None)
        namespace = getattr(ops, "_OpNamespace", None)
        if namespace is not None and packets:
            real_getattr = namespace.__getattr__

            def getattr_of_namespace(ns, op_name, _real=real_getattr):
                packet = packets.get(f"{vars(ns).get('name')}::{op_name}")
                return packet if packet is not None else _real(ns, op_name)

            namespace.__getattr__ = getattr_of_namespace
        real_packet = getattr(ops, "_get_packet", None)
        if real_packet is not None and packets:

            def get_packet(qualified_name, *args, _real=real_packet, **kwargs):
                packet = packets.get(str(qualified_name).split(".")[0])
                if packet is not None:
                    packet()     # reports the forbidden op and stops
                return _real(qualified_name, *args, **kwargs)

            ops._get_packet = get_packet

    # -- imports after the install -----------------------------------------------------------
    def find_spec(self, name, path=None, target=None):
        """``sys.meta_path`` finder: a refused package reports; a library module is loaded by
        the usual finders, through a loader that covers it when its import ends."""
        top = name.split(".")[0]
        if top in self.refused:
            self.report(top)
        if top not in self.tops:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = CoveringLoader(spec.loader, self)
        return spec


class CoveringLoader:
    """A library module's own loader; when the outermost library import ends, the enforcer
    covers whatever it brought."""

    def __init__(self, loader, enforcer):
        self.loader, self.enforcer = loader, enforcer

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.enforcer.depth += 1
        try:
            self.loader.exec_module(module)
        finally:
            self.enforcer.depth -= 1
        if self.enforcer.depth == 0:
            self.enforcer.install()


class AllowList:
    """``sys.meta_path`` finder: the import rule at run time, as an allow-list.

    A top-level module that is not ``allowed`` (the standard library, NumPy, torch and what it
    needs where torch is allowed: ``requirements.runtime_allowed`` in the judge) nor already
    imported when the rule was installed is refused, whatever spelling named it
    (``__import__("sk" + "learn")``, ``importlib.import_module``): imported by the solution's
    own line, it reports ``forbidden`` with the module's name (so does a module allowed only
    as torch's dependency, ``library_only``: sympy); imported by library code (an
    optional dependency torch tries inside ``try/except ImportError``), it is not installed as
    far as that code can tell: its import raises ``ModuleNotFoundError`` (``RefusedLoader``),
    so the library goes on without it, and an ``importlib.util.find_spec`` probe gets a spec
    without origin (a module installed nowhere gets the usual None). A private module of the standard library that
    ``sys.stdlib_module_names`` does not list (``_sysconfigdata_<platform>``) is found in the
    standard library's own folders and allowed.
    """

    def __init__(self, allowed, refused, report, shown_as, library_only=()):
        self.allowed = (set(allowed) | {n.split(".")[0] for n in sys.modules}) - set(refused)
        self.refused = set(refused)
        # allowed only as torch's dependencies (sympy ...): library code loads them, the
        # solution's own import is refused, as the static rule refuses ``import sympy``
        self.library_only = set(library_only)
        self.report, self.shown_as = report, shown_as
        # The standard library's own folders: a private module of it that
        # sys.stdlib_module_names does not list (sysconfig's _sysconfigdata_<platform>) is
        # found there; site-packages is a folder below, never searched by this.
        here = os.path.dirname(os.__file__)
        self.stdlib_dirs = [d for d in (here, os.path.join(here, "lib-dynload"))
                            if os.path.isdir(d)]

    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in self.allowed:
            if top in self.library_only and importer_file() == self.shown_as:
                self.report(top)
            return None  # the usual finders load it
        if top not in self.refused and top == name \
                and importlib.machinery.PathFinder.find_spec(top, self.stdlib_dirs) is not None:
            self.allowed.add(top)
            return None
        if importer_file() == self.shown_as:
            self.report(top)
        if not self.installed(name, path, target):
            return None  # a library probing for an optional module finds it absent, as it is
        # Installed, asked for by library code: a spec without origin (importlib.util.find_spec
        # probes, as torch._dynamo's do, get an answer) whose loading fails as "not installed"
        return importlib.machinery.ModuleSpec(name, RefusedLoader())

    def installed(self, name, path, target):
        """Would another finder load ``name``?"""
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            if find(name, path, target) is not None:
                return True
        return False


class RefusedLoader:
    """Loads nothing: importing the module fails as if it were not installed (an optional
    dependency in ``try/except ImportError`` is skipped)."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__spec__.name
        raise ModuleNotFoundError(f"No module named {name!r} (not allowed in this exercise)",
                                  name=name)


def importer_file(getframe=sys._getframe):
    """The file whose code asked for the import under way: the first frame outside the
    import machinery (importlib's frozen bootstrap, the ``importlib`` package, this file)."""
    frame = getframe(1)
    here = frame.f_code.co_filename
    machinery = os.path.dirname(getattr(sys.modules.get("importlib"), "__file__", "") or "")
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name == here or name.startswith("<frozen importlib")
                or (machinery and os.path.dirname(name) == machinery)):
            return name
        frame = frame.f_back
    return None


def op_lookups_by_name(torch, packets):
    """``[(original, replacement)]`` for torch's C functions that find an ATen op by its name
    (``torch._C._jit_get_operation("aten::gelu")``, ``_get_operation_overload``,
    ``_dispatch_call_boxed`` on a handle from ``_dispatch_find_schema_or_throw``).

    torch builds its op packets with them, so torch's own code keeps working: for a forbidden
    op (``packets``: "ns::op" -> its ForbiddenOp) the lookup answers with the stub in place of
    the callable, and a boxed call of a forbidden op's handle reports. Whoever asks, a call
    is what reports, as for ``torch.ops.aten``; ``packets`` are keyed ``"ns::op"``, any
    namespace (``mkldnn::_linear_pointwise``)."""
    C = torch._C

    def forbidden(qualified_name):
        return packets.get(str(qualified_name).split(".")[0])

    get_operation, get_overload = C._jit_get_operation, C._get_operation_overload
    call_boxed = C._dispatch_call_boxed

    def _jit_get_operation(qualified_name, *args, **kwargs):
        op, overload_names = get_operation(qualified_name, *args, **kwargs)
        stub = forbidden(qualified_name)
        return (op if stub is None else stub), overload_names

    def _get_operation_overload(qualified_name, *args, **kwargs):
        found = get_overload(qualified_name, *args, **kwargs)
        stub = forbidden(qualified_name)
        if stub is None or found is None:
            return found
        _op, _op_for_key, *rest = found  # the op, and the op run for one dispatch key
        return (stub, lambda *a, **k: stub(), *rest)

    def _dispatch_call_boxed(handle, *args, **kwargs):
        stub = forbidden(handle.schema().name)
        if stub is not None:
            stub()
        return call_boxed(handle, *args, **kwargs)

    return [(get_operation, _jit_get_operation), (get_overload, _get_operation_overload),
            (call_boxed, _dispatch_call_boxed)]


def backward_op_names(torch):
    """The ATen operators that compute a gradient: every op in torch's registry whose name
    holds the word ``backward`` (``embedding_dense_backward``, ``nll_loss_backward``,
    ``_log_softmax_backward_data``), and forward mode's dual numbers, every op holding the
    word ``dual`` (``_make_dual``, ``_unpack_dual``), without namespace or overload."""
    names = getattr(torch._C, "_dispatch_get_all_op_names", lambda: [])()
    ops = {n.split("::", 1)[1].split(".")[0] for n in names if n.startswith("aten::")}
    return {op for op in ops if {"backward", "dual"} & set(op.split("_"))}


# The name a "without autograd" verdict gives to forward-mode recording switched on (a dual
# level, or forward gradients switched back on). Grad mode asked on just stays off.
FORWARD_AD_ON = "torch.autograd.forward_ad"


def grad_switches(torch, report):
    """``[(original, replacement)]`` for torch's C entry points that turn gradient recording on.

    Every Python route to a graph goes through one of them: ``torch.enable_grad``,
    ``set_grad_enabled`` (a context, a decorator or a call) and torch's own code that uses them
    (``Optimizer.step(closure)``, ``torch.distributions``' lazy properties) end in
    ``torch._C._set_grad_enabled``; ``inference_mode(False)`` in ``torch._C._InferenceMode``,
    which turns grad mode on; forward mode needs a dual level (``torch._C._enter_dual_level``)
    and forward gradients on (``torch._C._set_fwd_grad_enabled``).

    Grad mode asked on stays off, silently: torch's own helpers ask for it (a distribution
    built from ``probs`` computes its ``logits`` under ``enable_grad``) and must keep working
    in honest code, and with recording off a ``grad_fn`` walk finds no graph. Forward mode
    has no such honest use here, so entering a dual level or turning forward gradients on is
    reported (``forbidden``, naming ``torch.autograd.forward_ad``)."""
    C = torch._C
    set_grad, set_fwd = C._set_grad_enabled, C._set_fwd_grad_enabled
    inference, enter_level = C._InferenceMode, C._enter_dual_level

    def set_grad_enabled(mode):
        return set_grad(False)

    def set_fwd_grad_enabled(mode):
        if mode:
            report(FORWARD_AD_ON)
        return set_fwd(mode)

    def inference_mode(mode=True):
        guard = inference(mode)
        if not mode:  # inference mode off turns grad mode on: back off inside the guard
            set_grad(False)
        return guard

    def enter_dual_level(*args, **kwargs):
        report(FORWARD_AD_ON)

    return [(set_grad, set_grad_enabled), (set_fwd, set_fwd_grad_enabled),
            (inference, inference_mode), (enter_level, enter_dual_level)]


def grad_off_everywhere(torch):
    """Grad mode (and forward gradients) off in this thread and in every thread started from
    now on; asked back on, grad mode stays off and forward gradients are refused
    (:func:`grad_switches`).

    Grad mode is per thread in torch, and a new thread starts with it on: a solution that ran
    its loss in a ``threading.Thread`` (or a ``concurrent.futures`` pool, built on it) would
    record a graph there and could call its ``grad_fn`` nodes by hand. Every way Python starts
    a thread ends in one of ``_thread``'s start functions (``start_new_thread``; from Python
    3.13 ``start_joinable_thread``), and ``threading`` holds its own references to them, so
    each is wrapped: the new thread turns grad mode off before its target runs."""
    import _thread
    import threading

    set_grad, set_fwd = torch._C._set_grad_enabled, torch._C._set_fwd_grad_enabled
    set_grad(False)
    set_fwd(False)  # forward mode too: grad mode off does not stop dual numbers

    def without_grad(start):
        def start_thread(function, *args, **kwargs):
            def target(*a, **k):
                set_grad(False)
                set_fwd(False)
                return function(*a, **k)
            return start(target, *args, **kwargs)
        return start_thread

    for name in ("start_new_thread", "start_joinable_thread"):
        real = getattr(_thread, name, None)
        if real is None:
            continue
        wrapped = without_grad(real)
        for holder, attr in ((_thread, name), (_thread, "start_new"),
                             (threading, "_" + name)):
            if getattr(holder, attr, None) is real:
                setattr(holder, attr, wrapped)


# Every way Python starts a process ends in one of these (``subprocess`` in
# ``_posixsubprocess.fork_exec`` or ``os.posix_spawn``; ``os.spawn*`` in ``os.fork`` and
# ``os.exec*``; ``multiprocessing`` in ``os.fork`` or ``_posixsubprocess``): module -> names.
PROCESS_STARTS = {
    "_posixsubprocess": ["fork_exec"],
    "os": ["fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen", "execl",
           "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe"],
    "pty": ["fork"],
}


def refuse_processes(report):
    """Starting a process reports ``forbidden`` naming the call (``os.system``,
    ``_posixsubprocess.fork_exec`` for ``subprocess.run`` ...), whatever name reaches it.

    Why: a new Python starts without the stubs, so a solution could run the forbidden API
    there (``subprocess.run([sys.executable, "-c", ...])``) and pass. Each function is
    replaced by identity in every loaded module that holds it (``posix.system`` is
    ``os.system``; ``subprocess`` keeps its own ``_fork_exec``); a module imported later
    takes the stub from ``os`` or ``_posixsubprocess``. ``multiprocessing``'s process start
    and ``ProcessPoolExecutor`` are refused by their own names. Threads stay allowed.
    ``ctypes`` calling the C library's ``fork`` or ``exec`` is deliberate evasion: out of
    scope (Python cannot fence in Python in its own process; the sandbox is the fence)."""
    import concurrent.futures.process
    import importlib
    import multiprocessing.process

    def refuser(api):
        def forbidden(*args, **kwargs):
            report(api)
        forbidden.__name__ = forbidden.__qualname__ = api.rsplit(".", 1)[-1]
        forbidden.__doc__ = f"{api}: starting a process is forbidden in the judge"
        return forbidden

    originals = {}  # id -> (original function, its stub): held, so ids stay unique
    for module_name, names in PROCESS_STARTS.items():
        module = importlib.import_module(module_name)
        for name in names:
            real = getattr(module, name, None)
            if real is not None and id(real) not in originals:
                originals[id(real)] = (real, refuser(f"{module_name}.{name}"))
    for module in list(sys.modules.values()):
        if not isinstance(module, types.ModuleType):
            continue
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for name, value in items:
            hit = originals.get(id(value))
            if hit is not None and hit[0] is value:
                try:
                    setattr(module, name, hit[1])
                except (AttributeError, TypeError):
                    pass
    multiprocessing.process.BaseProcess.start = refuser("multiprocessing.Process.start")
    concurrent.futures.process.ProcessPoolExecutor.__init__ = refuser(
        "concurrent.futures.ProcessPoolExecutor")


# torch's compiler stacks (astscan.COMPILER_STACKS, the same list: this file imports nothing of
# minimodel): no exercise's answer calls them, and their pattern libraries hold the forbidden
# computations in plain ops (torch._inductor.fx_passes.fuse_attention._sfdp_pattern_1; the
# ONNX exporter's torch.onnx.ops.attention).
COMPILER_STACKS = ("torch.fx", "torch._dynamo", "torch._inductor", "torch._functorch",
                   "torch._higher_order_ops", "torch._export", "torch.onnx")


def stack_of(name):
    """The compiler stack module ``name`` is or lies inside, or None."""
    return next((s for s in COMPILER_STACKS if name == s or name.startswith(s + ".")), None)


class StackImports:
    """The solution's own import of a compiler stack reports, whatever spelling built the name
    (``__import__("torch._ind" + "uctor...")``, ``from torch import _dynamo``): a module not
    loaded yet through this ``sys.meta_path`` finder, one torch has loaded already through
    ``builtins.__import__`` (:meth:`importer`), which every ``import`` line calls. torch's own
    imports of them (lazy, for its compilers) go on."""

    def __init__(self, report, shown_as):
        self.report, self.shown_as = report, shown_as

    def find_spec(self, name, path=None, target=None):
        stack = stack_of(name)
        if stack is not None and importer_file() == self.shown_as:
            self.report(stack)
        return None  # the usual finders load it

    def importer(self, real):
        """``builtins.__import__`` that reports an import line of the solution naming a
        stack (the module or a name it imports from its parent: ``from torch import _dynamo``)."""
        def __import__(name, globals=None, locals=None, fromlist=(), level=0):
            if level == 0 and sys._getframe(1).f_code.co_filename == self.shown_as:
                for wanted in (name, *(f"{name}.{item}" for item in (fromlist or ())
                                       if isinstance(item, str))):
                    stack = stack_of(wanted)
                    if stack is not None:
                        self.report(stack)
            return real(name, globals, locals, fromlist, level)
        return __import__


def enforce(entries, refused, report, family, allowed=None, shown_as=None,
            backward_kernels=False, library_only=()):
    """Install the stubs now and for every later import (``family``: the module
    ``family.py``) and, given ``allowed`` top-level modules, the import allow-list
    (:class:`AllowList`; ``library_only``: those of them only library code may import);
    with ``backward_kernels`` (an exercise without autograd), every ATen gradient kernel
    too; returns the :class:`Enforcer`."""
    enforcer = Enforcer(entries, refused, report, family, backward_kernels)
    enforcer.install()
    sys.meta_path.insert(0, enforcer)
    if shown_as is not None and "torch" in enforcer.tops:
        stacks = StackImports(report, shown_as)
        sys.meta_path.insert(0, stacks)
        builtins.__import__ = stacks.importer(builtins.__import__)
    if allowed is not None:
        sys.meta_path.insert(0, AllowList(allowed, refused, report, shown_as, library_only))
    return enforcer


def learner_line(shown_as, getframe=sys._getframe):
    """The line of the solution's file that is running now (innermost), or 0."""
    frame = getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == shown_as:
            return frame.f_lineno
        frame = frame.f_back
    return 0


def reporter(shown_as, emit, exit_now=os._exit):
    """``report(api)``: say ``forbidden`` through the pipe and end the process at once."""
    def report(api):
        emit(event="forbidden", name=api, line=learner_line(shown_as))
        exit_now(0)
    return report
