"""Checks spconv-translate's --progress output on stdin (progress.test).

usage: check_progress.py log|bar|units UNITS
"""
import re
import sys

mode, units = sys.argv[1], int(sys.argv[2])
text = sys.stdin.buffer.read().decode()
LINE = re.compile(r"spconv: ptxas (\d+)/(\d+) units queued, [0-9.]+ s; ")
FRAME = re.compile(r"spconv: ptxas \[[#.]+\] (\d+)/(\d+) units, [0-9.]+ s, \d+ instructions left *$")


def fail(message):
    sys.exit("check_progress.py %s: %s\n--- stderr was:\n%r" % (mode, message, text))


if not text.endswith("\n"):
    fail("the output does not end with a newline")
lines = text[:-1].split("\n")
if mode in ("log", "units"):
    if "\r" in text:
        fail("'\\r' frames in the output")
    counts = []
    for line in lines:
        m = LINE.match(line)
        if not m:
            fail("not a progress line: %r" % line)
        counts.append(int(m.group(1)))
    if counts[-1] != units or int(LINE.match(lines[-1]).group(2)) != units:
        fail("the last line is not %d/%d" % (units, units))
    if counts != sorted(counts):
        fail("counts out of order: %s" % counts)
    if mode == "units" and counts != list(range(1, units + 1)):
        fail("not a line per unit: %s" % counts)
    # A line per tenth of the units at most (and 5 s apart), and the last one: fewer than
    # one per unit whenever the compile takes less than 5 s a unit.
    if mode == "log" and len(counts) >= units:
        fail("%d lines for %d units: a line per unit" % (len(counts), units))
else:
    if len(lines) != 1:
        fail("the bar is not one line")
    frames = lines[0].split("\r")
    if frames[0] != "" or len(frames) < 2:
        fail("no '\\r' frames")
    last = None
    for frame in frames[1:]:
        m = FRAME.match(frame)
        if not m:
            fail("not a bar frame: %r" % frame)
        last = (int(m.group(1)), int(m.group(2)))
    if last != (units, units):
        fail("the last frame is %s, not %d/%d" % (last, units, units))
