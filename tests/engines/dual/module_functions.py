"""Style: forward mode as plain functions. The rules are module-level functions of two
(val, der) pairs (`add`, `mul`, `sin`, `exp`), and a bare `Dual` class gets them assigned as
its methods after it is defined, with the reflected forms calling the same functions with the
operands swapped. Correct.
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
    a, b = as_dual(a), as_dual(b)
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
