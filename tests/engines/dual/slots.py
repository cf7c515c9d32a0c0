"""Style: `Dual` as a small class with `__slots__ = ("val", "der")`, a static helper that lifts
a plain number to a constant Dual, and reflected forms that are the same functions as the
forward ones (`__radd__ = __add__`, `__rmul__ = __mul__`: both operations commute). Also gives
`-`, `/` and `**`, as fuller solutions do. Correct.
"""

import math


class Dual:
    __slots__ = ("val", "der")

    def __init__(self, val, der=0.0):
        self.val = float(val)
        self.der = float(der)

    def __repr__(self):
        return f"Dual({self.val}, {self.der})"

    @staticmethod
    def lift(x):
        return x if isinstance(x, Dual) else Dual(x, 0.0)

    def __add__(self, other):
        other = Dual.lift(other)
        return Dual(self.val + other.val, self.der + other.der)

    __radd__ = __add__

    def __mul__(self, other):
        other = Dual.lift(other)
        return Dual(self.val * other.val, self.der * other.val + self.val * other.der)

    __rmul__ = __mul__

    def __neg__(self):
        return Dual(-self.val, -self.der)

    def __sub__(self, other):
        return self + (-Dual.lift(other))

    def __rsub__(self, other):
        return Dual.lift(other) - self

    def __truediv__(self, other):
        other = Dual.lift(other)
        return Dual(self.val / other.val,
                    (self.der * other.val - self.val * other.der) / (other.val * other.val))

    def __pow__(self, k):
        return Dual(self.val ** k, k * self.val ** (k - 1) * self.der)

    def sin(self):
        return Dual(math.sin(self.val), math.cos(self.val) * self.der)

    def cos(self):
        return Dual(math.cos(self.val), -math.sin(self.val) * self.der)

    def exp(self):
        e = math.exp(self.val)
        return Dual(e, e * self.der)
