"""Server-Sent Events for tests: a parser, and a reader that follows an open
stream on a thread (stdlib only).

parse(text) -> [Event]; Follower(url, path, headers) connects at once,
collects events as they arrive (wait_for waits on a condition with a
deadline) and can be cut at any moment (close), like a dropped network."""
import http.client
import json
import threading
import time
import urllib.parse


class Event:
    def __init__(self, event="message", id=None, data=""):
        self.event, self.id, self.data = event, id, data

    def json(self):
        return json.loads(self.data)

    def __repr__(self):
        return f"<Event {self.event} id={self.id} {self.data[:200]!r}>"


def _event(block):
    ev, seen, data = Event(), False, []
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        seen = True
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "id":
            ev.id = value
        elif field == "event":
            ev.event = value
        elif field == "data":
            data.append(value)
    ev.data = "\n".join(data)
    return ev if seen else None


def parse(text):
    """Every complete event of an SSE body (comments dropped)."""
    out = []
    for block in text.split("\n\n")[:-1]:  # the last piece is "" or unfinished
        ev = _event(block)
        if ev:
            out.append(ev)
    return out


class Follower:
    """An open SSE response read on a thread."""

    def __init__(self, base, path, headers=None, timeout=60):
        u = urllib.parse.urlsplit(base)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
        self.conn.request("GET", path, headers=dict(headers or {}))
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.events = []
        self.ended = False
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        if self.status == 200:
            self._thread.start()
        else:
            self.body = self.resp.read()
            self.ended = True

    def _run(self):
        buf = ""
        try:
            while True:
                line = self.resp.readline()
                if not line:
                    break
                buf += line.decode()
                if buf.endswith("\n\n"):
                    ev = _event(buf[:-2])
                    buf = ""
                    if ev:
                        with self._cond:
                            self.events.append(ev)
                            self._cond.notify_all()
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            pass  # cut by close(), or by the server
        with self._cond:
            self.ended = True
            self._cond.notify_all()

    def wait_for(self, what, pred, timeout=20):
        """Wait until pred(events) is true; returns the events then."""
        deadline = time.time() + timeout
        with self._cond:
            while not pred(self.events):
                left = deadline - time.time()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what}; got {self.events[-10:]}")
                if self.ended and not pred(self.events):
                    raise AssertionError(f"the stream ended before {what}; got {self.events[-10:]}")
                self._cond.wait(min(left, 0.5))
            return list(self.events)

    def close(self):
        """Cut the connection (the server sees the client go away)."""
        self._closed = True
        try:
            self.conn.sock and self.conn.sock.shutdown(2)
        except OSError:
            pass
        self.conn.close()
        self._thread.join(10) if self._thread.is_alive() else None
