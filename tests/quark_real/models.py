"""The generated models the Quark tests quantize: small, real-valued, each one a
shape of model quarkplan plans differently (issue #23, item 2).

Written with onnx.helper and numpy from the pinned Quark environment; the
weights are a seeded bell curve so calibration sees real ranges (zeros would
give Quark degenerate scales and hide what a real model meets).
"""
from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _w(rng, shape, dtype=np.float32, scale=0.2):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _model(graph, opset=OPSET):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="quarkplan-tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def cnn(dtype=np.float32, name="cnn"):
    """NCHW, static 1x3x32x32: three Conv+Relu, a pool, a classifier Gemm (the node names the tests exclude by)."""
    rng = _rng(1)
    et = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    inits, nodes = [], []
    prev, ch = "input", 3
    for i, out_ch in enumerate([8, 8, 16]):
        w, b = f"conv{i}.weight", f"conv{i}.bias"
        inits += [numpy_helper.from_array(_w(rng, (out_ch, ch, 3, 3), dtype), w), numpy_helper.from_array(_w(rng, (out_ch,), dtype, 0.05), b)]
        nodes.append(helper.make_node("Conv", [prev, w, b], [f"c{i}"], name=f"/backbone/conv{i}/Conv", pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"/backbone/relu{i}/Relu"))
        prev, ch = f"r{i}", out_ch
        if i == 0:
            nodes.append(helper.make_node("MaxPool", [prev], ["p0"], name="/backbone/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2]))
            prev = "p0"
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["gap"], name="/head/gap/GlobalAveragePool"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="/head/Flatten"))
    inits += [numpy_helper.from_array(_w(rng, (10, ch), dtype), "fc.weight"), numpy_helper.from_array(_w(rng, (10,), dtype, 0.05), "fc.bias")]
    nodes.append(helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="/head/fc/Gemm", transB=1))
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", et, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("logits", et, [1, 10])], inits)
    return _model(g)


def transformer(layers=2, hidden=64, seq=16, name="transformer"):
    """MatMul-heavy with attention (Q.K^T -> Softmax -> .V), a residual Add per layer: what quarkplan reads as a transformer."""
    rng = _rng(2)
    inits, nodes = [], []
    prev = "hidden_states"
    for i in range(layers):
        l, p = f"/model/layers.{i}", f"l{i}."
        for w in ("q", "k", "v", "o", "up", "down"):
            shape = (hidden, 4 * hidden) if w == "up" else (4 * hidden, hidden) if w == "down" else (hidden, hidden)
            inits.append(numpy_helper.from_array(_w(rng, shape, scale=hidden ** -0.5), p + w))
        for w in ("q", "k", "v"):
            nodes.append(helper.make_node("MatMul", [prev, p + w], [p + w + "o"], name=f"{l}/attn/{w}_proj/MatMul"))
        nodes.append(helper.make_node("Transpose", [p + "ko"], [p + "kt"], name=f"{l}/attn/Transpose", perm=[0, 2, 1]))
        nodes.append(helper.make_node("MatMul", [p + "qo", p + "kt"], [p + "s"], name=f"{l}/attn/MatMul_qk"))
        nodes.append(helper.make_node("Softmax", [p + "s"], [p + "a"], name=f"{l}/attn/Softmax", axis=-1))
        nodes.append(helper.make_node("MatMul", [p + "a", p + "vo"], [p + "av"], name=f"{l}/attn/MatMul_av"))
        nodes.append(helper.make_node("MatMul", [p + "av", p + "o"], [p + "m"], name=f"{l}/attn/o_proj/MatMul"))
        nodes.append(helper.make_node("Add", [p + "m", prev], [p + "r"], name=f"{l}/attn/Add"))
        nodes.append(helper.make_node("MatMul", [p + "r", p + "up"], [p + "u"], name=f"{l}/mlp/up_proj/MatMul"))
        nodes.append(helper.make_node("Relu", [p + "u"], [p + "ur"], name=f"{l}/mlp/act/Relu"))
        nodes.append(helper.make_node("MatMul", [p + "ur", p + "down"], [p + "d"], name=f"{l}/mlp/down_proj/MatMul"))
        nodes.append(helper.make_node("Add", [p + "d", p + "r"], [p + "out"], name=f"{l}/mlp/Add"))
        prev = p + "out"
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, [1, seq, hidden])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, seq, hidden])], inits)
    return _model(g)


