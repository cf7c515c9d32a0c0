"""Style: dual numbers as "pairs with an epsilon": a Dual stores (val, der) and every rule is
written as the algebra of a + b*eps with eps**2 = 0 (the product expanded term by term, the
eps**2 term dropped). Plain numbers are handled by a type check in each method, without
building a Dual; the chain rules of sin and exp go through one helper `_chain(f, df)`.
Correct.
"""

import math


class Dual:
    def __init__(self, val, der=0.0):
        self.val, self.der = float(val), float(der)

    def __repr__(self):
        return f"{self.val} + {self.der}eps"

    def __add__(self, other):
        if isinstance(other, (int, float)):
            return Dual(self.val + other, self.der)
        return Dual(self.val + other.val, self.der + other.der)

    def __radd__(self, other):
        return self.__add__(other)

    def __mul__(self, other):
        if isinstance(other, (int, float)):
            return Dual(self.val * other, self.der * other)
        # (a + a'eps)(b + b'eps) = ab + (a'b + ab')eps + a'b' eps**2, and eps**2 = 0
        real = self.val * other.val
        eps = self.der * other.val + self.val * other.der
        return Dual(real, eps)

    def __rmul__(self, other):
        return self.__mul__(other)

    def _chain(self, f, df):
        return Dual(f(self.val), df(self.val) * self.der)

    def sin(self):
        return self._chain(math.sin, math.cos)

    def exp(self):
        return self._chain(math.exp, math.exp)
