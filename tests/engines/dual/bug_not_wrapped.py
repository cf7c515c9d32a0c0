"""Style: module-level functions as methods (as in dual/module_functions.py). One bug: `add` reads
`.val` and `.der` of both operands without lifting a plain number, so `x + 2` and `2 + x` raise
AttributeError.
The bug is at line 23.
"""

import math


class Dual:
    def __init__(self, val, der=0.0):
        self.val = float(val)
        self.der = float(der)

    def __repr__(self):
        return "Dual(val=%g, der=%g)" % (self.val, self.der)


def as_dual(x):
    return x if isinstance(x, Dual) else Dual(x)


def add(a, b):
    return Dual(a.val + b.val, a.der + b.der)


def mul(a, b):
    a, b = as_dual(a), as_dual(b)
    return Dual(a.val * b.val, a.der * b.val + a.val * b.der)


def sin(a):
    return Dual(math.sin(a.val), math.cos(a.val) * a.der)


def exp(a):
    v = math.exp(a.val)
    return Dual(v, v * a.der)


Dual.__add__ = add
Dual.__radd__ = lambda self, other: add(other, self)
Dual.__mul__ = mul
Dual.__rmul__ = lambda self, other: mul(other, self)
Dual.sin = sin
Dual.exp = exp
