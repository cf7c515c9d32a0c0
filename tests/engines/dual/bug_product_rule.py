"""Style: NamedTuple Dual (as in dual/namedtuple.py). One bug: the product's derivative is `a' *
b'` instead of `a' b + a b'`.
The bug is at line 24.
"""

import math
from typing import NamedTuple


class Dual(NamedTuple):
    val: float
    der: float = 0.0

    def __add__(self, other):
        if isinstance(other, Dual):
            return Dual(self.val + other.val, self.der + other.der)
        return Dual(self.val + other, self.der)

    def __radd__(self, other):
        return Dual(other + self.val, self.der)

    def __mul__(self, other):
        if isinstance(other, Dual):
            return Dual(self.val * other.val, self.der * other.der)
        return Dual(self.val * other, self.der * other)

    def __rmul__(self, other):
        return Dual(other * self.val, other * self.der)

    def sin(self):
        return Dual(math.sin(self.val), math.cos(self.val) * self.der)

    def exp(self):
        e = math.exp(self.val)
        return Dual(e, e * self.der)
