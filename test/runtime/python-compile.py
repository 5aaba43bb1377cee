# cleave.compile runs the `cleave compile` command line it is given (here a
# stand-in script that records its arguments) and raises CompileError with
# the command's stderr when it fails. Without cleave_bin it runs the cleave
# built beside the runtime module on the import path, so that a compile and
# the session that runs it come from one build (a sanitized build's tests
# compile with the sanitized cleave, not the checkout's release build).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t %cleave_lib | FileCheck %s

import importlib
import os
import shutil
import stat
import subprocess
import sys

import cleave

work = sys.argv[1]


def script(name, body):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\nimport os, sys\n{body}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


recorder = script("cleave-ok", """
out = sys.argv[sys.argv.index("-o") + 1]
os.makedirs(out)
with open(os.path.join(os.path.dirname(sys.argv[0]), "args.txt"), "a") as f:
    f.write(" ".join(os.path.basename(a) if a.endswith(".onnx") else a
                     for a in sys.argv[1:]).replace(out, "OUT") + "\\n")
""")


def recorded():
    with open(os.path.join(work, "args.txt")) as f:
        return f.read().splitlines()[-1]


failing = script("cleave-fails", """
sys.stderr.write("model.onnx: error: operator 'Frobnicate' is not supported\\n")
sys.exit(3)
""")

bundle = cleave.compile(
    "model.onnx", os.path.join(work, "m.cleave"), target="h100-sxm", devices=8,
    input_shapes={"input_ids": (1, 128), "mask": "1x128"},
    extra_args=["--tp", "8"], cleave_bin=recorder)
print(recorded())
print(type(bundle).__name__, bundle.name, bundle.is_dir())
# CHECK: compile model.onnx -o OUT --target h100-sxm --devices 8 --input-shape input_ids=1x128 --input-shape mask=1x128 --tp 8
# CHECK-NEXT: PosixPath m.cleave True

# An onnx.ModelProto is saved to a temporary file first.
from onnx import TensorProto, helper  # noqa: E402

graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"])], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
cleave.compile(helper.make_model(graph), os.path.join(work, "proto.cleave"), cleave_bin=recorder)
print(recorded())
# CHECK-NEXT: compile model.onnx -o OUT --target cpu --devices 1

try:
    cleave.compile("model.onnx", os.path.join(work, "bad"), cleave_bin=failing)
except cleave.CompileError as e:
    print(e.returncode, e.command[1:3], isinstance(e, RuntimeError))
    print(e)
# CHECK-NEXT: 3 ['compile', 'model.onnx'] True
# CHECK-NEXT: cleave compile failed with exit status 3:
# CHECK-NEXT: model.onnx: error: operator 'Frobnicate' is not supported

try:
    cleave.compile("model.onnx", os.path.join(work, "x"), cleave_bin=os.path.join(work, "absent"))
except FileNotFoundError as e:
    print(str(e).replace(work, "WORK"))
# CHECK-NEXT: cleave_bin 'WORK/absent' is not an executable

# The runtime module of this build is on the import path (lit puts
# <build>/python there): its cleave is the one found.
find_cleave = importlib.import_module("cleave.compile").find_cleave
build = os.path.dirname(os.path.realpath(sys.argv[2]))
print(find_cleave() == os.path.join(build, "bin", "cleave"))
# CHECK-NEXT: True

# Another build's runtime module first on the import path: its cleave, and
# the checkout's default build where that build has no cleave.
fake = os.path.join(work, "otherbuild")
os.makedirs(os.path.join(fake, "python", "cleave"))
os.makedirs(os.path.join(fake, "bin"))
suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
open(os.path.join(fake, "python", "cleave", "_runtime" + suffix), "w").close()
source = os.path.dirname(os.path.dirname(os.path.dirname(cleave.__file__)))
probe = (
    "import importlib\n"
    "try: print(importlib.import_module('cleave.compile').find_cleave())\n"
    "except FileNotFoundError: print('none')"
)
env = dict(os.environ, PYTHONPATH=os.pathsep.join(
    [os.path.join(source, "python"), os.path.join(fake, "python")]))
def shown(path):
    return path.replace(work, "WORK").replace(source, "SRC")
def probed():
    return shown(subprocess.run([sys.executable, "-c", probe], env=env,
                                check=True, capture_output=True,
                                text=True).stdout.strip())
script(os.path.join("otherbuild", "bin", "cleave"), "")
print(probed())
# CHECK-NEXT: WORK/otherbuild/bin/cleave
os.remove(os.path.join(fake, "bin", "cleave"))
default = os.path.join(source, "build", "bin", "cleave")
print(probed() != "WORK/otherbuild/bin/cleave",
      probed() == shown(default if os.access(default, os.X_OK)
                        else shutil.which("cleave", path=env.get("PATH")) or "none"))
# CHECK-NEXT: True True
