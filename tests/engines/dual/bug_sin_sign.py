"""Style: frozen-dataclass Dual (as in dual/dataclass_frozen.py). One bug: sin's derivative is
`-cos(a) a'`.
The bug is at line 38.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Dual:
    val: float
    der: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "val", float(self.val))
        object.__setattr__(self, "der", float(self.der))

    @classmethod
    def const(cls, x):
        return x if isinstance(x, cls) else cls(x)

    def __add__(self, other):
        o = Dual.const(other)
        return Dual(self.val + o.val, self.der + o.der)

    def __radd__(self, other):
        return Dual.const(other) + self

    def __mul__(self, other):
        o = Dual.const(other)
        return Dual(self.val * o.val, self.val * o.der + self.der * o.val)

    def __rmul__(self, other):
        return Dual.const(other) * self

    def sin(self):
        return Dual(math.sin(self.val), -self.der * math.cos(self.val))

    def exp(self):
        return Dual(math.exp(self.val), self.der * math.exp(self.val))
