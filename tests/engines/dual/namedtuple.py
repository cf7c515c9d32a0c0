"""Style: `Dual` as a `typing.NamedTuple` (val, der = 0.0), immutable, with the operators
defined on it. A NamedTuple cannot convert its fields in a constructor, so `Dual(3)` keeps the
int 3 as its val, as such classes do. The tuple's own `+` (concatenation) and `*` (repetition)
are replaced by the dual-number rules. Correct.
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
            return Dual(self.val * other.val, self.der * other.val + self.val * other.der)
        return Dual(self.val * other, self.der * other)

    def __rmul__(self, other):
        return Dual(other * self.val, other * self.der)

    def sin(self):
        return Dual(math.sin(self.val), math.cos(self.val) * self.der)

    def exp(self):
        e = math.exp(self.val)
        return Dual(e, e * self.der)