def multi_input():
    """Two image inputs, a Conv each, joined: the calibration set has one folder per input."""
    rng = _rng(3)
    inits = [numpy_helper.from_array(_w(rng, (8, 3, 3, 3)), "wa"), numpy_helper.from_array(_w(rng, (8, 3, 3, 3)), "wb"),
             numpy_helper.from_array(_w(rng, (8, 8, 3, 3)), "wc")]
    nodes = [helper.make_node("Conv", ["image_a", "wa"], ["a"], name="/branch_a/Conv", pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["image_b", "wb"], ["b"], name="/branch_b/Conv", pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["a", "b"], ["s"], name="/join/Add"),
             helper.make_node("Relu", ["s"], ["r"], name="/join/Relu"),
             helper.make_node("Conv", ["r", "wc"], ["out"], name="/head/Conv", pads=[1, 1, 1, 1])]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 3, 16, 16]) for n in ("image_a", "image_b")]
    g = helper.make_graph(nodes, "multi_input", ins, [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 8, 16, 16])], inits)
    return _model(g)


def with_subgraph():
    """An If whose branches hold MatMuls (what exclusion by subgraph and quarkplan's subgraph count see)."""
    rng = _rng(4)
    w0 = numpy_helper.from_array(_w(rng, (32, 32)), "w0")
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h"], name="/pre/MatMul"),
             helper.make_node("ReduceSum", ["h"], ["s"], name="/cond/ReduceSum", keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["c"], name="/cond/Greater")]
    branches = []
    for k in ("then", "else"):
        wk = numpy_helper.from_array(_w(rng, (32, 32)), f"w_{k}")
        bn = [helper.make_node("MatMul", ["h", f"w_{k}"], [f"y_{k}"], name=f"/{k}/MatMul")]
        branches.append(helper.make_graph(bn, k, [], [helper.make_tensor_value_info(f"y_{k}", TensorProto.FLOAT, [1, 8, 32])], [wk]))
    nodes.append(helper.make_node("If", ["c"], ["y"], name="/branch/If", then_branch=branches[0], else_branch=branches[1]))
    w1 = numpy_helper.from_array(_w(rng, (32, 32)), "w1")
    nodes.append(helper.make_node("MatMul", ["y", "w1"], ["out"], name="/post/MatMul"))
    zero = numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")
    g = helper.make_graph(nodes, "with_subgraph", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 8, 32])], [w0, w1, zero])
    return _model(g)


def write_all(folder: str) -> dict[str, str]:
    """Writes every generated model; returns name -> path."""
    os.makedirs(folder, exist_ok=True)
    out = {}
    for name, model in (("cnn", cnn()), ("cnn_fp16", cnn(np.float16, "cnn_fp16")), ("transformer", transformer()),
                        ("multi_input", multi_input()), ("subgraph", with_subgraph())):
        out[name] = os.path.join(folder, name + ".onnx")
        onnx.save(model, out[name])
    # External data: the transformer's weights beside it in one file (what large models ship as).
    ext_dir = os.path.join(folder, "external")
    os.makedirs(ext_dir, exist_ok=True)
    out["external_data"] = os.path.join(ext_dir, "transformer_ext.onnx")
    onnx.save(transformer(name="transformer_ext"), out["external_data"], save_as_external_data=True,
              all_tensors_to_one_file=True, location="transformer_ext.onnx.data", size_threshold=0)
    return out
