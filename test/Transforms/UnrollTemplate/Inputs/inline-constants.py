#!/usr/bin/env python3
"""Prints MLIR text with every constant (arith.constant, llvm.mlir.constant) inlined into its
uses and its definition dropped, and every other SSA name renamed in order of first
appearance, so that two modules differing only in where and in which order their constants
are defined print the same."""
import re
import sys

DEF = re.compile(r'^\s*(%[\w]+) = (?:arith\.constant |llvm\.mlir\.constant)(.*)$')
USE = re.compile(r'%[\w]+')
consts = {}
out = []
for line in open(sys.argv[1]):
    m = DEF.match(line)
    if m:
        consts[m.group(1)] = '<' + m.group(2).strip() + '>'
        continue
    out.append(USE.sub(lambda u: consts.get(u.group(0), u.group(0)), line))
names = {}
def rename(u):
    return names.setdefault(u.group(0), '%v' + str(len(names)))
sys.stdout.write(''.join(USE.sub(rename, line) for line in out))
