"""tensor.training: the tensor engine trains the lesson's network on a small copy of digits.

The run is cut down to take a tenth of a second or less with the reference: 300 digits for
10 epochs. Every epoch's loss is judged with the looser training tolerance, and the final
accuracy must be the reference's.
"""

from autograder.datasets import grading_data
from autograder.judge import Series, raised_saying
from autograder.parts import Part

PART = Part("tensor.training",
            misconceptions=("unbroadcast-leading-axes",))

# An operand's gradient that kept the batch axis cannot be added into the operand's own .grad.
NOT_SUMMED = raised_saying("ValueError", "non-broadcastable output operand")


def test_a_network_on_digits(grade, ask):
    """The tensor engine trains a 64-128-10 ReLU network on 300 digits: {epochs} epochs, lr {lr},
    batches of {batch_size}."""
    grade("training:train_digits", tolerance="training", epochs=10, lr=0.2, batch_size=32, seed=ask.seed(0),
          suspects={"unbroadcast-leading-axes": NOT_SUMMED}, series=Series("losses", "epoch"),
          **grading_data("digits"))
