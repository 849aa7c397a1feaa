#!/usr/bin/env python3
"""Joins an nvidia-smi clock trace to the timed phases of a bench/torch_backend.py run.

usage: bench/clock_phases.py TRACE.csv RESULT.json [--out PHASES.json] [--trace-utc-offset H]

TRACE.csv: what nvidia-smi writes while the run goes on, one sample a line:

    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,\\
        clocks_throttle_reasons.active --format=csv,noheader -lms 50 > TRACE.csv

(clocks_event_reasons.active on drivers that renamed it). RESULT.json: `torch_backend.py
--phase run --out RESULT.json`, whose variants record when their timing ran ("timed_utc",
start and end in UTC). For each variant, the samples inside its window: how many, the SM
clock (mean, min, max, MHz), the power draw (mean, max, W), and the throttle reasons seen
(nvidia-smi's bit masks, e.g. 0x4 = software power cap). One line a variant, and with --out
the same as JSON. nvidia-smi stamps samples in the GPU machine's local time: UTC there; give
--trace-utc-offset (hours east of UTC) otherwise. A variant whose window holds no sample is
reported as such: a window shorter than the sampling period, or a trace of another run.
Exit status 1 when no variant has a sample (the trace does not overlap the run), 2 on bad
input.
"""
import argparse
import datetime
import json
import sys


def parse_trace(lines, utc_offset_hours):
    """(time, sm MHz, power W or None, reason) per sample line; other lines skipped."""
    tz = datetime.timezone(datetime.timedelta(hours=utc_offset_hours))
    samples = []
    for line in lines:
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 6:
            continue
        try:
            when = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=tz)
            sm = float(fields[1].split()[0])
        except ValueError:
            continue  # a header, or a sample nvidia-smi could not read
        try:
            power = float(fields[3].split()[0])
        except ValueError:
            power = None  # "[N/A]"
        samples.append((when, sm, power, fields[5]))
    return samples


def phases(result, samples):
    """Per variant of `result` with a timed window: the statistics of its samples."""
    out = {}
    for name, v in result.get("variants", {}).items():
        window = v.get("timed_utc")
        if not window:
            continue
        start, end = (datetime.datetime.fromisoformat(t) for t in window)
        inside = [s for s in samples if start <= s[0] <= end]
        rec = {"timed_utc": window, "time_ms_graph": v.get("time_ms_graph"),
               "samples": len(inside)}
        if inside:
            sm = [s[1] for s in inside]
            power = [s[2] for s in inside if s[2] is not None]
            rec.update(sm_mhz_mean=sum(sm) / len(sm), sm_mhz_min=min(sm), sm_mhz_max=max(sm),
                       throttle_reasons=sorted({s[3] for s in inside}))
            if power:
                rec.update(power_w_mean=sum(power) / len(power), power_w_max=max(power))
        out[name] = rec
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("result")
    ap.add_argument("--out")
    ap.add_argument("--trace-utc-offset", type=float, default=0.0)
    args = ap.parse_args(argv)
    try:
        with open(args.trace) as f:
            samples = parse_trace(f, args.trace_utc_offset)
        with open(args.result) as f:
            result = json.load(f)
        table = phases(result, samples)
    except (OSError, ValueError) as e:
        print("clock_phases.py: %s" % e, file=sys.stderr)
        return 2
    if not table:
        print("clock_phases.py: %s has no variant with timed_utc (a run from before the "
              "phase markers?)" % args.result, file=sys.stderr)
        return 2
    for name, r in table.items():
        if not r["samples"]:
            print("%-24s no sample in its window %s - %s" % (name, *r["timed_utc"]))
            continue
        power = (" power %.0f W mean, %.0f max;" % (r["power_w_mean"], r["power_w_max"])
                 if "power_w_mean" in r else "")
        print("%-24s %.4f ms: %d samples; SM %.0f MHz mean (%.0f-%.0f);%s reasons %s" % (
            name, r["time_ms_graph"] or 0.0, r["samples"], r["sm_mhz_mean"], r["sm_mhz_min"],
            r["sm_mhz_max"], power, " ".join(r["throttle_reasons"])))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"trace": args.trace, "result": args.result, "variants": table}, f,
                      indent=1)
    return 0 if any(r["samples"] for r in table.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
