"""An Idempotency-Key compares what a submission means — the spec text, each
file's name and digest, the query — not its bytes: real curl picks a new
multipart boundary on every call, so a retried upload must replay, while a
changed file or spec is still a 409. No cluster here: runs stay Accepted."""
import base64
import json
import subprocess

import pytest

import tokens
from world import kind_cpu_gateway, smoke_body

BODY = smoke_body()
SCRIPT = base64.b64decode(BODY["files"]["train.sh"])
RUNS = "/v1/workspaces/ray/runs"


@pytest.fixture(scope="module")
def gw(db_url):
    with kind_cpu_gateway(db_url) as g:
        yield g


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    d = tmp_path_factory.mktemp("project")
    (d / "tau.yaml").write_text(BODY["spec"])
    (d / "train.sh").write_bytes(SCRIPT)
    (d / "notes.txt").write_text("kept with the run\n")
    return d


def curl_submit(gw, key, parts, query=""):
    """POST multipart/form-data with real curl; returns (status, headers, body)."""
    cmd = ["curl", "-sS", "-D", "-", "-X", "POST", f"{gw.url}{RUNS}{query}",
           "-H", f"Authorization: Bearer {tokens.admin_token()}", "-H", f"Idempotency-Key: {key}"]
    for name, path in parts:
        cmd += ["-F", f"{name}=@{path}"]
    out = subprocess.run(cmd, capture_output=True, check=True, timeout=30).stdout.decode()
    head, _, body = out.partition("\r\n\r\n")
    while head.split()[1].startswith("1"):  # "100 Continue" comes first
        head, _, body = body.partition("\r\n\r\n")
    lines = head.split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body)


def test_a_retried_multipart_upload_replays_the_run(gw, project):
    parts = [("spec", project / "tau.yaml"), ("file", project / "train.sh")]
    status, headers, first = curl_submit(gw, "mp-retry", parts)
    assert status == 201 and "idempotency-replayed" not in headers, first
    status, headers, again = curl_submit(gw, "mp-retry", parts)
    assert status == 201, again
    assert headers.get("idempotency-replayed") == "true"
    assert again["id"] == first["id"]


def test_the_same_files_in_another_order_or_as_json_replay(gw, project):
    parts = [("spec", project / "tau.yaml"), ("file", project / "train.sh"),
             ("file", project / "notes.txt")]
    _, _, first = curl_submit(gw, "mp-order", parts)
    status, headers, again = curl_submit(gw, "mp-order", [parts[2], parts[0], parts[1]])
    assert status == 201 and headers.get("idempotency-replayed") == "true"
    assert again["id"] == first["id"]
    as_json = dict(BODY, files=dict(BODY["files"], **{
        "notes.txt": base64.b64encode((project / "notes.txt").read_bytes()).decode()}))
    r = gw.req("POST", RUNS, body=as_json, headers={"Idempotency-Key": "mp-order"})
    assert r.status == 201 and r.header("Idempotency-Replayed") == "true"
    assert r.json()["id"] == first["id"]


def test_a_changed_file_spec_or_file_set_is_a_conflict(gw, project, tmp_path):
    parts = [("spec", project / "tau.yaml"), ("file", project / "train.sh")]
    _, _, first = curl_submit(gw, "mp-change", parts)
    changed = tmp_path / "train.sh"
    changed.write_bytes(SCRIPT + b"echo one more line\n")
    spec = tmp_path / "tau.yaml"
    spec.write_text(BODY["spec"] + "# a comment changes the spec text\n")
    for other in ([parts[0], ("file", changed)],
                  [("spec", spec), parts[1]],
                  parts + [("file", project / "notes.txt")]):
        status, _, problem = curl_submit(gw, "mp-change", other)
        assert status == 409, problem
        assert "Idempotency-Key mp-change was already used" in problem["detail"]
    # the original request still replays after the refusals
    status, headers, again = curl_submit(gw, "mp-change", parts)
    assert status == 201 and headers.get("idempotency-replayed") == "true"
    assert again["id"] == first["id"]


def test_the_query_counts_but_not_its_order(gw, project):
    """A submission takes no query parameters today; whatever query a request
    carries still counts, so a parameter added later cannot make a retry
    replay a different request. (Sent with curl: openapi.yaml, which the
    recorded exchanges are checked against, documents none.)"""
    parts = [("spec", project / "tau.yaml"), ("file", project / "train.sh")]
    status, _, first = curl_submit(gw, "query-1", parts, "?a=1&b=2")
    assert status == 201, first
    status, headers, again = curl_submit(gw, "query-1", parts, "?b=2&a=1")
    assert status == 201 and headers.get("idempotency-replayed") == "true"
    assert again["id"] == first["id"]
    for other in ("", "?a=1", "?a=1&b=3", "?a=1&b=2&b=2"):
        status, _, problem = curl_submit(gw, "query-1", parts, other)
        assert status == 409, (other, problem)
