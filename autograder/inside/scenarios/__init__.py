"""The scenarios: small deterministic programs over one engine's public API, run in the worker.

Each module holds the scenarios of one engine (`value`, `tensor`, `dual`) or of the training
runs, declared with `@scenario` (common.py). The worker compiles them as the package
`scenarios` from the sources the grader sends; the trusted side reads them as text only
(autograder/scenario_sources.py).
"""
