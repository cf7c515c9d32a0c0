"""value.training: the scalar engine trains the lesson's network on a small copy of make_moons.

The run is cut down to take a tenth of a second or less with the reference: 30 moons for 5
steps. Every step's loss is judged with the looser training tolerance, and the final accuracy
must be the reference's.
"""

from autograder.answers import Series
from autograder.datasets import grading_data
from autograder.parts import Part
from autograder.suites.loops import SLOW_BACKWARD
from autograder.suspects import unwrapped

PART = Part("value.training",
            misconceptions=("number-not-wrapped",))


# Each step's loss is taken before that step's update: where the first one differs, a forward value
# is wrong; where a later one is the first, the update before it was.
STEPS = Series("losses", "step", first="Its first loss is computed before any update: an operation's forward "
               "value differs.", later="The losses before it agree, so the forward values are right, and the "
               "update after the last of them differs: a gradient (an operation's rule, backward() or "
               "zero_grad()) is wrong.")


def test_a_network_on_moons(grade, ask):
    """The scalar engine trains a 2-{hidden}-{hidden}-1 ReLU network on 30 moons: {steps} full-batch
    steps, lr {lr}."""
    grade("training:train_moons", tolerance="training", steps=5, lr=1.0, seed=ask.seed(0), hidden=8,
          suspects={"number-not-wrapped": unwrapped("data")}, series=STEPS, slow=SLOW_BACKWARD,
          **grading_data("moons"))
