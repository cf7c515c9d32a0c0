"""The graph report: where, in the graph a failed scenario built, the gradients first go wrong.

A value scenario's answer carries a drawing of its graph (scenarios/value.py, Recorder) from
the output down: each node's op label, data, gradient, parents and, where the kit ran the
rules, what its rule added to each parent. `report` turns the reference's and the submission's
drawings into a table of the submission's graph, the expected gradient beside each node it
matches, and a sentence on the first difference. It only explains a score the judge decided.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Protocol

MAX_NODES = 64
MAX_PARENTS = 8
MAX_NAMES = 16
MAX_OP = 40
MAX_ROWS = 12  # shown around the first difference
WIDTH = 88
INTRO = "Your graph, from the output, beside the expected one (> marks the first difference):"
COLUMNS = ("row", "node", "op", "data", "your grad", "expected grad", "parents")
# An op label is the submission's text: shown only in these characters, and short.
UNSAFE_OP = re.compile(r"[^A-Za-z0-9_*+\-/.^]")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,11}$")
# The ratio of what a rule gave to what it should have given, when it is one of these.
RATIOS = ((0.5, "half of what it should"), (1 / 3, "a third of what it should"),
          (0.25, "a quarter of what it should"), (2.0, "twice what it should"),
          (3.0, "three times what it should"), (-1.0, "what it should, with the opposite sign"))
GIVEN_RULES = ("Every rule in this graph is a given one, so look at how backward() runs them: each "
               "once per call, a node's only after the nodes it feeds have run theirs, and nothing "
               "cleared in between.")
ROOT_RULE = ("backward() sets the root's gradient to 1.0, whatever it held before, and leaves it there: "
             "a root that ends at another value was not set so, or was changed after its rule ran.")


class Closeness(Protocol):
    """Anything with the judge's `close(got, expected)`: within the tolerances."""

    def close(self, got: float, expected: float) -> bool:
        """Is `got` within the tolerances of `expected`?"""
        ...


@dataclass(frozen=True)
class Node:
    """One node of a drawing: op label, data, gradient, parents (rows), and what its rule did."""

    op: str
    data: float
    grad: float
    parents: tuple[int, ...]  # as drawn: a tuple (x, x) keeps both
    passes: tuple[tuple[float, float], ...] | None  # per parent: its gradient before, after the rule

    @property
    def distinct(self) -> tuple[int, ...]:
        """The parents, each once, in order."""
        return tuple(dict.fromkeys(self.parents))

    def added(self, parent: int) -> tuple[float, float] | None:
        """What this node's rule did to `parent`'s gradient: (before, after), or None."""
        if self.passes is None:
            return None
        return self.passes[self.parents.index(parent)]


@dataclass(frozen=True)
class Graph:
    """A checked drawing: its nodes from the output (row 0), and the snippet's names -> node (or None)."""

    nodes: tuple[Node, ...]
    names: dict[str, int | None]

    def name(self, index: int) -> str | None:
        """The snippet's name of node `index`, or None."""
        return next((name for name, at in self.names.items() if at == index), None)

    def consumers(self, index: int) -> list[int]:
        """The nodes that have node `index` among their parents."""
        return [i for i, node in enumerate(self.nodes[:index]) if index in node.parents]

    @property
    def by_the_kit(self) -> bool:
        """Did the kit's reverse pass run the rules (so that what each rule added is known)?"""
        return any(node.passes is not None for node in self.nodes)


# -- the structure of a drawing ----------------------------------------------------------------

def is_number(x: object) -> bool:
    """Is `x` a plain int or float (no subclass, no bool)?"""
    return type(x) in (int, float)


