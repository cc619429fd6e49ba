# The peer of the HF intake benchmark: Python's json + struct reading every
# shard header named by model.safetensors.index.json (benchmark only).
import collections
import json
import os
import struct
import sys

folder = sys.argv[1]
with open(os.path.join(folder, "config.json")) as f:
    config = json.load(f)
with open(os.path.join(folder, "model.safetensors.index.json")) as f:
    index = json.load(f)
params = collections.Counter()
tensors = 0
for shard in sorted(set(index["weight_map"].values())):
    with open(os.path.join(folder, shard), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    for name, t in header.items():
        if name == "__metadata__":
            continue
        count = 1
        for d in t["shape"]:
            count *= d
        params[t["dtype"]] += count
        tensors += 1
print(tensors, "tensors", sum(params.values()), "params", config["model_type"])
