"""The input bounds every reader shares: nesting depth, YAML aliases, NUL characters and
Kubernetes' cap on annotations, for manifests, workloads, scenarios and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.simulate import cluster_queue, flavor, job, local_queue

from admission.simulate.scenario import parse_scenario
from berth.cli.main import main
from quota.core.errors import InvalidInput, Problem
from quota.manifests.documents import load_documents, parse_objects
from quota.manifests.jobs import parse_workload
from quota.manifests.limits import MAX_ALIAS_NODES, MAX_ANNOTATIONS_BYTES, MAX_DEPTH, read_documents

KUEUE = "kueue.x-k8s.io/v1beta1"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def flow_lists(levels: int) -> str:
    return "a: " + "[" * levels + "]" * levels


def block_mappings(levels: int) -> str:
    return "".join("  " * i + "a:\n" for i in range(levels)) + "  " * levels + "b"


def json_objects(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def chained_aliases(anchors: int, per_anchor: int) -> str:
    """Each anchor nests the one before inside ``per_anchor`` more lists: deep only once
    the aliases are followed, each line short."""
    lines = []
    for i in range(anchors):
        inner = f"*a{i - 1}" if i else "1"
        lines.append(f"a{i}: &a{i} " + "[" * per_anchor + inner + "]" * per_anchor)
    return "\n".join(lines)


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs": each level lists the one before nine times."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines)


def problem_of(text: str) -> Problem:
    with pytest.raises(InvalidInput) as caught:
        read_documents(text, "in.yaml")
    (problem,) = caught.value.problems
    return problem


# --- depth ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(flow_lists(600), id="YAML flow lists 600 deep (a 1.2 KB body)"),
        pytest.param(block_mappings(600), id="YAML block mappings 600 deep"),
        pytest.param(flow_lists(MAX_DEPTH), id="one level past the bound"),
        pytest.param(json_objects(700), id="JSON objects 700 deep: json parses, the walk refuses"),
        pytest.param(json_objects(5000), id="JSON objects 5000 deep: too deep for json itself"),
        pytest.param("[" * 5000, id="JSON opened 5000 deep and never closed"),
        pytest.param(chained_aliases(12, 10), id="deep only through chained aliases"),
    ],
)
def test_nesting_past_the_bound_is_refused_not_a_recursion_error(text: str) -> None:
    problem = problem_of(text)
    assert f"nested deeper than {MAX_DEPTH} levels" in problem.message
    assert problem.source == "in.yaml"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(flow_lists(MAX_DEPTH - 1), id="YAML exactly at the bound"),
        pytest.param(json_objects(MAX_DEPTH - 1), id="JSON exactly at the bound"),
    ],
)
def test_nesting_at_the_bound_is_read(text: str) -> None:
    ((_, doc),) = read_documents(text, "in.yaml")
    assert isinstance(doc, dict)


def test_the_depth_problem_names_the_field_and_line() -> None:
    text = "spec:\n  template: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH
    problem = problem_of(text)
    assert problem.field.startswith("spec.template[0][0]")
    assert problem.message.startswith("line 2, column ")


# --- aliases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param(alias_bomb(), f"expand to more than {MAX_ALIAS_NODES} nodes", id="billion laughs"),
        pytest.param(alias_bomb(6), f"expand to more than {MAX_ALIAS_NODES} nodes", id="a million laughs"),
        pytest.param("a: &a [*a]", "refers to a node that contains it", id="a list that contains itself"),
        pytest.param("a: &a {b: *a}", "refers to a node that contains it", id="a mapping that contains itself"),
    ],
)
def test_aliases_past_the_bound_are_refused_while_composing(text: str, words: str) -> None:
    # Refused by counting while the YAML is composed: nothing walks the expansion.
    problem = problem_of(text)
    assert words in problem.message


def test_a_merge_key_and_repeated_anchors_within_the_bound_are_read() -> None:
    text = "base: &b {x: 1, y: 2}\nc: {<<: *b, z: 3}\nd: [*b, *b]\n"
    ((_, doc),) = read_documents(text, "in.yaml")
    assert doc == {"base": {"x": 1, "y": 2}, "c": {"x": 1, "y": 2, "z": 3},
                   "d": [{"x": 1, "y": 2}, {"x": 1, "y": 2}]}  # fmt: skip


# --- NUL -----------------------------------------------------------------------------------


def resource_flavor(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "f"}, "spec": spec}


def with_metadata(doc: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {**doc, "metadata": {**doc["metadata"], **metadata}}


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        pytest.param(with_metadata(flavor(), labels={"team": "a\0"}), "metadata.labels.team", id="label value"),
        pytest.param(with_metadata(flavor(), labels={"te\0am": "a"}), "metadata.labels[te\\0am]", id="label key"),
        pytest.param(with_metadata(flavor(), annotations={"berth.dev/x": "\0"}), "metadata.annotations[berth.dev/x]", id="annotation value"),
        pytest.param(resource_flavor(nodeLabels={"gpu": "h100\0"}), "spec.nodeLabels.gpu", id="nodeLabel value"),
        pytest.param(resource_flavor(tolerations=[{"key": "gpu\0", "operator": "Exists"}]), "spec.tolerations[0].key", id="toleration key"),
        pytest.param(job("ns/j", 1, annotations={"note": "a\0b"}), "metadata.annotations.note", id="Job annotation"),
        pytest.param({**job("ns/j", 1), "status": {"why": "\0"}}, "status.why", id="a field no reader looks at"),
    ],
)
@pytest.mark.parametrize("encode", [pytest.param(yaml.safe_dump, id="YAML"), pytest.param(json.dumps, id="JSON")])
def test_nul_in_any_string_is_refused_naming_the_field(doc: dict[str, Any], field: str, encode: Any) -> None:
    problem = problem_of(encode(doc))
    assert problem.field == field
    assert problem.message.endswith("must not contain NUL characters")


@pytest.mark.parametrize(
    ("text", "field"),
    [
        pytest.param('{"metadata": {"labels": {"team": "\\ud800"}}}', "metadata.labels.team", id="JSON escape of half a surrogate pair"),
        pytest.param('metadata: {annotations: {"\\ud800": x}}', "metadata.annotations[\\ud800]", id="YAML escape in a key"),
    ],
)
def test_a_lone_surrogate_is_refused_as_not_text(text: str, field: str) -> None:
    problem = problem_of(text)
    assert problem.field == field
    assert "lone UTF-16 surrogate" in problem.message


# --- annotations ---------------------------------------------------------------------------


def notes_of_size(total: int) -> dict[str, str]:
    """Annotations whose keys and values add up to ``total`` bytes."""
    return {"berth.dev/note": "x" * (total - len("berth.dev/note"))}


def node(notes: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "annotations": notes},
            "status": {"capacity": {"nvidia.com/gpu": 8}}}  # fmt: skip


def workload(template_notes: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE, "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1, "template": {
            "metadata": {"annotations": template_notes},
            "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": 1}}}]}}}]},
    }  # fmt: skip


def annotation_problems(doc: dict[str, Any]) -> list[Problem]:
    try:
        if doc["kind"] in ("Job", "Workload"):
            parse_workload(doc, source="in.yaml", document=0, created_at=NOW)
        else:
            parse_objects([("in.yaml", 0, doc)])
    except InvalidInput as exc:
        return exc.problems
    return []


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        pytest.param(with_metadata(flavor(), annotations=notes_of_size(857 * 1024)), "metadata.annotations", id="an 857 KiB map on a ResourceFlavor"),
        pytest.param(node(notes_of_size(MAX_ANNOTATIONS_BYTES + 1)), "metadata.annotations", id="one byte over on a Node"),
        pytest.param(job("ns/j", 1, annotations=notes_of_size(MAX_ANNOTATIONS_BYTES + 1)), "metadata.annotations", id="a submitted Job"),
        pytest.param(workload(notes_of_size(MAX_ANNOTATIONS_BYTES + 1)), "spec.podSets[0].template.metadata.annotations", id="a Workload's pod template"),
        pytest.param(with_metadata(flavor(), annotations={"é": "é" * (MAX_ANNOTATIONS_BYTES // 2)}), "metadata.annotations", id="counted in UTF-8 bytes, not characters"),
    ],
)
def test_annotations_over_256_kib_are_refused(doc: dict[str, Any], field: str) -> None:
    (problem,) = annotation_problems(doc)
    assert problem.field == field
    assert f"at most {MAX_ANNOTATIONS_BYTES}" in problem.message


@pytest.mark.parametrize(
    "doc",
    [
        pytest.param(with_metadata(flavor(), annotations=notes_of_size(MAX_ANNOTATIONS_BYTES)), id="a ResourceFlavor at the limit"),
        pytest.param(job("ns/j", 1, annotations=notes_of_size(MAX_ANNOTATIONS_BYTES)), id="a Job at the limit"),
    ],
)
def test_annotations_at_256_kib_are_accepted(doc: dict[str, Any]) -> None:
    assert annotation_problems(doc) == []


# --- every reader --------------------------------------------------------------------------


def scenario_with(create: list[Any]) -> str:
    return yaml.safe_dump({"objects": [flavor(), cluster_queue("cq", 8), local_queue("ns", "cq")],
                           "steps": [{"at": "0s", "create": create}]})  # fmt: skip


@pytest.mark.parametrize(
    ("read", "text", "words"),
    [
        pytest.param(load_documents, flow_lists(600), "nested deeper", id="manifests: deep"),
        pytest.param(load_documents, alias_bomb(), "aliases expand", id="manifests: alias bomb"),
        pytest.param(parse_scenario, flow_lists(600), "nested deeper", id="scenario: deep"),
        pytest.param(parse_scenario, alias_bomb(), "aliases expand", id="scenario: alias bomb"),
        pytest.param(parse_scenario, scenario_with([job("ns/j", 1, annotations={"a": "\0"})]), "NUL", id="scenario: NUL in a created Job"),
    ],
)
def test_every_text_reader_has_the_bounds(read: Any, text: str, words: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        read(text, "in.yaml")
    assert words in caught.value.problems[0].message


@pytest.mark.parametrize(
    ("command", "text", "words"),
    [
        pytest.param(["apply", "-f"], flow_lists(600), "nested deeper", id="berth apply -f: deep YAML"),
        pytest.param(["apply", "-f"], json_objects(5000), "nested deeper", id="berth apply -f: deep JSON"),
        pytest.param(["apply", "-f"], yaml.safe_dump(with_metadata(flavor(), labels={"a": "\0"})), "NUL", id="berth apply -f: NUL"),
        pytest.param(["simulate"], alias_bomb(), "aliases expand", id="berth simulate: alias bomb"),
        pytest.param(["simulate"], flow_lists(600), "nested deeper", id="berth simulate: deep YAML"),
    ],
)
def test_the_cli_exits_2_with_the_problem(
    command: list[str], text: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    assert main([*command, str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and words in err
