"""value.training: the scalar engine trains the lesson's network on a small copy of make_moons.

The run is cut down to take a tenth of a second or less with the reference: 30 moons for 5
steps. Every step's loss is judged with the looser training tolerance, and the final accuracy
must be the reference's.
"""

from autograder.datasets import grading_data
from autograder.judge import unwrapped
from autograder.parts import Part

PART = Part("value.training",
            misconceptions=("number-not-wrapped",))


def test_a_network_on_moons(grade, ask):
    """The scalar engine trains a 2-{hidden}-{hidden}-1 ReLU network on 30 moons: {steps} full-batch
    steps, lr {lr}."""
    grade("training:train_moons", tolerance="training", steps=5, lr=1.0, seed=ask.seed(0), hidden=8,
          suspects={"number-not-wrapped": unwrapped("data")},
          **grading_data("moons"))