def unreadable(drawing: object) -> str | None:
    """Why `drawing` (the worker's, untrusted) cannot be the drawing of a graph, or None when it
    has the structure: bounded sizes, plain numbers, parents after their node, every node reached."""
    if not isinstance(drawing, dict) or set(drawing) != {"nodes", "names"}:
        return "not a drawing"
    nodes, names = drawing["nodes"], drawing["names"]
    if not isinstance(nodes, list) or not 1 <= len(nodes) <= MAX_NODES:
        return "no nodes, or too many"
    for index, node in enumerate(nodes):
        if problem := _unreadable_node(index, node, len(nodes)):
            return problem
    if {parent for node in nodes for parent in node[3]} != set(range(1, len(nodes))):
        return "a node the output does not reach"
    def at_a_node(at: object) -> bool:
        return at is None or type(at) is int and 0 <= at < len(nodes)

    if not isinstance(names, dict) or len(names) > MAX_NAMES or not all(
            isinstance(name, str) and NAME.match(name) and at_a_node(at) for name, at in names.items()):
        return "names that are not the snippet's"
    return None


def _unreadable_node(index: int, node: object, count: int) -> str | None:
    """Why node `index` of a drawing of `count` nodes is not [op, data, grad, parents, passes]."""
    if not isinstance(node, list) or len(node) != 5:
        return f"node {index} is not [op, data, grad, parents, passes]"
    op, data, grad, parents, passes = node
    if not isinstance(op, str) or len(op) > MAX_OP or not is_number(data) or not is_number(grad):
        return f"node {index} has no op label, data or gradient"
    if not isinstance(parents, list) or len(parents) > MAX_PARENTS or not all(
            type(p) is int and index < p < count for p in parents):
        return f"node {index} has parents out of range"
    if passes is not None and not (isinstance(passes, list) and len(passes) == len(parents) and all(
            isinstance(p, list) and len(p) == 2 and all(map(is_number, p)) for p in passes)):
        return f"node {index} has passes that do not fit its parents"
    return None


def parse(drawing: object) -> Graph | None:
    """The graph of a drawing, or None when it is malformed."""
    if unreadable(drawing) is not None:
        return None
    nodes = tuple(Node(UNSAFE_OP.sub("?", op)[:8], float(data), float(grad), tuple(parents),
                       None if passes is None else tuple((float(b), float(a)) for b, a in passes))
                  for op, data, grad, parents, passes in drawing["nodes"])
    return Graph(nodes, dict(drawing["names"]))


# -- matching the submission's nodes with the reference's -------------------------------------------

def match(expected: Graph, got: Graph, tol: Closeness) -> dict[int, int]:
    """Pairs of (submission's node, reference's node): the roots, the values the snippet names,
    then, from the output down, the parents of paired nodes by data and op label. Correct engines
    build other graphs, so a node with no counterpart (a composite's extra node) stays unpaired."""
    pairs = {0: 0}
    for name, at in got.names.items():
        other = expected.names.get(name)
        if at is not None and other is not None and at not in pairs and other not in pairs.values():
            pairs[at] = other
    taken = set(pairs.values())
    for mine in range(len(got.nodes)):  # each node comes before its parents
        if mine not in pairs:
            continue
        ours = [p for p in got.nodes[mine].distinct if p not in pairs]
        theirs = [p for p in expected.nodes[pairs[mine]].distinct if p not in taken]
        for same in (lambda a, b: tol.close(a.data, b.data) and a.op == b.op,
                     lambda a, b: tol.close(a.data, b.data)):
            for p in list(ours):
                found = next((q for q in theirs if same(got.nodes[p], expected.nodes[q])), None)
                if found is not None:
                    pairs[p] = found
                    taken.add(found)
                    ours.remove(p)
                    theirs.remove(found)
        if len(ours) == len(theirs) == 1 and same_op(got, mine, expected, pairs[mine]) \
                and same_op(got, ours[0], expected, theirs[0]):
            pairs[ours[0]] = theirs[0]  # the one parent left of the same operation: a wrong value
            taken.add(theirs[0])
    return pairs


