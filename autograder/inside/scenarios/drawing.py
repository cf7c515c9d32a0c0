"""Drawing the graph a value scenario built, for the message of a scenario it failed.

Runs inside the worker, on the submission's objects as on the reference's: it reads only the
given constructor's fields, turns every number into a plain float itself, and draws nothing
from anything else. The trusted side checks a drawing before it reads it (graphs.py).
"""

from __future__ import annotations

from .common import drawing, drawn

# A graph with more nodes (the chain a thousand deep), or a node with more parents, is not drawn.
MAX_NODES = 64
MAX_PARENTS = 8


class Recorder:
    """Records every Value made inside `with Recorder(value) as recorder:`, in the order made
    (by wrapping the class's __init__ for that long), so that `draw` can draw the graph."""

    def __init__(self, value) -> None:
        self.Value, self.made, self.original = value.Value, [], None
        self.passes: dict[int, dict[int, list]] = {}  # by id of node, then of parent: [before, after]

    def __enter__(self):
        original = self.Value.__init__

        def recording(node, *args, **kwargs):
            original(node, *args, **kwargs)
            self.made.append(node)

        try:
            self.Value.__init__ = recording
            self.original = original
        except (AttributeError, TypeError):
            pass  # a class that cannot be wrapped: nothing is recorded
        return self

    def __exit__(self, *exc_info) -> None:
        if self.original is not None:
            self.Value.__init__ = self.original

    def draw(self, root, **names) -> None:
        """In a request that draws graphs, draw the graph that ends at `root` (common.drawn), with
        the snippet's `names` of some values; a graph that cannot be read is drawn as None."""
        if not drawing():
            return
        try:
            graph = self._graph(root, names)
        except Exception:  # noqa: BLE001 - a graph the submission's objects do not let us read is not drawn
            graph = None
        drawn(graph)

    def _graph(self, root, names: dict) -> dict | None:
        """The drawing: nodes newest first (an order from the output), each [op, data, grad,
        parent indices, passes], and `names` -> node index (None: not reached); `passes` is each
        parent's gradient [before, after] the node's rule where the kit's Tape ran it, else None.
        None for a graph that cannot be read so (other fields, too large, a node made elsewhere)."""
        order = {id(node): index for index, node in enumerate(self.made)}
        if id(root) not in order:
            return None
        found, stack, older = {id(root)}, [root], []
        while stack:
            parents = stack.pop()._prev
            if type(parents) not in (tuple, list, set, frozenset) or len(parents) > MAX_PARENTS:
                return None
            for parent in parents:
                if id(parent) not in found:
                    if id(parent) not in order:
                        if parent._prev:
                            return None  # an inner node made elsewhere: its place in the order is unknown
                        older.append(parent)  # a leaf made before the block: older than every node in it
                    found.add(id(parent))
                    stack.append(parent)
            if len(found) > MAX_NODES:
                return None
        nodes = [node for node in reversed(self.made) if id(node) in found] + older
        index = {id(node): position for position, node in enumerate(nodes)}
        rows = []
        for node in nodes:
            parents = list(node._prev)
            if type(node._prev) in (set, frozenset):  # no order of its own: the order made, not addresses
                parents.sort(key=lambda parent: index[id(parent)])
            passed = self.passes.get(id(node))
            passes = None  # the rule did not run under the Tape, or a parent is not recorded
            if passed is not None and all(id(parent) in passed for parent in parents):
                passes = [[_plain(grad) for grad in passed[id(parent)]] for parent in parents]
            op = getattr(node, "_op", "")
            rows.append([str.__str__(op)[:40] if isinstance(op, str) else "", _plain(node.data),
                         _plain(node.grad), [index[id(parent)] for parent in parents], passes])
        return {"nodes": rows, "names": {name: index.get(id(v)) for name, v in names.items()}}


def _plain(x) -> float:
    """A number of the submission's as a plain float; anything else is not drawn."""
    if type(x) is float:
        return x
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, int) and not isinstance(x, bool):
        return float(int.__index__(x))
    raise TypeError("not a number")
