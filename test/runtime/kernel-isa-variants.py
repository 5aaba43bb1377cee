# libcleave_rt holds the CPU kernels built for three x86-64 levels; only the
# variants for x86-64-v3 and x86-64-v4 may use AVX. The inline functions
# and templates that every variant compiles are kept once by the linker,
# and the copy kept must be a baseline one, or a CPU without AVX would
# fault in code that every level runs. So every function that the library
# defines for others to call (global or weak), outside the two variant
# namespaces, must have no VEX- or EVEX-encoded instruction: no mnemonic
# that starts with "v", no ymm, zmm or mask register.
# RUN: %python %s %cleave_lib/libcleave_rt.so | FileCheck %s
# CHECK: variants: x86_64_v3 {{[1-9][0-9]*}} functions ({{[1-9][0-9]*}} with AVX), x86_64_v4 {{[1-9][0-9]*}} functions ({{[1-9][0-9]*}} with AVX)
# CHECK: checked {{[1-9][0-9]*}} functions outside the variants: none uses AVX

import re
import subprocess
import sys

library = sys.argv[1]

# Global and weak function symbols, mangled, with their addresses.
exported = {}
for line in subprocess.run(["nm", "--defined-only", library], check=True,
                           capture_output=True, text=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 3 and fields[1] in ("T", "W", "i"):
        exported[int(fields[0], 16)] = fields[2]

variants = {"x86_64_v3": 0, "x86_64_v4": 0}
with_avx = {"x86_64_v3": 0, "x86_64_v4": 0}
checked = 0
offenders = []
avx = re.compile(r"^v[a-z0-9]+\b|%[yz]mm\d+|%k[0-7]\b")
disassembly = subprocess.run(
    ["objdump", "-d", "--no-show-raw-insn", "--section=.text", library],
    check=True, capture_output=True, text=True).stdout
function, uses_avx = None, False


def finish():
    global checked
    if function is None:
        return
    level = next((v for v in variants if v in function), None)
    if level:
        variants[level] += 1
        with_avx[level] += uses_avx
        return
    checked += 1
    if uses_avx:
        offenders.append(function)


for line in disassembly.splitlines():
    header = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
    if header:
        finish()
        address = int(header.group(1), 16)
        function = exported.get(address)
        uses_avx = False
        continue
    if function is None:
        continue
    parts = line.split("\t")
    if len(parts) >= 2 and avx.search(parts[1].strip()):
        uses_avx = True
finish()

print("variants: " + ", ".join(f"{level} {count} functions ({with_avx[level]} with AVX)"
                               for level, count in variants.items()))
if offenders:
    for name in offenders:
        print(f"uses AVX outside the variants: {name}")
    sys.exit(1)
print(f"checked {checked} functions outside the variants: none uses AVX")
