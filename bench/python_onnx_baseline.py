# The peer of the ONNX intake benchmark: onnx.load without external data plus
# an op histogram over every graph (Debian's python3-onnx; benchmark only).
import collections
import sys

import onnx


def walk(graph, counts):
    for node in graph.node:
        counts[node.op_type] += 1
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                walk(attr.g, counts)
            for g in attr.graphs:
                walk(g, counts)


model = onnx.load(sys.argv[1], load_external_data=False)
counts = collections.Counter()
walk(model.graph, counts)
print(sum(counts.values()), "nodes", len(counts), "op types")
