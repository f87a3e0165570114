"""A submitted manifest with ``metadata.generateName`` and no name gets one, as the API
server gives it (Kueue's examples are written for ``kubectl create``)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from admission.intake.workloads import named


@pytest.mark.parametrize(
    ("metadata", "pattern"),
    [
        pytest.param({"generateName": "sample-job-"}, r"sample-job-[bcdfghjklmnpqrstvwxz2456789]{5}",
                     id="the prefix and five characters"),
        pytest.param({"name": "fixed", "generateName": "sample-job-"}, r"fixed", id="a name wins"),
        pytest.param({}, None, id="neither: left for the parser to name the missing field"),
    ],
)  # fmt: skip
def test_generate_name(metadata: dict[str, Any], pattern: str | None) -> None:
    doc = {"kind": "Job", "metadata": metadata}
    found = named(doc)
    assert isinstance(found, dict)
    name = found["metadata"].get("name")
    if pattern is None:
        assert name is None and found == doc
    else:
        assert re.fullmatch(pattern, name)


def test_two_generated_names_differ() -> None:
    doc = {"metadata": {"generateName": "x-"}}
    names = {named(doc)["metadata"]["name"] for _ in range(20)}  # type: ignore[index]
    assert len(names) > 1