def same_op(got: Graph, mine: int, expected: Graph, theirs: int) -> bool:
    """Do the two nodes have the same op label?"""
    return got.nodes[mine].op == expected.nodes[theirs].op


def same_value(got: Graph, mine: int, expected: Graph, theirs: int) -> bool:
    """Are the two surely one value of the snippet: the roots, a name, or one operation's result?
    (A node paired by its data alone may play another part in a graph built otherwise.)"""
    name = got.name(mine)
    return mine == 0 or (name is not None and expected.names.get(name) == theirs) \
        or same_op(got, mine, expected, theirs)


# -- the first difference -------------------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """The first difference: the row to mark and the sentence that says what differs."""

    row: int | None  # the submission's node to mark (0-based), if any
    sentence: str


def number(x: float, digits: int = 10) -> str:
    """A float as the judge shows one: `digits` significant digits, and 3.0 rather than 3."""
    text = f"{x:.{digits}g}"
    return text if any(c in text for c in ".ein") else text + ".0"


def call(graph: Graph, index: int, op: bool = True) -> str:
    """How a sentence names a node: `the `*` node c (row 3)`, or `x (row 2)` without op."""
    name = graph.name(index)
    label = graph.nodes[index].op
    if not op or not label and name:
        return f"{name} (row {index + 1})" if name else f"row {index + 1}"
    kind = f"the `{label}` node" if label else "the node"
    return kind + (f" {name}" if name else "") + f" (row {index + 1})"


def rows_of(indices: list[int]) -> str:
    """`row 2` or `rows 2, 3 and 5`, for 0-based node indices."""
    numbers = [str(i + 1) for i in indices]
    if len(numbers) == 1:
        return "row " + numbers[0]
    return "rows " + ", ".join(numbers[:-1]) + " and " + numbers[-1]


def ratio_word(pairs: list[tuple[float, float]]) -> str | None:
    """`half` when every got is half its expected, and so on; None if there is no one ratio."""
    if not pairs or any(e == 0 for _, e in pairs):
        return None
    for factor, word in RATIOS:
        if all(abs(g - factor * e) <= 1e-9 * (1 + abs(e)) for g, e in pairs):
            return word
    return None


def shape(expected: Graph, got: Graph, pairs: dict[int, int], tol: Closeness) -> Finding | None:
    """A value the snippet names, with a gradient through the reference's graph, that the
    submission's graph does not reach: the one shape difference that is certain, however the
    engine builds its graph. None when there is none."""
    back = {theirs: mine for mine, theirs in pairs.items()}
    for name, theirs in expected.names.items():
        if theirs is None or name not in got.names or got.names[name] is not None \
                or tol.close(0.0, expected.nodes[theirs].grad):
            continue
        sentence = (f"Your graph differs from the expected one in shape: {name} is not in it. No node "
                    f"on the way from the output has {name} among its parents (`_prev`), so no "
                    f"gradient can reach {name}.")
        # The nearest node above it, on the expected graph, that your graph has too.
        level, seen = [theirs], {theirs}
        while level:
            for consumer in (c for node in level for c in expected.consumers(node)):
                mine = back.get(consumer)
                if mine is None or not same_op(got, mine, expected, consumer):
                    continue
                parents = got.nodes[mine].parents
                held = "has as parents " + rows_of(list(parents)) if parents else "has no parents"
                if theirs in expected.nodes[consumer].parents:
                    return Finding(mine, f"{sentence} It should be a parent of {call(got, mine)}, which "
                                         f"{held}: a wrong parents tuple.")
                return Finding(mine, f"{sentence} On the expected graph it reaches the output through "
                                     f"{call(got, mine)}, which here {held}.")
            level = [c for node in level for c in expected.consumers(node) if c not in seen]
            seen.update(level)
        return Finding(None, sentence)
    return None


