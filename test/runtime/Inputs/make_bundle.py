"""Writes small hand-made bundles for the runtime tests, and damages them.

    make_bundle.py affine BUNDLE --lib-dir DIR
    make_bundle.py identity BUNDLE --lib-dir DIR --dtype int8 --shape 2,3
    make_bundle.py pipeline BUNDLE --lib-dir DIR         2 devices, pp=2
    make_bundle.py collectives BUNDLE --lib-dir DIR --tp N
    make_bundle.py groups BUNDLE --lib-dir DIR --pp P --dp D --tp T [--swap]
    make_bundle.py edit BUNDLE [--set KEY=JSON]... [--program-set KEY=JSON]...
                               [--rank-set KEY=JSON]... [--rehash]

The programs (affine.cpp, identity.cpp, pipeline.cpp, collectives.cpp,
groups.cpp)
are compiled against the runtime's
headers and linked to libcleave_rt.so in DIR, as `cleave compile` does; the
manifest follows docs/bundle-format.md with the SHA-256 of every file.
"""

import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(HERE, "..", "..", "..", "runtime", "include")


def abi_version():
    """CLEAVE_ABI_VERSION of the runtime's Kernels.h."""
    with open(os.path.join(INCLUDE, "cleave", "rt", "Kernels.h")) as f:
        for line in f:
            if line.startswith("#define CLEAVE_ABI_VERSION "):
                return int(line.split()[2])
    raise RuntimeError("Kernels.h defines no CLEAVE_ABI_VERSION")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_bundle(bundle, source, lib_dir, inputs, outputs, weights, arena,
                 defines=()):
    os.makedirs(os.path.join(bundle, "programs"), exist_ok=True)
    os.makedirs(os.path.join(bundle, "weights"), exist_ok=True)
    compile_program(bundle, 0, source, lib_dir, defines)
    with open(os.path.join(bundle, "weights", "rank_0.bin"), "wb") as f:
        f.write(weights)
    with open(os.path.join(bundle, "plan.json"), "w") as f:
        json.dump({"devices": 1}, f)
    manifest = base_manifest(inputs, outputs, {"pp": 1, "tp": 1, "dp": 1})
    manifest["programs"] = [program_entry(
        0, arena, len(weights), list(range(len(inputs))),
        list(range(len(outputs))))]
    manifest["ranks"] = [rank_entry(0, 0, 0, 0)]
    rehash(bundle, manifest)


def compile_program(bundle, stage, source, lib_dir, defines=()):
    """Copies `source` to programs/stage_N.cpp and builds stage_N.so."""
    with open(source) as f:
        text = f.read()
    cpp = os.path.join(bundle, "programs", f"stage_{stage}.cpp")
    with open(cpp, "w") as f:
        f.write(text)
    subprocess.run(
        ["c++", "-std=c++17", "-O1", "-shared", "-fPIC", "-I", INCLUDE,
         *[f"-D{d}" for d in defines], cpp,
         "-o", os.path.join(bundle, "programs", f"stage_{stage}.so"),
         "-L", lib_dir, "-lcleave_rt"],
        check=True)


def base_manifest(inputs, outputs, mesh, microbatches=1):
    return {
        "format": "cleave-bundle",
        "format_version": 1,
        "abi_version": abi_version(),
        "model": "handmade.onnx",
        "target": "cpu",
        "device_kind": "cpu",
        "devices": mesh["pp"] * mesh["tp"] * mesh["dp"],
        "mesh": mesh,
        "microbatches": microbatches,
        "inputs": inputs,
        "outputs": outputs,
    }


def program_entry(stage, arena, weight_bytes, inputs, outputs,
                  microbatches=1):
    return {
        "stage": stage, "source": f"programs/stage_{stage}.cpp",
        "library": f"programs/stage_{stage}.so",
        "info": "cleave_program_info",
        "entries": [{"name": "forward", "phase": "forward",
                     "inputs": inputs, "outputs": outputs}],
        "arena_bytes": arena, "weight_bytes": weight_bytes,
        "persistent_bytes": 0,
        "inputs": inputs, "outputs": outputs,
        "steps": [{"phase": "forward", "microbatch": k}
                  for k in range(microbatches)]}


def rank_entry(rank, stage, tp, dp):
    return {"rank": rank, "stage": stage, "tp": tp, "dp": dp,
            "weights": f"weights/rank_{rank}.bin"}


