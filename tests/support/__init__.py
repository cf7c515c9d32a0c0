"""What the kit's own tests share: where the kit is, and the seeds its questions are asked at."""

import os
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent.parent

# The seeds the kit's own tests ask the suites' questions at, beside the public one: whatever a
# test proves of the suites (fairness, diagnoses, mutation, the numbers a message states) it
# proves at each. An official grading draws its seed from a secret; these stand for any.
SEEDS = ("5eed0001", "c0ffee42", "0ddba115")
EVERY_SEED = ("public", *SEEDS)
CORES = os.cpu_count() or 2
