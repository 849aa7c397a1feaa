#!/usr/bin/env python3
"""Find local-memory reloads that read bytes no earlier spill wrote, in SASS.

ptxas 13.0 (V13.0.88, sm_90) can keep two 16-bit values in the halves of one register, spill
one half with a 16-bit store (STL.S16 [R1+0x46]) and reload it with a 32-bit load
(LDL [R1+0x44]) that overwrites the register's other half with bytes nobody stored. The
kernel then computes with whatever the thread's local memory held: wrong outputs that
change from run to run, which neither memcheck nor racecheck reports (docs/tuning-log.md,
"Partial spill reloads"). This scans `cuobjdump -sass` output for such reloads.

Per function, in program order, it records the stack bytes each STL writes and reports
every LDL reading a byte that no earlier STL of the function wrote: "partial" when some of
its bytes were written, "unwritten" when none were. Program order stands in for control
flow: ptxas spills before the reloads that follow, so a loop's reload of a slot written
later in its body is the one shape this would report wrongly (none seen in spconv's code).

usage: cuobjdump -sass X.cubin | bench/sass_spill_check.py [--name NAME] [--json OUT]
       bench/sass_spill_check.py [--name NAME] [--json OUT] FILE.sass|FILE.cubin ...
A FILE.cubin is disassembled here by `cuobjdump -sass`: $SPCONV_CUOBJDUMP, else the one on
PATH (as spconv-translate finds it). --name names the report of a single input.
Exit status 1 when any reload is reported, 0 when none, 2 on bad input or no cuobjdump.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

FUNCTION = re.compile(r'^\s*Function : (\S+)')
INSTR = re.compile(r'^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;')
LOCAL = re.compile(r'^(?:@!?U?P\w+\s+)?(STL|LDL)((?:\.\w+)*)\s+(.*)$')
ADDRESS = re.compile(r'\[R1(?:\+(-?0x[0-9a-f]+))?\]')
SIZES = {'U8': 1, 'S8': 1, 'U16': 2, 'S16': 2, '64': 8, '128': 16}


def access(text):
    """(kind, first byte, size) of an STL/LDL addressed off the stack pointer R1, or None."""
    m = LOCAL.match(text)
    if not m:
        return None
    addr = ADDRESS.search(m.group(3))
    if not addr:
        return None  # not a stack slot (never seen in spconv's SASS)
    size = 4
    for mod in m.group(2).split('.')[1:]:
        size = SIZES.get(mod, size)
    return m.group(1), int(addr.group(1) or '0', 16), size


def scan(lines):
    """Reports [{function, address, instruction, kind, unwritten}] over one SASS listing."""
    reports, written, function = [], set(), None
    for line in lines:
        f = FUNCTION.match(line)
        if f:
            function, written = f.group(1), set()
            continue
        i = INSTR.match(line)
        if not i or function is None:
            continue
        a = access(i.group(2))
        if not a:
            continue
        kind, first, size = a
        span = set(range(first, first + size))
        if kind == 'STL':
            written |= span
            continue
        missing = sorted(span - written)
        if missing:
            reports.append({
                'function': function,
                'address': '0x' + i.group(1),
                'instruction': i.group(2),
                'kind': 'partial' if len(missing) < size else 'unwritten',
                'unwritten': [hex(b) for b in missing],
            })
    return reports


def read_listing(path):
    """The SASS text of a listing file, of a cubin (through cuobjdump), or of stdin (None)."""
    if path is None:
        return sys.stdin.read()
    if not path.endswith('.cubin'):
        with open(path, errors='replace') as f:
            return f.read()
    tool = os.environ.get('SPCONV_CUOBJDUMP') or shutil.which('cuobjdump')
    if not tool or tool == 'none':
        raise OSError(f'no cuobjdump to disassemble {path} (PATH or $SPCONV_CUOBJDUMP)')
    # A large module's listing runs to gigabytes: keep only the lines the scan reads.
    with subprocess.Popen([tool, '-sass', path], stdout=subprocess.PIPE, text=True,
                          errors='replace') as proc:
        kept = [line for line in proc.stdout if 'Function :' in line or 'STL' in line
                or 'LDL' in line]
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, [tool, '-sass', path])
    return ''.join(kept)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('files', nargs='*', help='cuobjdump -sass listings (default: stdin)')
    ap.add_argument('--name', help='what the listing on stdin is, for the report')
    ap.add_argument('--json', help='append one JSON line {name, functions, reports} here')
    args = ap.parse_args()
    if args.name and len(args.files) > 1:
        ap.error('--name names a single input')
    sources = [(args.name or f, f) for f in args.files] or [(args.name or '<stdin>', None)]
    found = 0
    for name, path in sources:
        try:
            text = read_listing(path)
        except (OSError, subprocess.CalledProcessError) as e:
            print(f'{name}: {e}', file=sys.stderr)
            return 2
        lines = text.split('\n')
        functions = sum(1 for line in lines if FUNCTION.match(line))
        if functions == 0:
            print(f'{name}: no SASS functions in the input', file=sys.stderr)
            return 2
        reports = scan(lines)
        found += len(reports)
        for r in reports:
            print(f"{name}: {r['function']} {r['address']}: {r['kind']} reload "
                  f"`{r['instruction']}` reads stack bytes {', '.join(r['unwritten'])} "
                  f"that no earlier STL wrote")
        print(f'{name}: {functions} functions, {len(reports)} suspect reloads')
        if args.json:
            with open(args.json, 'a') as out:
                out.write(json.dumps({'name': name, 'functions': functions,
                                      'reports': reports}) + '\n')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
