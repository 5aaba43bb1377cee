"""Checks a target file written by `cleave calibrate` against its preset.

    check_calibration.py CALIBRATED.json PRESET.json THREADS [ISA]

The file must be the preset with the device's rates replaced (compute
efficiency in (0, 1], a positive memory bandwidth at efficiency 1), its
instruction set the level measured at (ISA when given, else an x86-64
level, and the one the calibration's description names), nodes
and links unchanged, and a `calibration` of every kernel class the command
measures, each a table of positive samples by ascending size, the
library kernels' samples with a rate for their data streamed from beyond
the caches too (no higher than the resident one), the private caches'
size, and the reference problem's rates (one before each pass over the tables and one
after the last: two in a --quick calibration) with their drift.
"""

import json
import sys

COMPUTE = ["matmul", "matmul_skinny", "conv", "conv_pointwise", "conv_depthwise", "conv_1d",
           "recurrent", "attention", "pool"]
MEMORY = ["copy", "transpose", "elementwise", "activation", "softmax", "normalization"]


#: The tables by map size as well: every sample gives its output positions.
BY_MAP = ["conv", "conv_pointwise", "conv_depthwise"]

#: The fused loops and copies, timed with their data resident only.
RESIDENT_ONLY = ["copy", "elementwise", "activation"]


def check_table(name, samples, unit):
    assert isinstance(samples, list) and samples, f"{name}: no samples"
    rate, streamed = unit + "_per_s", "streamed_" + unit + "_per_s"
    keys = {unit, rate, "shape"} | ({"pixels"} if name in BY_MAP else set()) | \
        (set() if name in RESIDENT_ONLY else {streamed})
    for sample in samples:
        assert set(sample) == keys, f"{name}: {sample}"
        assert sample[unit] > 0 and sample[rate] > 0, f"{name}: {sample}"
        if streamed in sample:
            # Rounded to four figures each.
            assert 0 < sample[streamed] <= sample[rate] * (1 + 1e-3), f"{name}: {sample}"
    # Ascending by map size, then strictly by size on each map.
    order = [(sample.get("pixels", 0), sample[unit]) for sample in samples]
    assert order == sorted(set(order)), f"{name}: not ascending: {order}"
    if name in BY_MAP:
        assert len({pixels for pixels, _ in order}) >= 2, f"{name}: one map size"


def main():
    calibrated = json.load(open(sys.argv[1]))
    preset = json.load(open(sys.argv[2]))
    threads = int(sys.argv[3])
    for key in ("name", "description", "nodes", "links"):
        assert calibrated[key] == preset[key], key
    devices = calibrated["devices"]
    for key in ("name", "kind", "memory_bytes"):
        assert devices[key] == preset["devices"][key], key
    levels = ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"]
    assert devices["isa"] in levels, devices["isa"]
    if len(sys.argv) > 4:
        assert devices["isa"] == sys.argv[4], (devices["isa"], sys.argv[4])
    description = calibrated["calibration"]["description"]
    assert f"thread{'s' if threads != 1 else ''}, {devices['isa']} (x86-64 level " in description, \
        description
    assert 0 < devices["compute_efficiency"] <= 1
    assert devices["memory_bandwidth_bytes_per_s"] > 0
    assert devices["memory_efficiency"] == 1
    calibration = calibrated["calibration"]
    assert set(calibration) == {"description", "threads", "call_overhead_s", "cache_bytes",
                                "conv_block", "compute", "memory", "stability"}
    # A level 2 cache of at least 64 KiB per thread.
    assert calibration["cache_bytes"] >= 65536 * threads, calibration["cache_bytes"]
    stability = calibration["stability"]
    assert set(stability) == {"reference", "flops", "flops_per_s", "drift"}, stability
    assert stability["reference"] == "matmul 128x512x512", stability
    assert stability["flops"] == 2 * 128 * 512 * 512, stability
    # Convolutions a program holds in oneDNN's channel blocks (16 at
    # x86-64-v4, else 8, which the file names; large enough for oneDNN) are
    # timed so, and labelled with the layout; the others in NCHW.
    block = 16 if devices["isa"] == "x86-64-v4" else 8
    assert calibration["conv_block"] == block, calibration["conv_block"]
    blocked = {name: 0 for name in BY_MAP}
    for name in BY_MAP:
        for sample in calibration["compute"][name]:
            shape = sample["shape"].split()
            channels = int(shape[0][1:])
            macs = sample["flops"] / 2
            want = channels % block == 0 and macs >= 2 ** 18
            assert (shape[-1] == f"nChw{block}c") == want, (name, sample)
            blocked[name] += want
    assert all(blocked.values()), f"a table with no blocked sample: {blocked}"
    rates = stability["flops_per_s"]
    assert len(rates) == 2 and all(rate > 0 for rate in rates), rates
    drift = (max(rates) - min(rates)) / min(rates)
    assert abs(stability["drift"] - drift) <= 1e-3 * max(1.0, drift), (stability, drift)
    assert calibration["threads"] == threads, calibration["threads"]
    assert 0 < calibration["call_overhead_s"] < 1e-2
    assert sorted(calibration["compute"]) == sorted(COMPUTE), calibration["compute"].keys()
    assert sorted(calibration["memory"]) == sorted(MEMORY), calibration["memory"].keys()
    for name in COMPUTE:
        check_table(name, calibration["compute"][name], "flops")
    for name in MEMORY:
        check_table(name, calibration["memory"][name], "bytes")
    print("calibration ok:", len(COMPUTE) + len(MEMORY), "tables")


if __name__ == "__main__":
    main()