def rehash(bundle, manifest):
    files = {}
    for root, _, names in os.walk(bundle):
        for name in sorted(names):
            path = os.path.join(root, name)
            relative = os.path.relpath(path, bundle)
            if relative != "manifest.json":
                files[relative] = sha256(path)
    manifest["files"] = files
    with open(os.path.join(bundle, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)


def affine(args):
    weights = bytearray(128)
    weights[0:12] = struct.pack("<3f", 1.0, 2.0, 3.0)
    weights[64:76] = struct.pack("<3f", 0.5, -1.0, 10.0)
    write_bundle(
        args.bundle, os.path.join(HERE, "affine.cpp"), args.lib_dir,
        [{"name": "x", "dtype": "float32", "shape": [2, 3]}],
        [{"name": "y", "dtype": "float32", "shape": [2, 3]},
         {"name": "stats/sum", "dtype": "float64", "shape": []},
         {"name": "threads", "dtype": "int32", "shape": [1]}],
        bytes(weights), 256)


def phases(args):
    """Inputs/phases.cpp: a forward and a backward entry over a stash region
    and persistent memory that holds a writable weight."""
    weights = bytearray(64)
    weights[0:12] = struct.pack("<3f", 1.0, 2.0, 3.0)
    vector = {"dtype": "float32", "shape": [3]}
    write_bundle(
        args.bundle, os.path.join(HERE, "phases.cpp"), args.lib_dir,
        [{"name": "x", **vector}],
        [{"name": "y", **vector}, {"name": "z", **vector}],
        bytes(weights), 128)
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    program = manifest["programs"][0]
    program["persistent_bytes"] = 128
    program["entries"] = [
        {"name": "forward", "phase": "forward", "inputs": [0], "outputs": [0]},
        {"name": "backward", "phase": "backward", "inputs": [],
         "outputs": [1]}]
    program["steps"] = [{"phase": "forward", "microbatch": 0},
                        {"phase": "backward", "microbatch": 0}]
    rehash(args.bundle, manifest)


def identity(args):
    shape = [int(d) for d in args.shape.split(",") if d]
    size = np.dtype(args.dtype if args.dtype != "bfloat16" else "uint16").itemsize
    nbytes = size * int(np.prod(shape, dtype=np.int64))
    tensor = {"dtype": args.dtype, "shape": shape}
    write_bundle(
        args.bundle, os.path.join(HERE, "identity.cpp"), args.lib_dir,
        [{"name": args.input_name, **tensor}], [{"name": "y", **tensor}],
        b"", 0, [f"CLEAVE_TEST_BYTES={nbytes}"] +
        (["CLEAVE_TEST_NAME_BLOCKS"] if args.name_blocks else []))


def write_mesh_bundle(bundle, source, lib_dir, mesh, inputs, outputs,
                      stage_io, rank_weights, arena, defines=()):
    """A bundle for several devices: stage_io[s] is (inputs, outputs) of
    stage s's program, rank_weights[r] the weight bytes of rank r (all of a
    stage's the same size)."""
    os.makedirs(os.path.join(bundle, "programs"), exist_ok=True)
    os.makedirs(os.path.join(bundle, "weights"), exist_ok=True)
    pp, tp = mesh["pp"], mesh["tp"]
    manifest = base_manifest(inputs, outputs, mesh)
    manifest["programs"] = []
    for stage, (reads, writes) in enumerate(stage_io):
        compile_program(bundle, stage, source, lib_dir,
                        [f"CLEAVE_STAGE={stage}", *defines])
        manifest["programs"].append(program_entry(
            stage, arena, len(rank_weights[stage * tp]), reads, writes))
    manifest["ranks"] = []
    for rank, weights in enumerate(rank_weights):
        with open(os.path.join(bundle, "weights", f"rank_{rank}.bin"), "wb") as f:
            f.write(weights)
        stage, dp, t = mesh_coords(rank, mesh)
        manifest["ranks"].append(rank_entry(rank, stage, t, dp))
    with open(os.path.join(bundle, "plan.json"), "w") as f:
        json.dump({"devices": len(rank_weights)}, f)
    rehash(bundle, manifest)


def padded(data, size=64):
    return data + bytes(size - len(data))


def pipeline(args):
    write_mesh_bundle(
        args.bundle, os.path.join(HERE, "pipeline.cpp"), args.lib_dir,
        {"pp": 2, "tp": 1, "dp": 1},
        [{"name": "x", "dtype": "float32", "shape": [2, 3]},
         {"name": "mode", "dtype": "int32", "shape": [1]}],
        [{"name": "y", "dtype": "float32", "shape": [2, 3]}],
        [([0], []), ([1], [0])],
        [padded(struct.pack("<3f", 1.0, 2.0, 3.0)),
         padded(struct.pack("<3f", 0.5, -1.0, 10.0))],
        64)


def collective_input(rank):
    """Device `rank`'s X of collectives.cpp."""
    return (np.arange(8, dtype=np.float32).reshape(2, 4) * (rank + 1)
            + 100 * rank - 3)


def to_bfloat16_bits(array):
    """float32 -> bfloat16 bit patterns (uint16), rounding to nearest even."""
    bits = np.asarray(array, np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bfloat16_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def collective_weights(rank):
    """X as float32 (offset 0), float16 (32) and bfloat16 bits (48)."""
    x = collective_input(rank)
    return (x.tobytes() + x.astype(np.float16).tobytes()
            + to_bfloat16_bits(x).tobytes())


def collectives(args):
    g = args.tp
    f32 = lambda *shape: {"dtype": "float32", "shape": list(shape)}
    names = ["sum", "product", "max", "min", "average"]
    outputs = [{"name": n, **f32(2, 4)} for n in names]
    outputs += [{"name": "gather1", **f32(2, 4 * g)},
                {"name": "gather0", **f32(2 * g, 4)},
                {"name": "scattered", **f32(2, 4)},
                {"name": "sliced", **f32(2, 4)},
                {"name": "exchanged", **f32(2 * g, 4)},
                {"name": "isum", "dtype": "int64", "shape": [2, 4]},
                {"name": "hsum", "dtype": "float16", "shape": [2, 4]},
                {"name": "bsum", "dtype": "bfloat16", "shape": [2, 4]}]
    write_mesh_bundle(
        args.bundle, os.path.join(HERE, "collectives.cpp"), args.lib_dir,
        {"pp": 1, "tp": g, "dp": 1}, [], outputs,
        [([], list(range(len(outputs))))],
        [collective_weights(r) for r in range(g)],
        1024, [f"CLEAVE_TP={g}"])


def mesh_coords(rank, mesh):
    """(stage, dp, tp) of `rank`, as runtime/include/cleave/rt/Mesh.h
    numbers the ranks."""
    pp, tp = mesh["pp"], mesh["tp"]
    return rank // tp % pp, rank // (tp * pp), rank % tp


def group_ranks(rank, mesh, axis):
    """The ranks of `rank`'s group along `axis` ("pp", "dp", "tp"), by their
    index along it."""
    stage, dp, tp = mesh_coords(rank, mesh)
    pp, width = mesh["pp"], mesh["tp"]
    members = []
    for i in range(mesh[axis]):
        s, d, t = (i if axis == "pp" else stage, i if axis == "dp" else dp,
                   i if axis == "tp" else tp)
        members.append((d * pp + s) * width + t)
    return members


def groups(args):
    """groups.cpp over a pp x dp x tp mesh: each rank's weights are its X,
    then per axis the NumPy sum and concatenation of its group's X. With
    --swap the dp and tp expectations trade places (a run must fail)."""
    mesh = {"pp": args.pp, "tp": args.tp, "dp": args.dp}
    size = args.pp * args.tp * args.dp
    weights = []
    for rank in range(size):
        expected = {}
        for axis in ("pp", "dp", "tp"):
            xs = [collective_input(r) for r in group_ranks(rank, mesh, axis)]
            expected[axis] = sum(xs).tobytes() + np.concatenate(xs).tobytes()
        if args.swap:
            expected["dp"], expected["tp"] = expected["tp"], expected["dp"]
        weights.append(collective_input(rank).tobytes() + expected["pp"]
                       + expected["dp"] + expected["tp"])
    write_mesh_bundle(
        args.bundle, os.path.join(HERE, "groups.cpp"), args.lib_dir, mesh,
        [], [], [([], [])] * args.pp, weights, 1024,
        [f"CLEAVE_PP={args.pp}", f"CLEAVE_DP={args.dp}",
         f"CLEAVE_TP={args.tp}", f"CLEAVE_WEIGHT_BYTES={len(weights[0])}"])


def edit(args):
    path = os.path.join(args.bundle, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    for item in args.set:
        key, value = item.split("=", 1)
        manifest[key] = json.loads(value)
    for item in args.program_set:
        key, value = item.split("=", 1)
        manifest["programs"][0][key] = json.loads(value)
    for item in args.rank_set:
        key, value = item.split("=", 1)
        manifest["ranks"][0][key] = json.loads(value)
    if args.rehash:
        rehash(args.bundle, manifest)
    else:
        with open(path, "w") as f:
            json.dump(manifest, f, indent=2)


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("affine")
    p.add_argument("bundle")
    p.add_argument("--lib-dir", required=True)
    p.set_defaults(run=affine)
    p = commands.add_parser("identity")
    p.add_argument("bundle")
    p.add_argument("--lib-dir", required=True)
    p.add_argument("--dtype", required=True)
    p.add_argument("--shape", required=True)
    p.add_argument("--input-name", default="x")
    p.add_argument("--name-blocks", action="store_true",
                   help="name each run's step after its block of the batch")
    p.set_defaults(run=identity)
    p = commands.add_parser("phases")
    p.add_argument("bundle")
    p.add_argument("--lib-dir", required=True)
    p.set_defaults(run=phases)
    p = commands.add_parser("pipeline")
    p.add_argument("bundle")
    p.add_argument("--lib-dir", required=True)
    p.set_defaults(run=pipeline)
    p = commands.add_parser("collectives")
    p.add_argument("bundle")
    p.add_argument("--lib-dir", required=True)
    p.add_argument("--tp", type=int, required=True)
    p.set_defaults(run=collectives)
    p = commands.add_parser("groups")
    p.add_argument("bundle")
    p.add_argument("--lib-dir", required=True)
    for axis in ("pp", "dp", "tp"):
        p.add_argument(f"--{axis}", type=int, default=1)
    p.add_argument("--swap", action="store_true")
    p.set_defaults(run=groups)
    p = commands.add_parser("edit")
    p.add_argument("bundle")
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--program-set", action="append", default=[])
    p.add_argument("--rank-set", action="append", default=[])
    p.add_argument("--rehash", action="store_true")
    p.set_defaults(run=edit)
    args = parser.parse_args()
    args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
