"""tensor.training: the tensor engine trains the lesson's network on a small copy of digits.

The run is cut down to take a tenth of a second or less with the reference: 300 digits for
10 epochs. Every epoch's loss is judged with the looser training tolerance, and the final
accuracy must be the reference's.
"""

from autograder.answers import Series
from autograder.datasets import grading_data
from autograder.parts import Part
from autograder.suspects import raised_saying

PART = Part("tensor.training",
            misconceptions=("unbroadcast-leading-axes",))

# An operand's gradient that kept the batch axis cannot be added into the operand's own .grad.
NOT_SUMMED = raised_saying("ValueError", "non-broadcastable output operand")


# A correct engine can still be too slow: the time limit is a multiple of the reference's.
SLOW = ("A correct engine is this slow when unbroadcast loops over the gradient's elements in Python: "
        "sum whole axes with NumPy (grad.sum(axis=..., keepdims=True)) instead.")


def test_a_network_on_digits(grade, ask):
    """The tensor engine trains a 64-{hidden}-10 ReLU network on 300 digits: {epochs} epochs, lr {lr},
    batches of {batch_size}."""
    grade("training:train_digits", tolerance="training", epochs=10, lr=0.2, batch_size=32, hidden=128,
          seed=ask.seed(0), suspects={"unbroadcast-leading-axes": NOT_SUMMED},
          series=Series("losses", "epoch"), slow=SLOW, **grading_data("digits"))
