"""Insert an L2 prefetch of the kernel's own code (its .func pieces, sizes from the cubin's
symbol table) at the top of the entry: block b's thread 0 prefetches slice b (4 KB)."""
import re, subprocess, sys
ptx, cubin, out = sys.argv[1:4]
import json, os
grid = json.load(open(os.path.join(os.path.dirname(ptx), "kernels.json")))["kernels"][0]["grid"]
blocks = grid[0] * grid[1] * grid[2]
syms = {}
for line in subprocess.run(["readelf", "-sW", cubin], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC":
        syms[f[-1]] = int(f[2], 0)
text = open(ptx).read()
entry = re.search(r"\.visible \.entry (\w+)\(", text).group(1)
funcs = [(n, s) for n, s in syms.items()]  # pieces and the entry itself
total = sum(s for _, s in funcs)
# every block one slice at most: slices of at least 4 KB, enough of them to cover the code
SLICE = max(4096, -(-total // max(1, blocks - len(funcs)) // 16) * 16)
lines = []
lines.append("\t{")
lines.append("\t.reg .pred %pf_p<2>;")
lines.append("\t.reg .b32 %pf_r<8>;")
lines.append("\t.reg .b64 %pf_a<2>;")
lines.append("\tmov.u32 %pf_r0, %tid.x;")
lines.append("\tsetp.ne.u32 %pf_p0, %pf_r0, 0;")
lines.append("\t@%pf_p0 bra $pf_done;")
lines.append("\tmov.u32 %pf_r1, %ctaid.x;")
lines.append("\tmov.u32 %pf_r2, %nctaid.x;")
lines.append("\tmov.u32 %pf_r3, %ctaid.y;")
lines.append("\tmad.lo.u32 %pf_r1, %pf_r3, %pf_r2, %pf_r1;")
lines.append("\tmov.u32 %pf_r3, %nctaid.y;")
lines.append("\tmul.lo.u32 %pf_r2, %pf_r2, %pf_r3;")
lines.append("\tmov.u32 %pf_r3, %ctaid.z;")
lines.append("\tmad.lo.u32 %pf_r1, %pf_r3, %pf_r2, %pf_r1;")  # linear block id
first = 0
for i, (name, size) in enumerate(funcs):
    slices = (size + SLICE - 1) // SLICE
    lines.append(f"\t// {name}: {size} bytes, slices {first}..{first + slices - 1}")
    lines.append(f"\tsub.u32 %pf_r4, %pf_r1, {first};")
    lines.append(f"\tsetp.lt.u32 %pf_p1, %pf_r4, {slices};")
    lines.append(f"\t@!%pf_p1 bra $pf_skip{i};")
    lines.append(f"\tmov.u64 %pf_a0, {name};")
    lines.append(f"\tmul.wide.u32 %pf_a1, %pf_r4, {SLICE};")
    lines.append(f"\tadd.s64 %pf_a0, %pf_a0, %pf_a1;")
    # the last slice: size - (slices-1)*SLICE, a multiple of 16
    last = size - (slices - 1) * SLICE
    lines.append(f"\tsetp.eq.u32 %pf_p1, %pf_r4, {slices - 1};")
    lines.append(f"\t@%pf_p1 cp.async.bulk.prefetch.L2.global [%pf_a0], {last};")
    lines.append(f"\t@!%pf_p1 cp.async.bulk.prefetch.L2.global [%pf_a0], {SLICE};")
    lines.append(f"$pf_skip{i}:")
    first += slices
lines.append("$pf_done:")
lines.append("\t}")
block = "\n".join(lines) + "\n"
# after the entry's last ld.param
start = text.index(".visible .entry " + entry)
pos = text.index("\tld.param", start)
while text.startswith("\tld.param", pos):
    pos = text.index("\n", pos) + 1
text = text[:pos] + block + text[pos:]
text = text.replace(".version 7.8", ".version 8.0", 1)
open(out, "w").write(text)
print(entry, funcs, "slices", first)
