"""A small HTTP client for tests (stdlib only).

Contract recording: when the environment variable TAUGATE_CONTRACT_LOG names a
file, request() appends one JSON line per exchange to it (see _record), which
tests/contract/check.js validates against openapi.yaml."""
import base64
import http.client
import json
import os
import threading
import urllib.parse

_record_lock = threading.Lock()
_RECORD_MAX_BODY = 4 << 20  # bodies above this are recorded truncated


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    def __repr__(self):
        return f"<Response {self.status} {self.body[:300]!r}>"


def _record_body(data):
    """A body for the log: {"text": ...} when UTF-8, else {"base64": ...}."""
    if data is None:
        return None
    out = {"size": len(data)}
    if len(data) > _RECORD_MAX_BODY:
        data = data[:_RECORD_MAX_BODY]
        out["truncated"] = True
    try:
        out["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        out["base64"] = base64.b64encode(data).decode("ascii")
    return out


def _record(base, method, path, hdrs, body, resp):
    """Append one exchange to $TAUGATE_CONTRACT_LOG (no-op when unset)."""
    log = os.environ.get("TAUGATE_CONTRACT_LOG")
    if not log:
        return
    req_ct = next((v for k, v in hdrs.items() if k.lower() == "content-type"), None)
    line = json.dumps({
        "base": base, "method": method, "path": path, "status": resp.status,
        "request": {"content_type": req_ct, "body": _record_body(body),
                    "authorization": any(k.lower() == "authorization" for k in hdrs)},
        "response": {"content_type": resp.header("Content-Type"),
                     "location": resp.header("Location"),
                     "request_id": resp.header("X-Request-Id"),
                     "body": _record_body(resp.body)},
    })
    with _record_lock, open(log, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def request(base, method, path, body=None, headers=None, timeout=30):
    """Send one request on a fresh connection. `body` may be bytes, str or a
    JSON-serialisable object (sent as application/json)."""
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    hdrs = dict(headers or {})
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
        hdrs.setdefault("Content-Type", "application/json")
    if isinstance(body, str):
        body = body.encode()
    try:
        conn.request(method, path, body=body, headers=hdrs)
        r = conn.getresponse()
        resp = Response(r.status, r.getheaders(), r.read())
        _record(base, method, path, hdrs, body, resp)
        return resp
    finally:
        conn.close()
