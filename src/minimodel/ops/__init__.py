"""The differentiable primitives and their backward rules, readable as a table.

Notation: ``g`` is dL/d(out), the gradient arriving from above; each backward returns
dL/d(input) for every positional input (``None`` where no gradient is needed).

    op            forward                 backward                      file
    Add           a + b                   g, g          (unbroadcast)   elementwise.py
    Sub           a - b                   g, -g
    Mul           a * b                   g * b, g * a
    Div           a / b                   g / b, -g * a / b^2
    Neg           -a                      -g
    Pow(p)        a^p                     g * p * a^(p-1)
    Exp           e^a                     g * out
    Log           ln a                    g / a
    Tanh          tanh a                  g * (1 - out^2)
    Sqrt          sqrt a                  g / (2 out)
    Sum/Mean      reduce over axes        g broadcast back (/count)     reduce.py
    Max           max over axes           g to the arg-max entries
    MatMul        a @ b                   g @ b^T, a^T @ g              linalg.py
    Reshape       a.reshape(s)            g.reshape(a.shape)            shape.py
    Transpose     a.transpose(p)          g.transpose(p^-1)
    GetItem       a[i]                    zeros, then scatter-add g at i
    Where(c)      c ? a : b               g where c, g where not c
    Concatenate   [a; b; ...] on axis     g split back into the pieces

One more primitive lives with the chapter it belongs to: the embedding lookup (a row gather
whose backward is a scatter-add), beside the embedding module.

Everything a model computes is a composite of these. Nothing here imports
:mod:`minimodel.tensor`: a primitive sees NumPy arrays only. ``Tensor.__add__`` runs
:func:`add`, ``Add`` behind a replaceable name (its docstring says why).
"""

from minimodel.ops.elementwise import Add, Div, Exp, Log, Mul, Neg, Pow, Sqrt, Sub, Tanh, add
from minimodel.ops.linalg import MatMul
from minimodel.ops.reduce import Max, Mean, Sum
from minimodel.ops.shape import Concatenate, GetItem, Reshape, Transpose, Where

__all__ = ["add", "Add", "Sub", "Mul", "Div", "Neg", "Pow", "Exp", "Log", "Tanh", "Sqrt", "Sum",
           "Mean", "Max", "MatMul", "Reshape", "Transpose", "GetItem", "Where", "Concatenate"]
