"""What runs inside a worker: the only code of the kit that shares a process with a submission.

Everything in this folder can be read, patched and replaced by the code it imports, so no
defence lives here: the trusted side (the rest of the package) checks every reply itself.
`serve.py` is the worker's program; `scenarios/` holds the programs it runs on a submission.
Nothing here imports the trusted side, and the trusted side imports nothing from here but
`serve` (the zygote loads it, to fork workers from); it reads the scenarios' sources as text
(`autograder/scenario_sources.py`) and sends them to the worker. `tests/grading/test_boundary.py`
holds both rules.

The protocol: one JSON object per line on a pipe each way, one request at a time.

    grader -> worker     fields                                   what the worker does
    boot (first line)    files: engine -> source (Latin-1 text)   writes them into its folder
                         scenarios: module -> source              compiles them as `scenarios`
    load                 load: engine name, limit                 imports that engine file
    scenario             scenario: "module:function", kwargs,     runs it on the loaded engine,
                         limit, draw (optional)                   under a CPU timer of `limit` s

    worker -> grader     fields                                   checked on the trusted side by
    answered             observations (plain JSON; an array is    worker.Reply.from_json (form and
                         {"ndarray", "shape"}), graphs if draw    bounds), answers.malformed (structure)
    raised               raised (class name), message, where      worker.Reply.from_json (bounds)
    timeout              timeout: true (its own timer fired)      worker.Worker (its own clock)
    unplain              unplain: why it was not plain data       worker.Reply.from_json

What the worker prints goes to a third pipe, counted and cut at `output_kb` by the trusted
side. A reply that is not one of these, a line past 8 MB, a worker that dies, closes its
pipe, stops reading, or takes longer than its limit is judged by the trusted side alone
(`worker.py`), and the worker is replaced for the next request.
"""
