"""``POST /api/v1/apply?dryRun=All`` answers what would change and writes nothing; DELETE
removes an object (or finishes a workload) and says when there is nothing by that name."""

from __future__ import annotations

import httpx
from builders.manifests import job
from builders.reads import pool


def test_a_dry_run_answers_the_change_and_writes_nothing(api: httpx.Client) -> None:
    assert api.post("/api/v1/apply", content=pool(("team-a", 4))).status_code == 200
    before = api.get("/api/v1/clusterqueues/team-a").json()["spec"]
    audit = len(api.get("/api/v1/audit").json()["items"])

    answer = api.post("/api/v1/apply", params={"dryRun": "All"}, content=pool(("team-a", 6)))
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["dryRun"] is True
    change = next(c for c in body["changes"] if c["kind"] == "ClusterQueue")
    assert change["action"] == "configured"
    quota = change["after"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    stored = change["before"]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert (stored["nominalQuota"], quota["nominalQuota"]) == ("4", "6")
    assert {c["action"] for c in body["changes"] if c["kind"] != "ClusterQueue"} == {"unchanged"}

    assert api.get("/api/v1/clusterqueues/team-a").json()["spec"] == before, "a dry run wrote"
    assert len(api.get("/api/v1/audit").json()["items"]) == audit, "a dry run was audited"


def test_a_dry_run_of_a_new_object_has_nothing_before(api: httpx.Client) -> None:
    answer = api.post("/api/v1/apply?dryRun=All", content=pool(("team-b", 2))).json()
    created = next(c for c in answer["changes"] if c["kind"] == "ClusterQueue")
    assert (created["action"], created["before"]) == ("created", None)
    assert api.get("/api/v1/clusterqueues").json()["items"] == []


def test_delete_removes_objects_and_404s_what_is_not_there(api: httpx.Client) -> None:
    assert api.post("/api/v1/apply", content=pool(("team-a", 4))).status_code == 200
    gone = api.delete("/api/v1/localqueues/team-a/main")
    assert gone.status_code == 200 and gone.json()["metadata"]["name"] == "main"
    assert api.get("/api/v1/localqueues/team-a/main").status_code == 404
    assert api.delete("/api/v1/clusterqueues/team-a").status_code == 200
    again = api.delete("/api/v1/clusterqueues/team-a")
    assert again.status_code == 404
    assert again.json()["error"]["message"] == "ClusterQueue 'team-a' not found"


def test_deleting_a_workload_finishes_it(api: httpx.Client) -> None:
    assert api.post("/api/v1/apply", content=pool(("team-a", 4))).status_code == 200
    assert api.post("/api/v1/workloads", json=job("train", 2)).status_code == 201
    deleted = api.delete("/api/v1/workloads/team-a/train")
    assert deleted.status_code == 200, deleted.text
    assert api.get("/api/v1/workloads/team-a/train").json()["state"] == "Finished"
    assert api.delete("/api/v1/workloads/team-a/ghost").status_code == 404


def test_a_dry_run_submit_checks_and_answers_but_writes_nothing(api: httpx.Client) -> None:
    assert api.post("/api/v1/apply", content=pool(("team-a", 4))).status_code == 200
    tried = api.post("/api/v1/workloads?dryRun=All", json=job("train", 2))
    assert tried.status_code == 201, tried.text
    assert (tried.json()["name"], tried.json()["state"]) == ("train", "Pending")
    assert api.get("/api/v1/workloads/team-a/train").status_code == 404
    assert api.post("/api/v1/workloads", json=job("train", 2)).status_code == 201
    twice = api.post("/api/v1/workloads", params={"dryRun": "All"}, json=job("train", 2))
    assert twice.status_code == 409, "a dry run skipped the check an unfinished namesake fails"
