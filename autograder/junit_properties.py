"""What a grading records of each test in pytest's report (--junitxml): each scenario it asked
and the misconceptions its checks may name. The plugin writes them here; the kit's own tools
(`autograder check`, `autograder replicas`, mutation testing, the benchmarks) read them here.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

SCENARIO = "scenario"
SUSPECTS = "suspects"


def scenario_property(scenario_id: str, kwargs: dict) -> tuple[str, str]:
    """The property that records one scenario call of a test."""
    return SCENARIO, json.dumps([scenario_id, kwargs], sort_keys=True)


def suspects_property(suspects: dict) -> tuple[str, str]:
    """The property that records the misconceptions a test's check may name."""
    return SUSPECTS, json.dumps(sorted(suspects))


@dataclass(frozen=True)
class RecordedCall:
    """One scenario call of a test, as the report records it."""

    test: str  # module:function, parametrizations together
    scenario: str
    kwargs: dict
    recorded: str  # the property's text: the same for the same call, wherever it was made


def test_of(case: ElementTree.Element) -> str:
    """A report's test case as `module:function`, its parametrizations together."""
    return f"{case.get('classname')}:{case.get('name').split('[')[0]}"


test_of.__test__ = False  # a helper, though its name starts like a test's


def recorded_calls(junit: Path) -> list[RecordedCall]:
    """Every scenario call the report records, in the order the tests made them."""
    return [RecordedCall(test_of(case), *json.loads(prop.get("value")), prop.get("value"))
            for case in ElementTree.parse(junit).iter("testcase")
            for prop in case.iter("property") if prop.get("name") == SCENARIO]


def distinct_calls(junit: Path) -> list[tuple[str, dict]]:
    """Each scenario call the report records, once: (scenario id, kwargs)."""
    found = {call.recorded: (call.scenario, call.kwargs) for call in recorded_calls(junit)}
    return list(found.values())


def suspects_named(junit: Path) -> dict[str, set[str]]:
    """Module:function -> the misconception ids its checks may name."""
    named: dict[str, set[str]] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        for prop in case.iter("property"):
            if prop.get("name") == SUSPECTS:
                named.setdefault(test_of(case), set()).update(json.loads(prop.get("value")))
    return named