def forward(expected: Graph, got: Graph, pairs: dict[int, int], tol: Closeness) -> Finding | None:
    """The deepest node that computes a wrong value from the right values of the same parents."""
    for mine in reversed(range(len(got.nodes))):
        theirs = pairs.get(mine)
        if theirs is None:
            continue
        node, other = got.nodes[mine], expected.nodes[theirs]
        if tol.close(node.data, other.data) or node.op != other.op or not node.parents:
            continue
        if {pairs.get(p) for p in node.distinct} != set(other.distinct) or not all(
                tol.close(got.nodes[p].data, expected.nodes[pairs[p]].data) for p in node.distinct):
            continue
        return Finding(mine, f"First difference: {call(got, mine)} computes {number(node.data)} where "
                             f"{number(other.data)} is expected, from parents whose values are right.")
    return None


def gradients(expected: Graph, got: Graph, pairs: dict[int, int], tol: Closeness,
              given_rules: bool) -> Finding | None:
    """From the output: the first node whose rule adds the wrong amount to a parent whose
    gradient the table shows wrong (where the kit ran the rules), or whose gradient is wrong
    though every node it feeds has the right one; else the first wrong rule whose error the
    table cannot show (another error made up for it); else the first node whose gradient is
    wrong (fed by nodes the reference has not)."""
    def right(mine: int) -> bool:  # as the table shows it: beside a node of the same gradient
        theirs = pairs.get(mine)
        return theirs is not None and tol.close(got.nodes[mine].grad, expected.nodes[theirs].grad)

    kit = got.by_the_kit and expected.by_the_kit
    unexplained = None
    hidden = None  # a wrong rule whose parents' gradients all look right in the table: named last
    for mine, node in enumerate(got.nodes):
        theirs = pairs.get(mine)
        if theirs is None or not same_value(got, mine, expected, theirs):
            continue
        other = expected.nodes[theirs]
        if not tol.close(node.grad, other.grad):
            if mine == 0 or all(right(c) for c in got.consumers(mine)):
                return wrong_gradient(expected, got, pairs, mine, given_rules, unexplained is None, True)
            unexplained = mine if unexplained is None else unexplained
            continue
        if not kit or not node.parents:
            continue
        if node.passes is None:
            break  # its rule did not run (a rule before it raised): nothing below is complete
        if not same_op(got, mine, expected, theirs):
            continue  # another operation (a composite's part): its rule is not the reference's
        wrong = [(p, node.added(p), other.added(pairs[p])) for p in node.distinct
                 if pairs.get(p) in other.distinct]
        wrong = [(p, g, e) for p, g, e in wrong if e is not None and not tol.close(g[1] - g[0], e[1] - e[0])]
        if wrong and any(not right(p) for p, _, _ in wrong):
            return wrong_rule(got, mine, wrong, tol, unexplained is None)
        if wrong and hidden is None:
            hidden = (mine, wrong, unexplained is None)
    if hidden is not None:
        return wrong_rule(got, *hidden[:2], tol, hidden[2])
    if unexplained is None:
        return None
    return wrong_gradient(expected, got, pairs, unexplained, given_rules, True, False)


def heading(first: bool) -> str:
    """A difference found after one that the graphs cannot explain is not the first."""
    return "First difference" if first else "First difference that can be traced"


def wrong_rule(got: Graph, mine: int, wrong: list, tol: Closeness, first: bool) -> Finding:
    """The finding for node `mine`, whose rule adds the wrong amount to some parents: `wrong`
    holds (parent, its gradient (before, after) the rule, the expected (before, after))."""
    head = f"{heading(first)}: {call(got, mine)}. Its own gradient is right, but its rule "
    if len(wrong) == 1:
        p, (before, after), (e_before, e_after) = wrong[0]
        share = e_after - e_before
        # A rule that left the gradient where its share would put it added nothing: it set nothing.
        if not tol.close(0.0, before) and tol.close(before, e_before) and tol.close(after, share) \
                and not tol.close(after, before):
            return Finding(mine, f"{head}sets the gradient of {call(got, p, op=False)} to {number(after)}, "
                                 f"its own share, where it should add that share to the {number(before)} "
                                 f"already there (giving {number(e_after)}).")
    parts = []
    for p, (before, after), (e_before, e_after) in wrong:
        gave = after - before
        what = "nothing" if gave == 0 else number(gave)
        parts.append(f"{what} to the gradient of {call(got, p, op=False)} where "
                     f"{number(e_after - e_before)} is expected")
    word = ratio_word([(g[1] - g[0], e[1] - e[0]) for _, g, e in wrong])
    return Finding(mine, head + "adds " + ", and ".join(parts) + (f": {word}." if word else "."))


