"""Turns spconv-translate's `--progress` lines into a progress bar.

`spconv-translate --progress` prints `spconv: ptxas <done>/<queued> units queued, <s> s;
slowest: ...` on stderr per assembled ptxas unit (`<done>/<total> units,` before ptxas started
while later convs were still being folded: both forms are read); ptxas is where a
whole-network compile spends its minutes, so that count is the honest measure of how far it
is. The total grows while the compile queues more units. On a terminal, tqdm draws the bar
when it is importable, otherwise a one-line text bar is redrawn with `\\r`. Where the stream
is not a terminal (a log, CI) it writes one plain line every LOG_SECONDS seconds or every
tenth of the units, and the last one, instead of hundreds of redrawn frames.
"""
import re
import sys
import time

LOG_SECONDS = 5.0

PTXAS_LINE = re.compile(r"^spconv: ptxas (\d+)/(\d+) units(?: queued)?, ([0-9.]+) s")


def parse_line(line):
    """(done, total, seconds) for a ptxas progress line, else None."""
    m = PTXAS_LINE.match(line)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


def text_bar(done, total, seconds, width=30):
    frac = done / total if total else 1.0
    fill = int(round(frac * width))
    return "[%s%s] %d/%d ptxas units, %.1f s" % ("#" * fill, "." * (width - fill), done, total,
                                                 seconds)


class ProgressBar:
    """Feed it stderr lines with `update(line)`; `close()` ends the bar's line."""

    def __init__(self, stream=None, use_tqdm=True, interactive=None):
        self.stream = stream or sys.stderr
        if interactive is None:
            isatty = getattr(self.stream, "isatty", None)
            interactive = bool(isatty and isatty())
        self.interactive = interactive
        self.tqdm = None
        self._tqdm_mod = None
        self._logged = None  # (time, done) of the last plain line
        if use_tqdm and interactive:
            try:
                import tqdm  # noqa: F401
                self._tqdm_mod = tqdm
            except ImportError:
                pass
        self.drawn = False
        self.last = None

    def update(self, line):
        """Returns True if the line was a progress line (and was drawn)."""
        p = parse_line(line)
        if p is None:
            return False
        done, total, seconds = p
        self.last = p
        if not self.interactive:
            now = time.monotonic()
            step = max(1, total // 10)
            if self._logged is None or done >= total or now - self._logged[0] >= LOG_SECONDS \
                    or done // step > self._logged[1] // step:
                self.stream.write(text_bar(done, total, seconds) + "\n")
                self.stream.flush()
                self._logged = (now, done)
            return True
        if self._tqdm_mod is not None:
            if self.tqdm is None:
                self.tqdm = self._tqdm_mod.tqdm(total=total, unit="unit", desc="ptxas",
                                                file=self.stream)
            self.tqdm.total = total
            self.tqdm.n = done
            self.tqdm.refresh()
        else:
            self.stream.write("\r" + text_bar(done, total, seconds))
            self.stream.flush()
            self.drawn = True
        return True

    def close(self):
        if self.tqdm is not None:
            self.tqdm.close()
        elif self.drawn:
            self.stream.write("\n")
            self.stream.flush()
