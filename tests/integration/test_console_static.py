"""The gateway serving the built web console under /ui/ (gateway/api/console.c):
hashed assets cached for good, index.html revalidated, deep links answered with
index.html, precompressed twins chosen by Accept-Encoding, ETags, a strict CSP
on every answer, and clear problems when the folder is missing or wrong.

A small folder stands in for `make console`'s output, so these run without
Node. The requests go through http.client directly: /ui/ is not an API
operation, so it stays out of the contract log."""
import gzip
import hashlib
import http.client
import json

import pytest

from gateway import Gateway
from paths import BUILD

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; worker-src 'self'; manifest-src 'self'; font-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

INDEX = b"<!doctype html><title>console</title><script type=module src=/ui/assets/app-1a2b3c.js></script>"
APP = b"console.log('app');\n" * 40
APP_GZ = gzip.compress(APP, mtime=0)
BROTLI_INDEX = b"pretend-brotli-bytes-of-index"  # the gateway sends the file as built


def get(gw, path, headers=None, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    d = tmp_path_factory.mktemp("console-dist")
    (d / "assets").mkdir()
    (d / "index.html").write_bytes(INDEX)
    (d / "index.html.gz").write_bytes(gzip.compress(INDEX))
    (d / "index.html.br").write_bytes(BROTLI_INDEX)
    (d / "assets" / "app-1a2b3c.js").write_bytes(APP)
    (d / "assets" / "app-1a2b3c.js.gz").write_bytes(APP_GZ)
    (d / "favicon.svg").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    return d


@pytest.fixture(scope="module")
def gw(db_url, dist):
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_CONSOLE_DIR": str(dist)}).start()
    yield g
    status = g.stop()
    logs = g.logs()
    g.close()
    assert status == 0, logs[-3000:]


def assert_hardened(h):
    assert h["content-security-policy"] == CSP
    assert h["x-content-type-options"] == "nosniff"
    assert h["referrer-policy"] == "no-referrer"
    assert h["x-frame-options"] == "DENY"


@pytest.mark.parametrize("path", ["/ui", "/ui/", "/ui/index.html"])
def test_index_is_revalidated_and_hardened(gw, path):
    status, h, body = get(gw, path)
    assert status == 200 and body == INDEX
    assert h["content-type"] == "text/html; charset=utf-8"
    assert h["cache-control"] == "no-cache"
    assert "content-encoding" not in h
    assert_hardened(h)


@pytest.mark.parametrize("path", ["/ui/w/ray/runs", "/ui/runs/0d7c/logs", "/ui/admin/nodes/gpu-node-1",
                                  "/ui/a/b/c/d/e/f"])
def test_deep_links_answer_index(gw, path):
    status, h, body = get(gw, path)
    assert status == 200 and body == INDEX
    assert h["cache-control"] == "no-cache"
    assert_hardened(h)


def test_hashed_asset_is_immutable(gw):
    status, h, body = get(gw, "/ui/assets/app-1a2b3c.js")
    assert status == 200 and body == APP
    assert h["content-type"] == "text/javascript; charset=utf-8"
    assert h["cache-control"] == "public, max-age=31536000, immutable"
    assert h["vary"] == "Accept-Encoding"
    assert_hardened(h)


def test_other_files_are_revalidated(gw):
    status, h, _ = get(gw, "/ui/favicon.svg")
    assert status == 200 and h["content-type"] == "image/svg+xml"
    assert h["cache-control"] == "no-cache"
    assert "vary" not in h  # no compressed twin was built


@pytest.mark.parametrize("accept,encoding", [
    ("br, gzip", "br"),
    ("gzip, deflate, br", "br"),
    ("*", "br"),
    ("br;q=0, gzip", "gzip"),
    ("gzip;q=0.5", "gzip"),
    ("BR;Q=0, *;q=0.1", "gzip"),
    ("identity", None),
    ("gzip;q=0, br;q=0", None),
    ("*;q=0", None),
])
def test_precompressed_twin_by_accept_encoding(gw, accept, encoding):
    status, h, body = get(gw, "/ui/", {"Accept-Encoding": accept})
    assert status == 200
    assert h.get("content-encoding") == encoding
    want = {"br": BROTLI_INDEX, "gzip": gzip.compress(INDEX), None: INDEX}[encoding]
    if encoding == "gzip":
        assert gzip.decompress(body) == INDEX
    else:
        assert body == want
    assert h["vary"] == "Accept-Encoding"


def test_asset_without_brotli_twin_falls_back_to_gzip(gw):
    status, h, body = get(gw, "/ui/assets/app-1a2b3c.js", {"Accept-Encoding": "br, gzip"})
    assert status == 200 and h["content-encoding"] == "gzip" and gzip.decompress(body) == APP


def test_etag_per_representation_and_304(gw):
    _, plain, _ = get(gw, "/ui/assets/app-1a2b3c.js")
    _, zipped, _ = get(gw, "/ui/assets/app-1a2b3c.js", {"Accept-Encoding": "gzip"})
    assert plain["etag"] != zipped["etag"]
    status, h, body = get(gw, "/ui/assets/app-1a2b3c.js", {"If-None-Match": plain["etag"]})
    assert status == 304 and body == b"" and h["etag"] == plain["etag"]
    assert h["cache-control"] == "public, max-age=31536000, immutable"
    # A gzip client's tag does not validate the identity bytes.
    status, _, body = get(gw, "/ui/assets/app-1a2b3c.js", {"If-None-Match": zipped["etag"]})
    assert status == 200 and body == APP
    status, _, _ = get(gw, "/ui/", {"If-None-Match": f'W/"nope", {get(gw, "/ui/")[1]["etag"]}'})
    assert status == 304
    # The API's entity tags (api/etag.c): the sha256 of the bytes sent.
    assert plain["etag"] == f'"sha256:{hashlib.sha256(APP).hexdigest()}"'
    assert zipped["etag"] == f'"sha256:{hashlib.sha256(APP_GZ).hexdigest()}"'


def test_root_redirects_to_the_console(gw):
    status, h, body = get(gw, "/")
    assert status == 302 and h["location"] == "/ui/" and body == b""
    assert_hardened(h)


def test_missing_asset_is_a_problem_not_index(gw):
    status, h, body = get(gw, "/ui/assets/app-000000.js")
    assert status == 404
    assert h["content-type"] == "application/problem+json"
    assert "/ui/assets/app-000000.js" in json.loads(body)["detail"]
    assert_hardened(h)


def test_head_and_other_methods(gw):
    status, h, body = get(gw, "/ui/", method="HEAD")
    assert status == 200 and body == b"" and h["content-length"] == str(len(INDEX))
    status, h, body = get(gw, "/ui/", method="POST")
    assert status == 405 and h["content-type"] == "application/problem+json"
    assert "GET" in h["allow"]


def test_no_token_needed(gw):
    status, _, _ = get(gw, "/ui/w/ray/runs", {"Authorization": "Bearer not-a-token"})
    assert status == 200


@pytest.mark.parametrize("layout,why", [
    ({}, "cannot open the folder"),
    ({"assets/app.js": b"x"}, "has no index.html"),
    ({"index.html": b"x", "assets/bad name.js": b"x"}, "a console file name must use"),
])
def test_broken_folder_answers_503_and_says_why(db_url, tmp_path, layout, why):
    d = tmp_path / "dist"
    if layout:
        for name, data in layout.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_bytes(data)
    g = Gateway(BUILD, db_url, extra_env={"TAUGATE_CONSOLE_DIR": str(d)}).start()
    try:
        status, h, body = get(g, "/ui/w/ray")
        assert status == 503 and h["content-type"] == "application/problem+json"
        assert "make console" in json.loads(body)["detail"]
        assert_hardened(h)
        assert why in g.logs() and "console_dir" in g.logs()
        assert get(g, "/")[0] == 404  # no console, nothing to send a browser to
        assert get(g, "/healthz")[0] == 200  # the API serves regardless
    finally:
        assert g.stop() == 0
        g.close()