def wrong_gradient(expected: Graph, got: Graph, pairs: dict[int, int], mine: int, given_rules: bool,
                   first: bool, explained: bool) -> Finding:
    """A node whose gradient is wrong; `explained`: every node it feeds has the right one."""
    node, other = got.nodes[mine], expected.nodes[pairs[mine]]
    numbers = f"its gradient is {number(node.grad)} where {number(other.grad)} is expected"
    if mine == 0:
        return Finding(0, f"{heading(first)}: the root, {call(got, 0)}, itself: {numbers}."
                          + (f" {ROOT_RULE}" if given_rules else ""))
    sentence = f"{heading(first)}: {call(got, mine)}: {numbers}"
    feeds = got.consumers(mine)
    if explained and feeds:
        def feeder(c: int) -> str:
            name, op = got.name(c), got.nodes[c].op
            where = f"row {c + 1}" + (f", `{op}`" if op else "")
            return f"{name} ({where})" if name else f"row {c + 1}" + (f" (`{op}`)" if op else "")

        names = [feeder(c) for c in feeds]
        what = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        one = len(feeds) == 1
        sentence += (f", though the node{'' if one else 's'} it feeds, {what}, "
                     f"{'has' if one else 'have'} the right gradient{'' if one else 's'}: either "
                     f"{'its rule' if one else 'their rules'} passed it the wrong amount, or its "
                     "gradient was changed afterwards (a rule run twice, or a gradient cleared).")
        if given_rules:
            sentence += " " + GIVEN_RULES
    else:
        sentence += "."
    return Finding(mine, sentence)


def first_difference(expected: Graph, got: Graph, tol: Closeness, given_rules: bool) -> Finding | None:
    """The first difference of shape, of a forward value, or of a gradient, or None."""
    pairs = match(expected, got, tol)
    return (shape(expected, got, pairs, tol) or forward(expected, got, pairs, tol)
            or gradients(expected, got, pairs, tol, given_rules))


# -- the table -------------------------------------------------------------------------------------

def grads_text(got: float, expected: float | None, tol: Closeness) -> tuple[str, str]:
    """The two gradients, with as few digits as show that they differ (where they do)."""
    if expected is None:
        return number(got, 6), "-"
    digits = 6
    if not tol.close(got, expected):
        while digits < 17 and number(got, digits) == number(expected, digits):
            digits += 1
    return number(got, digits), number(expected, digits)


def table(expected: Graph, got: Graph, pairs: dict[int, int], mark: int | None, tol: Closeness) -> list[str]:
    """The lines of the table of `got`, at most MAX_ROWS of them around the row `mark`."""
    start = 0 if len(got.nodes) <= MAX_ROWS else max(0, min((mark or 0) - 3, len(got.nodes) - MAX_ROWS))
    shown = range(start, min(len(got.nodes), start + MAX_ROWS))
    cells = [[COLUMNS[0].rjust(4), *COLUMNS[1:]]]
    for index in shown:
        node = got.nodes[index]
        theirs = pairs.get(index)
        mine, wanted = grads_text(node.grad, None if theirs is None else expected.nodes[theirs].grad, tol)
        parents = ", ".join(str(p + 1) for p in node.parents[:3]) + (", ..." if len(node.parents) > 3 else "")
        cells.append([("> " if index == mark else "  ") + f"{index + 1:>2}", got.name(index) or "", node.op,
                      number(node.data, 8), mine, wanted, parents])
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in cells]
    if len(shown) < len(got.nodes):
        lines.append(f"(rows {shown.start + 1} to {shown.stop} of {len(got.nodes)} shown)")
    return lines


