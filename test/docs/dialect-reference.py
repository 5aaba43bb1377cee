# The checked-in dialect reference is what ODS generates today; after
# changing a .td file, run scripts/gen-docs.sh.
#
# RUN: %python %s %mlir_include %cleave_src

import difflib
import os
import subprocess
import sys

mlir_include, src = sys.argv[1], sys.argv[2]
tblgen = os.path.join(os.path.dirname(mlir_include), "bin", "mlir-tblgen")
generated = subprocess.run(
    [tblgen, "-gen-dialect-doc", "-dialect=cleave", "-I", os.path.join(src, "include"),
     "-I", mlir_include, os.path.join(src, "include/cleave/Dialect/Cleave/IR/CleaveOps.td")],
    check=True, capture_output=True, text=True).stdout
path = os.path.join(src, "docs/Dialects/CleaveDialect.md")
with open(path) as f:
    checked_in = f.read()
if generated != checked_in:
    sys.stdout.writelines(difflib.unified_diff(
        checked_in.splitlines(True), generated.splitlines(True), path, "generated"))
    sys.exit("docs/Dialects/CleaveDialect.md is stale: run scripts/gen-docs.sh")
