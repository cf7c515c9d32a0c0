"""Style: compare-by-data engine (as in value/tuple_stack_eq_by_data.py). One bug: backward() has
no topological sort: it walks the graph depth-first from the root (visited ids in a dict) and
runs each node's rule when it first reaches it, before all its consumers have contributed.
The bug is at lines 188-197.
"""

import math


class Value:
    __hash__ = None  # equality is by value, so no hash

    def __init__(self, data, _prev=(), _op=""):
        self.data = float(data)
        self.grad = 0.0
        self._prev = tuple(_prev)
        self._backward = lambda: None
        self._op = _op

    def __repr__(self):
        return "Value(data=%r, grad=%r)" % (self.data, self.grad)

    # comparisons by number, like a float would
    def _num(self, other):
        return other.data if isinstance(other, Value) else other

    def __eq__(self, other):
        return self.data == self._num(other)

    def __lt__(self, other):
        return self.data < self._num(other)

    def __le__(self, other):
        return self.data <= self._num(other)

    def __gt__(self, other):
        return self.data > self._num(other)

    def __ge__(self, other):
        return self.data >= self._num(other)

    # arithmetic
    def __add__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward():
            self.grad += out.grad
            other.grad += out.grad

        out._backward = _backward
        return out

    def __mul__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward():
            self.grad += out.grad * other.data
            other.grad += out.grad * self.data

        out._backward = _backward
        return out

    def reciprocal(self):
        out = Value(1.0 / self.data, (self,), "1/x")

        def _backward():
            self.grad += -out.grad / (self.data * self.data)

        out._backward = _backward
        return out

    def __truediv__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        return self * other.reciprocal()

    def __rtruediv__(self, other):
        return self.reciprocal() * other

    def __pow__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        out = Value(self.data ** k, (self,), "**%s" % k)

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad

        out._backward = _backward
        return out

    def __neg__(self):
        out = Value(-self.data, (self,), "neg")

        def _backward():
            self.grad -= out.grad

        out._backward = _backward
        return out

    def __sub__(self, other):
        if not isinstance(other, Value):
            other = Value(other)
        out = Value(self.data - other.data, (self, other), "-")

        def _backward():
            self.grad += out.grad
            other.grad -= out.grad

        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __rsub__(self, other):
        return (-self) + other

    def __rmul__(self, other):
        return self * other

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def _backward():
            self.grad += out.grad * out.data

        out._backward = _backward
        return out

    def log(self):
        out = Value(math.log(self.data), (self,), "log")

        def _backward():
            self.grad += out.grad / self.data

        out._backward = _backward
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,), "tanh")

        def _backward():
            self.grad += out.grad * (1.0 - out.data * out.data)

        out._backward = _backward
        return out

    def relu(self):
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward():
            self.grad += out.grad * (1.0 if self.data > 0 else 0.0)

        out._backward = _backward
        return out

    def sigmoid(self):
        out = Value(0.5 * (1.0 + math.tanh(0.5 * self.data)), (self,), "sigmoid")

        def _backward():
            self.grad += out.grad * out.data * (1.0 - out.data)

        out._backward = _backward
        return out

    # graph walks, by id() only
    def _postorder(self):
        order, seen = [], {}
        stack = [(self, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen[id(node)] = node
            stack.append((node, True))
            for parent in node._prev:
                if id(parent) not in seen:
                    stack.append((parent, False))
        return order

    def backward(self):
        self.grad = 1.0
        seen, stack = {}, [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen[id(node)] = True
            node._backward()
            stack.extend(node._prev)

    def zero_grad(self):
        seen = {}
        stack = [self]
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen[id(node)] = True
            node.grad = 0.0
            stack.extend(node._prev)