def report(expected_drawing: object, got_drawing: object, tol: Closeness,
           given_rules: bool = False, part: str = "") -> str | None:
    """The graph block of a failed scenario's message, or None: when either drawing is missing
    or malformed, or the two graphs show no difference to point at. `part`: the part whose check
    failed, so that a wrong rule of another part's operation is said to be that part's."""
    expected, got = parse(expected_drawing), parse(got_drawing)
    if expected is None or got is None:
        return None
    finding = first_difference(expected, got, tol, given_rules)
    if finding is None:
        return None
    lines = [INTRO, *table(expected, got, match(expected, got, tol), finding.row, tol)]
    sentence = finding.sentence + other_part(got, finding.row, tol, part)
    return "\n".join(lines + [textwrap.fill(sentence, WIDTH)])


# The part whose stub makes the nodes of each operation label, as the handout's `_op` labels them.
PART_OF_OP = {"*": "value.mul", "/": "value.truediv", "tanh": "value.tanh", "relu": "value.relu",
              "sigmoid": "value.sigmoid"}


def other_part(got: Graph, row: int | None, tol: Closeness, part: str) -> str:
    """The sentence that says the fault is another part's, where the kit ran the rules and the
    marked node's whole gradient came from one node of another part's operation (a `/` built
    from `*`, in a check of `/`), or ""."""
    if row is None or not part:
        return ""
    found = [(c, got.nodes[c].added(row)) for c in got.consumers(row)]
    if len(found) != 1 or found[0][1] is None:
        return ""
    consumer, (before, after) = found[0]
    op = got.nodes[consumer].op
    owner = PART_OF_OP.get(op)
    if owner is None or owner == part or not tol.close(got.nodes[row].grad, after) or before != 0:
        return ""
    return (f" All of that gradient came from the rule of the `{op}` node (row {consumer + 1}), which your "
            f"`{op}` made: this check's operation is built from `{op}` here, so the fault is in `{op}` "
            f"(part {owner}).")


# -- reading the block back, for the feedback files --------------------------------------------------

@dataclass(frozen=True)
class Table:
    """A graph table read back from a message: its header, its rows of cells, the marked row."""

    header: list[str]
    rows: list[list[str]]  # the first cell of the marked row starts with "> "
    marked: int | None  # the index in rows of the marked one


def blocks(message: str) -> list[str | Table]:
    """A message split into its text and the graph tables in it, in order, for a renderer that
    shows a table as a table. A table is the line INTRO (kept with the text before it), its
    header, and the rows after it."""
    lines = message.split("\n")
    found: list[str | Table] = []
    text: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index] == INTRO and index + 1 < len(lines) \
                and lines[index + 1].split() == " ".join(COLUMNS).split():
            header = lines[index + 1]
            starts = [0]
            for name in COLUMNS[1:]:
                starts.append(header.find("  " + name, starts[-1]) + 2)
            rows, marked = [], None
            index += 2
            while index < len(lines) and re.match(r"^[> ] +\d+(  |$)", lines[index]):
                line = lines[index]
                cells = [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
                cells[0] = " ".join(cells[0].split())  # "> 3" or "3"
                if line.startswith(">"):
                    marked = len(rows)
                rows.append(cells)
                index += 1
            found.append("\n".join([*text, INTRO]))
            text = []
            found.append(Table(list(COLUMNS), rows, marked))
            continue
        text.append(lines[index])
        index += 1
    if text:
        found.append("\n".join(text))
    return found

