"""Sanitizer reports in a process's log (make sanitize's builds)."""
import os

# Set by the Makefile for builds with SAN=1: gateways stop cleanly so that
# LeakSanitizer reports at their exit, and every report fails the test.
SANITIZED = os.environ.get("TAUGATE_SANITIZED") == "1"

_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def reports(text):
    """The ASan, LeakSanitizer and UBSan error lines of a log; [] if clean."""
    return [line for line in text.splitlines() if any(m in line for m in _MARKS)]
