"""value.training and tensor.training: each engine trains the lesson's network on a small copy.

The runs are cut down to take a tenth of a second or less with the reference: 30 moons for 5
steps, 300 digits for 10 epochs. Every step's loss is judged with the looser training tolerance, and
the final accuracy must be the reference's.
"""

import pytest

from autograder.datasets import grading_data
from autograder.judge import raised_saying, unwrapped

# An operand's gradient that kept the batch axis cannot be added into the operand's own .grad.
NOT_SUMMED = raised_saying("ValueError", "non-broadcastable output operand")


@pytest.mark.part("value.training")
def test_a_2_8_8_1_network_on_moons(grade, ask):
    """The scalar engine trains a 2-8-8-1 ReLU network on 30 moons: 5 full-batch steps, lr 1.0."""
    grade("training:train_moons", tolerance="training", steps=5, lr=1.0, seed=ask.seed(0), hidden=8,
          suspects={"number-not-wrapped": unwrapped("data")},
          **grading_data("moons"))


@pytest.mark.part("tensor.training")
def test_a_64_128_10_network_on_digits(grade, ask):
    """The tensor engine trains a 64-128-10 ReLU network on 300 digits: 10 epochs, lr 0.2, batches of 32."""
    grade("training:train_digits", tolerance="training", epochs=10, lr=0.2, batch_size=32, seed=ask.seed(0),
          suspects={"unbroadcast-leading-axes": NOT_SUMMED},
          **grading_data("digits"))
