"""Mutation testing of the kit's suites (`autograder mutate [PART ...] [--jobs N]`).

Every small edit of a stub's reference body that changes behaviour must lose points in that
stub's part, and nowhere else but in the parts that need it by nature. The modules, in the
order a run uses them: edits.py (the edits of a stub's body), generate.py (the mutants, as
source), programs.py and probe.py (which mutants change behaviour, told without the suites),
grading.py (each graded as a TA grades a folder), run.py (a whole run and its score), cli.py
(the command). Staff-only: it never ships to students or Gradescope.
"""
