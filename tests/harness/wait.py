"""Waiting on facts: the one way tests wait.

A test never sleeps to "let things happen"; it names the fact it needs and
polls it until it holds or a deadline passes::

    from wait import wait_for

    run = wait_for(lambda: gw.req("GET", f"/v1/runs/{rid}").json(), 60,
                   f"run {rid} Succeeded", cond=lambda r: r["state"] == "Succeeded")

On the deadline it raises WaitTimeout (an AssertionError, so pytest reports
it as a failed assertion) saying what was awaited, for how long, and the last
value seen (or the last exception the fact raised), which is usually the
reason it never held.
"""
import json
import time


class WaitTimeout(AssertionError):
    """The awaited fact did not hold in time; .what, .timeout, .last."""

    def __init__(self, what, timeout, last, error, detail=""):
        self.what = what
        self.timeout = timeout
        self.last = last
        self.error = error
        seen = f"last error: {error!r}" if error is not None else f"last value: {_show(last)}"
        super().__init__(f"timed out after {timeout:g} s waiting for {what}; {seen}"
                         + (f"\n{detail}" if detail else ""))


def _show(value, limit=2000):
    try:
        text = json.dumps(value, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def wait_for(fact, timeout, what, *, cond=None, interval=0.1, ignore=(), detail=None):
    """Call fact() until it holds; return the value that held.

    fact: a function of no arguments, polled every `interval` seconds.
    timeout: the deadline in seconds (monotonic clock).
    what: what is awaited, in words, for the failure message.
    cond: a predicate on fact()'s value; by default the value's truth.
    ignore: exception types that mean "not yet" (e.g. OSError while a server
        restarts); any other exception propagates at once.
    detail: a function whose text is added to the failure message (the
        gateway's log, say: what the daemon said about why).
    """
    deadline = time.monotonic() + timeout
    last, error = None, None
    while True:
        try:
            last, error = fact(), None
            if cond(last) if cond else last:
                return last
        except ignore as e:  # noqa: PERF203 - "not yet", polled again
            error = e
        if time.monotonic() >= deadline:
            raise WaitTimeout(what, timeout, last, error, detail() if detail else "")
        time.sleep(interval)


def wait_run_state(gw, run_id, states, timeout=60):
    """Wait until run `run_id` on gateway `gw` is in one of `states`
    (a string or a collection); returns the run."""
    states = {states} if isinstance(states, str) else set(states)
    return wait_for(lambda: gw.req("GET", f"/v1/runs/{run_id}").json(), timeout,
                    f"run {run_id} in {sorted(states)}", cond=lambda r: r.get("state") in states,
                    detail=lambda: "gateway log:\n" + "\n".join(
                        line for line in gw.logs().splitlines() if "access" not in line)[-3000:])
