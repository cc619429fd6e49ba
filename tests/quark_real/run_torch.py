#!/usr/bin/env python3
"""Torch plans checked by AMD Quark itself (issue #23, item 5).

Usage (with a release's Python, scripts/quark_env.sh --python RELEASE):
    run_torch.py --quarkplan BUILD/quarkplan --release R --corpus tests/data/hf --facts FACTS --work DIR [--only S]

Two parts, each printing a line per case and a count line.

1. Every printed command. Every corpus config is planned for every accelerator and goal (and a few
   option variants). For each confirmed plan the command `explain` prints is
   - split as a POSIX shell would (shlex) and required to equal the plan's argument list;
   - parsed by Python's own argparse, built flag by flag from the facts of quantize_quark.py's parser
     (tests/data/quark/quantize_quark_facts.json, read from amd/Quark at the commits it names, with
     the release's additions) and with --quant_scheme's choices taken from the installed Quark's
     scheme registry, as the script takes them;
   - turned into Quark's QConfig the way quantize_quark.py's _build_quant_config does, by the
     installed Quark's LLMTemplate.get_config: the template must exist, the scheme, algorithms, KV
     and layer schemes be accepted, and the exclusions Quark ends with equal the plan's.
   quantize_quark.py itself is not in the amd-quark wheel, the test machines cannot reach GitHub,
   and Quark's code is not copied into this repository: the parser is rebuilt from its facts.

2. Real exports. Small random-weight checkpoints are written from corpus configs (Llama, Qwen2,
   Qwen3, Mistral, a Qwen3 MoE), with a word-level tokenizer. Each is planned for several
   accelerators and schemes; the printed command is parsed as above and run through what
   quantize_quark.py's main does with those arguments, using Quark's own get_model, ModelQuantizer,
   freeze, export_safetensors (or direct_quantize_checkpoint for file-to-file), on the CPU. Only the
   calibration set differs: the plan's dataset is on the Hub, so random token ids of the plan's batch
   size are used (at most 4 samples of 64 tokens). `quarkplan verify PLAN OUTPUT --source SRC` must
   keep every promise; a copy whose quantization_config names another weight dtype must be refused.

Every plan is made for the release under test (--quark-version). Prints PASS / FAIL (with Quark's
error) / REFUSED (quarkplan refused the plan). Exit 0 when nothing failed.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from case_tools import broken_checks, first_line, sh  # noqa: E402

# Case lines go to the real stdout; everything else written to fd 1 (Quark's logger, tqdm) goes to
# stderr, which run.sh keeps in a file.
OUT = sys.stdout
# Every plan is made for the release under test (quarkplan plan --quark-version RELEASE), so a
# difference from what that Quark does is a failure, never a note.
HARDWARE = ["mi300x", "mi325x", "mi355x", "h100", "h200", "b200", "a100", "rtx4090", "cpu", "ryzen-ai"]
GOALS = ["balanced", "accuracy", "size", "mixed", "experiment"]
# Option variants planned on every corpus config besides the plain goal runs.
VARIANTS = [
    ["--gpus", "8"],
    ["--kv-cache", "none"],
    ["--export", "gguf"],
    ["--export", "onnx"],
    ["--eval", "none"],
    ["--eval", "full"],
    ["--scheme", "int4_wo_128", "--algorithm", "awq"],
    ["--scheme", "int4_wo_128", "--algorithm", "gptq"],
    ["--scheme", "int8", "--algorithm", "smoothquant"],
    ["--scheme", "fp8", "--layer-scheme", "*down_proj=int8"],
    ["--exclude", "lm_head", "--exclude", "*gate*"],
    ["--trust-remote-code"],
]


class ParseError(Exception):
    pass


class QuarkArgParser(argparse.ArgumentParser):
    """argparse as is, except that an error raises instead of exiting."""

    def error(self, message):
        raise ParseError(message)


def comma_list(s: str):
    return s.split(",")


def build_parser(facts: dict, release: str, schemes: list[str]) -> QuarkArgParser:
    """quantize_quark.py's parser from its facts: every flag with its action, nargs, type, choices,
    const, aliases and default; the mutually exclusive groups; allow_abbrev as the script sets it."""
    ts = facts["torch_script"]
    flags = list(ts["flags"])
    rel = facts.get("releases", {}).get(release, {})
    flags += rel.get("added_flags", [])
    removed = set(rel.get("removed_flags", []))
    p = QuarkArgParser(prog="quantize_quark.py", allow_abbrev=ts["parser"]["allow_abbrev"])
    groups = {}
    for g in ts["mutually_exclusive_groups"]:
        grp = p.add_mutually_exclusive_group()
        for name in g:
            groups[name] = grp
    types = {"str": str, "int": int, "float": float, "comma_list": comma_list}
    store_false_defaults = {}
    for f in flags:
        if f["name"] in removed:
            continue
        kw = {"dest": f["dest"]}
        action = f["action"]
        if action in ("store_true", "store_false"):
            kw["action"] = action
            if action == "store_false":
                store_false_defaults[f["dest"]] = f["default"]
        else:
            kw["action"] = action
            if f.get("nargs") is not None:
                kw["nargs"] = f["nargs"]
            kw["type"] = types[f.get("type") or "str"]
            choices = f.get("choices")
            if choices == "@torch_schemes.registered":
                choices = schemes
            if choices is not None:
                kw["choices"] = choices
            if "const" in f:
                kw["const"] = f["const"]
            kw["default"] = f.get("default")
        if f.get("required"):
            kw["required"] = True
        names = [f["name"]] + f.get("aliases", [])
        (groups.get(f["name"]) or p).add_argument(*names, **kw)
    p.set_defaults(**store_false_defaults)
    return p


def split_command(text: str) -> tuple[dict, list[str], list[list[str]]]:
    """The printed text as a shell reads it: env assignments, `python quantize_quark.py ARGS`, and the
    post-Quark steps after '# then:' (each must parse as shell words too)."""
    main, _, then = text.partition("# then:\n")
    # A shell removes backslash-newline before splitting words (shlex would keep the newline).
    main = main.replace("\\\n", "")
    try:
        words = shlex.split(main, comments=True)
        steps = [shlex.split(line, comments=True) for line in then.splitlines() if line.strip()]
    except ValueError as e:
        raise ParseError(f"the printed text is not shell words: {e}") from e
    env = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        k, _, v = words.pop(0).partition("=")
        env[k] = v
    if words[:2] != ["python", "quantize_quark.py"]:
        raise ParseError(f"the command does not start with 'python quantize_quark.py': {words[:3]}")
    return env, words[2:], [s for s in steps if s]


def quark_exclusions(patterns: list[str], release: str) -> list[str]:
    """The list a release's QConfig ends with for these patterns: 0.12's QConfig.__post_init__
    (quark/torch/quantization/config/config.py) adds PATTERN.* for each pattern not ending in '.*';
    0.13 keeps the patterns verbatim (issue #21 makes this catalog data)."""
    if release != "0.12.post1":
        return list(patterns)
    return [q for p in patterns for q in ([p] if p.endswith(".*") else [p, p + ".*"])]


def model_type_of(model_dir: str) -> str | None:
    cfg = json.loads(Path(model_dir, "config.json").read_text())
    arch = cfg.get("architectures") or []
    return cfg.get("model_type", arch[0] if arch else None)


def build_quant_config(ns, model_type: str, files=None):
    """What quantize_quark.py's _build_quant_config does with the parsed arguments; `files` holds the
    files explain writes before the command ({path: content}), which --quant_algo_config_file reads."""
    from quark.torch import LLMTemplate

    if model_type not in LLMTemplate.list_available():
        raise ValueError(f"Model type '{model_type}' is not supported (quantize_quark.py raises ValueError)")
    template = LLMTemplate.get(model_type)
    algo_configs = None
    if ns.quant_algo_config_file:
        # quantize_quark.py: algo_configs[name] = load_quant_algo_config_from_file(path), for each pair.
        from quark.torch.quantization.config.config import load_quant_algo_config_from_file

        algo_configs = {}
        for algo_name, path in ns.quant_algo_config_file:
            if not files or path not in files:
                raise ValueError(f"--quant_algo_config_file {algo_name} {path}: explain writes no such file")
            with tempfile.TemporaryDirectory() as d:
                f = Path(d) / "config.json"
                f.write_text(files[path])
                algo_configs[algo_name] = load_quant_algo_config_from_file(str(f))
    layer_config = {pat: scheme for pat, scheme in (ns.layer_quant_scheme or [])}
    qc = template.get_config(scheme=ns.quant_scheme, algorithm=ns.quant_algo, kv_cache_scheme=ns.kv_cache_dtype,
                             min_kv_scale=ns.min_kv_scale, layer_config=layer_config,
                             attention_scheme=ns.attention_dtype, exclude_layers=ns.exclude_layers, algo_configs=algo_configs)
    if hasattr(ns, "no_keep_prequantized_layers") and hasattr(qc, "keep_prequantized_layers"):
        qc.keep_prequantized_layers = not ns.no_keep_prequantized_layers
    return qc


class Counts(dict):
    def add(self, k):
        self[k] = self.get(k, 0) + 1


class Runner:
    def __init__(self, a):
        self.a = a
        self.work = Path(a.work)
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.facts = json.loads(Path(a.facts).read_text())
        from quark.torch import LLMTemplate

        self.schemes = list(LLMTemplate.get_supported_schemes())
        self.parser = build_parser(self.facts, a.release, self.schemes)
        self.counts = Counts()
        self.checked_commands = 0
        self.follow_ups = 0  # quark-quant-perf commands parsed by Quark's own parser

    def line(self, kind, name, text=""):
        self.counts.add(kind)
        print(f"{kind} {name}" + (f": {text}" if text else ""), file=OUT, flush=True)

    # ---- planning ----
    def plan(self, model_dir: str, args: list[str], folder: Path):
        """Plans and explains; returns (exit, invocation, plan, stderr)."""
        folder.mkdir(parents=True, exist_ok=True)
        plan = folder / "quant_plan.json"
        rc, out, err = sh([self.a.quarkplan, "plan", model_dir, "--yes", "-o", str(plan), "--quark-version", self.a.release] + args,
                          cwd=folder, timeout=600)
        if rc != 0:
            return rc, None, None, err
        rc, out, err = sh([self.a.quarkplan, "explain", str(plan), "--json"], cwd=folder)
        if rc != 0:
            return 100 + rc, None, None, err
        shown = json.loads(out)
        inv = shown["invocation"]
        inv["files"] = shown.get("files") or []  # what explain writes before the command
        inv["follow_up"] = shown.get("follow_up")  # the next step with Quark's own tools, when there is one
        return 0, inv, json.loads(plan.read_text()), ""

    def check_command(self, inv: dict, plan: dict, model_dir: str):
        """Shell split, argparse and Quark's config builder; returns (namespace, problem or None, note)."""
        if inv.get("tool") != "quantize_quark.py":
            return None, None, f"no quantize_quark.py command ({inv.get('tool')})"
        try:
            env, words, steps = split_command(inv["text"])
        except ParseError as e:
            return None, str(e), ""
        if words != inv["args"]:
            return None, f"the printed text splits to {words}, not the plan's arguments {inv['args']}", ""
        if env != (inv.get("env") or {}):
            return None, f"the printed environment {env} differs from the invocation's {inv.get('env')}", ""
        try:
            ns = self.parser.parse_args(words)
        except ParseError as e:
            return None, f"quantize_quark.py's argparse ({self.a.release}): {e}", ""
        # The parser's own post-parse checks.
        for pair in ns.layer_quant_scheme or []:
            if len(pair) != 2:
                return ns, f"--layer_quant_scheme {pair}: not PATTERN SCHEME", ""
        if ns.revision is not None and os.path.isdir(ns.model_dir):
            return ns, "--revision with a local --model_dir raises ValueError", ""
        if ns.skip_quantization:
            return ns, None, "skips quantization"
        mt = model_type_of(ns.model_dir)
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                qc = build_quant_config(ns, mt, {f["path"]: f["content"] for f in inv.get("files") or []})
        except Exception as e:  # noqa: BLE001 - Quark's own refusal is the finding
            return ns, f"Quark's get_config for model type {mt}: {type(e).__name__}: {first_line(e)}", ""
        # The exclusions Quark ends with are the plan's, under the release's matching rules.
        if sorted(set(qc.exclude)) != sorted(set(quark_exclusions(plan["exclude_layers"], self.a.release))):
            return ns, f"Quark excludes {sorted(qc.exclude)}, the plan lists {sorted(plan['exclude_layers'])}", "exclusions"
        kv = bool(getattr(qc, "kv_cache_quant_config", None))
        if kv != isinstance(plan.get("kv_cache_scheme"), str):
            return ns, f"Quark's KV-cache config is {'set' if kv else 'empty'}, the plan's kv_cache_scheme is {plan.get('kv_cache_scheme')}", ""
        if inv.get("follow_up"):
            problem = self.check_follow_up(inv["follow_up"], plan)
            if problem:
                return ns, problem, ""
            self.follow_ups += 1
        return ns, None, ""

    def check_follow_up(self, fu: dict, plan: dict):
        """The quark-quant-perf command explain names next, parsed by that Quark's own parser
        (quark.experimental.torch.quant_perf.cli.build_parser); returns a problem or None."""
        words = shlex.split(fu["text"].replace("\\\n", " "))
        if words[:1] != ["quark-quant-perf"] or words[1:] != fu["args"]:
            return f"the follow-up text splits to {words}, not quark-quant-perf and its arguments {fu['args']}"
        from quark.experimental.torch.quant_perf.cli import build_parser

        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                ns = build_parser().parse_args(words[1:])
        except SystemExit:
            return f"quark-quant-perf's argparse ({self.a.release}): {first_line(err.getvalue().strip().splitlines()[-1] if err.getvalue() else 'exit')}"
        if ns.gpu_type != plan.get("hardware"):
            return f"quark-quant-perf --gpu-type {ns.gpu_type}, the plan's hardware is {plan.get('hardware')}"
        from quark.experimental.torch.quant_perf.quantize import search

        allowed = search._resolve_layer_precision_candidates(None, search._hardware_target(ns.gpu_type))
        extra = [m for m in (ns.layer_precision_candidates or []) if m not in allowed]
        if extra:
            return f"quark-quant-perf candidates {extra} are not among what the search takes on {ns.gpu_type} ({allowed})"
        if plan.get("global_scheme") in allowed and ns.layer_precision_candidates and plan["global_scheme"] not in ns.layer_precision_candidates:
            return f"the plan's scheme {plan['global_scheme']} is not among the search's candidates {ns.layer_precision_candidates}"
        return None

    def commands(self):
        corpus = Path(self.a.corpus)
        jobs = []
        for m in sorted(p for p in corpus.iterdir() if (p / "config.json").is_file()):
            if self.a.only and self.a.only not in m.name:
                continue
            for hw in HARDWARE:
                for g in GOALS:
                    jobs.append((m, ["--hardware", hw, "--goal", g]))
                for v in VARIANTS:
                    jobs.append((m, ["--hardware", hw] + v))
        seen = {}

        def planned(job):
            m, args = job
            name = f"{m.name} {' '.join(args)}"
            folder = self.work / "commands" / name.replace(" ", "_").replace("*", "x").replace("/", "_").replace("=", "-")
            r = self.plan(str(m), args, folder)
            shutil.rmtree(folder, ignore_errors=True)
            return name, m, r

        # Planning is two process runs per case: threads keep both cores busy; Quark's side is serial.
        with ThreadPoolExecutor(max_workers=2) as ex:
            for name, m, (rc, inv, plan, err) in ex.map(planned, jobs):
                if rc != 0:
                    self.counts.add("REFUSED")
                    continue
                key = json.dumps([inv.get("text", "").replace(str(m), "MODEL"), model_type_of(str(m))])
                if key in seen:
                    self.counts.add("same")
                    continue
                seen[key] = name
                self.checked_commands += 1
                ns, problem, note = self.check_command(inv, plan, str(m))
                if problem:
                    self.line("FAIL", name, problem)
                else:
                    self.counts.add("PASS")

    # ---- real exports ----
    def tiny_checkpoint(self, corpus_name: str, dest: Path):
        """A random-weight model of the corpus config's architecture, a few MB, with a tokenizer."""
        import torch
        from tokenizers import Tokenizer, models as tok_models, pre_tokenizers
        from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast

        cfg = json.loads((Path(self.a.corpus) / corpus_name / "config.json").read_text())
        shrink = {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 1024, "moe_intermediate_size": 256,
                  "num_experts": 4, "num_local_experts": 4, "num_experts_per_tok": 2, "max_window_layers": 2}
        for k, v in shrink.items():
            if k in cfg or k in ("num_hidden_layers", "vocab_size", "head_dim"):
                cfg[k] = v
        for k in ("layer_types", "mlp_only_layers", "quantization_config", "auto_map"):
            cfg.pop(k, None)
        cfg["tie_word_embeddings"] = False
        model_type = cfg.pop("model_type")
        config = AutoConfig.for_model(model_type, **{k: v for k, v in cfg.items() if k not in ("transformers_version",)})
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
        model.save_pretrained(dest)
        # Quark's get_tokenizer takes token 151643 as the pad token of qwen/qwen2 models (Qwen's
        # <|endoftext|>): their tokenizer must reach it, whatever the tiny model's vocabulary.
        words = 151644 if model_type in ("qwen", "qwen2") else 1024
        vocab = {"[UNK]": 0, "<s>": 1, "</s>": 2}
        vocab.update({f"w{i}": i for i in range(3, words)})
        tok = Tokenizer(tok_models.WordLevel(vocab, unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", bos_token="<s>", eos_token="</s>",
                                pad_token="</s>", model_max_length=4096).save_pretrained(dest)

    def quantize(self, ns, plan: dict, out: Path, files=None):
        """What quantize_quark.py's main does with these arguments, on the CPU."""
        import torch
        from quark.torch import ModelQuantizer, export_safetensors
        from quark.torch.utils.llm import get_model, get_tokenizer

        mt = model_type_of(ns.model_dir)
        qc = build_quant_config(ns, mt, files)
        if ns.file2file_quantization:
            from quark.torch import LLMTemplate

            ModelQuantizer(qc).direct_quantize_checkpoint(pretrained_model_path=ns.model_dir, save_path=str(out),
                                                         weight_converters=LLMTemplate.get(mt).f2f_weight_converters)
            return
        model, _ = get_model(ns.model_dir, ns.data_type, "cpu", None, False, ns.model_attn_implementation,
                             trust_remote_code=ns.trust_remote_code)
        tokenizer = get_tokenizer(ns.model_dir, max_seq_len=ns.seq_len, model_type=mt, trust_remote_code=ns.trust_remote_code)
        g = torch.Generator().manual_seed(1)
        n = max(1, min(ns.num_calib_data, 4))
        calib = [torch.randint(3, 1024, (ns.batch_size, min(ns.seq_len, 64)), generator=g) for _ in range(n)]
        try:
            from quark.torch.utils.llm import preprocess_for_quantization

            preprocess_for_quantization(model)
        except ImportError:
            pass
        q = ModelQuantizer(qc, ns.multi_device)
        model = q.quantize_model(model, calib)
        model = q.freeze(model)
        if ns.model_export and "hf_format" in ns.model_export:
            with torch.no_grad():
                export_safetensors(model=model, output_dir=str(out), custom_mode=ns.custom_mode,
                                   weight_format=ns.export_weight_format, pack_method=ns.pack_method)
            tokenizer.save_pretrained(str(out))

    def verify(self, plan_path: Path, out: Path, src: Path):
        rc, o, e = sh([self.a.quarkplan, "verify", str(plan_path), str(out), "--source", str(src), "--json"])
        return rc, o, e

    def preparation(self):
        """The experts quarkplan's intake names as Linear are those Quark's model preparation makes Linear:
        Granite MoE's GraniteMoeParallelExperts stay as they are (catalog experts_not_linear), Qwen3-MoE's
        fused experts become per-expert Linear modules under the names the intake gives them."""
        import torch
        from transformers import AutoModelForCausalLM

        try:
            from quark.torch.utils.llm import preprocess_for_quantization
        except ImportError:
            return
        for corpus_name in ("granite-3.1-1b-a400m-instruct", "qwen3-30b-a3b"):
            if self.a.only and self.a.only not in corpus_name:
                continue
            name = f"model preparation {corpus_name}"
            src = self.work / "tiny" / corpus_name
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    self.tiny_checkpoint(corpus_name, src)
                    model = AutoModelForCausalLM.from_pretrained(src, torch_dtype=torch.bfloat16)
                    preprocess_for_quantization(model)
            except Exception as e:  # noqa: BLE001
                self.line("FAIL", name, f"{type(e).__name__}: {first_line(e)}")
                continue
            quark_experts = sorted(n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear) and ".experts." in n)
            rc, out, err = sh([self.a.quarkplan, "intake", str(src), "--json", "--quark-version", self.a.release])
            if rc != 0:
                self.line("FAIL", name, f"intake: {first_line(err)}")
                continue
            q = json.loads(out)["quantization_targets"]
            ours = sorted(x for n, r in zip(q["module_names"], q["module_roles"]) if r == "expert" for x in expand_ranges(n))
            said = any(r.get("rule") == "torch.intake.experts_not_linear" for r in json.loads(out)["risks"])
            if bool(quark_experts) != bool(ours) or said == bool(quark_experts):
                self.line("FAIL", name, f"Quark made {len(quark_experts)} expert Linear modules ({', '.join(quark_experts[:2])}); "
                                        f"the intake names {ours[:2]}, experts_not_linear said: {said}")
                continue
            if quark_experts != ours:
                self.line("FAIL", name, f"Quark names {sorted(set(quark_experts) - set(ours))[:2]}, the intake {sorted(set(ours) - set(quark_experts))[:2]}")
                continue
            self.line("PASS", name, f"{len(quark_experts)} expert Linear modules after preprocess_for_quantization, as the intake says")

    def exports(self):
        cases = {
            "llama-3.2-1b-instruct": [["--hardware", "mi300x"], ["--hardware", "mi355x"], ["--hardware", "cpu"], ["--hardware", "ryzen-ai"],
                                      ["--hardware", "h100"], ["--hardware", "a100"],
                                      ["--hardware", "mi300x", "--scheme", "ptpc_fp8"],
                                      ["--hardware", "mi355x", "--scheme", "mxfp4"],
                                      ["--hardware", "mi355x", "--goal", "size"],
                                      ["--hardware", "b200", "--goal", "size"],
                                      ["--hardware", "mi300x", "--scheme", "int4_wo_128", "--insist"],
                                      ["--hardware", "mi300x", "--scheme", "fp8", "--layer-scheme", "*down_proj=int8"],
                                      ["--hardware", "mi355x", "--exclude", "lm_head", "--exclude", "*o_proj"],
                                      ["--hardware", "cpu", "--scheme", "int4_wo_128", "--algorithm", "gptq"],
                                      ["--hardware", "cpu", "--scheme", "int4_wo_128", "--algorithm", "awq"],
                                      ["--hardware", "cpu", "--scheme", "int8", "--algorithm", "smoothquant"]],
            "qwen2.5-7b-instruct": [["--hardware", "mi300x"], ["--hardware", "mi355x"], ["--hardware", "ryzen-ai"]],
            # Qwen3 has no built-in AWQ or SmoothQuant config: the plan writes one (--quant_algo_config_file).
            "qwen3-8b": [["--hardware", "mi300x"], ["--hardware", "cpu"], ["--hardware", "ryzen-ai"], ["--hardware", "a100"]],
            "mistral-7b-v0.3": [["--hardware", "mi300x"], ["--hardware", "mi355x"]],
            "qwen3-30b-a3b": [["--hardware", "mi300x"], ["--hardware", "mi355x"], ["--hardware", "mi355x", "--scheme", "mxfp4"],
                              # AMD's W4A8 practice (amd/Kimi-K2-Thinking-W4A8): INT4-FP8 experts, FP8 elsewhere
                              # (vLLM refuses int4_fp8 for dense layers, so never as the global scheme).
                              ["--hardware", "mi300x", "--scheme", "fp8", "--layer-scheme", "*experts*=int4_fp8"],
                              # The size goal on MI300X chooses it itself: PTPC-FP8 layers, '*.experts*' int4_fp8
                              # (a pattern that also matches vLLM's fused MoE layer name).
                              ["--hardware", "mi300x", "--goal", "size"]],
        }
        self.preparation()
        for corpus_name, variants in cases.items():
            if self.a.only and self.a.only not in corpus_name:
                continue
            src = self.work / "tiny" / corpus_name
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    self.tiny_checkpoint(corpus_name, src)
            except Exception as e:  # noqa: BLE001
                self.line("FAIL", f"tiny {corpus_name}", f"could not write the checkpoint: {type(e).__name__}: {first_line(e)}")
                continue
            for args in variants:
                name = f"tiny {corpus_name} {' '.join(args)}"
                folder = self.work / "exports" / name.replace(" ", "_").replace("*", "x").replace("=", "-")
                rc, inv, plan, err = self.plan(str(src), args + ["--eval", "none"], folder)
                if rc != 0:
                    self.line("REFUSED", name, first_line(err))
                    continue
                ns, problem, note = self.check_command(inv, plan, str(src))
                if problem:
                    self.line("FAIL", name, problem)
                    continue
                out = folder / ns.output_dir  # relative to where the command runs (the plan's folder here)
                t = time.time()
                log = io.StringIO()
                try:
                    with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                        self.quantize(ns, plan, out, {f["path"]: f["content"] for f in inv.get("files") or []})
                except Exception as e:  # noqa: BLE001 - Quark's error is the finding
                    (folder / "quark.log").write_text(log.getvalue() + traceback.format_exc())
                    self.line("FAIL", name, f"Quark: {type(e).__name__}: {first_line(e)} (log: {folder / 'quark.log'})")
                    continue
                secs = time.time() - t
                # The steps after Quark that run where Quark ran (a file put back); model_generate runs
                # on the Ryzen AI PC, not here.
                _, _, steps = split_command(inv["text"])
                for step in steps:
                    if step[0] == "cp":
                        subprocess.run(step, cwd=folder, check=True)
                if not (out / "config.json").is_file():
                    self.line("FAIL", name, f"Quark wrote no export in {out}")
                    continue
                rc, o, e = self.verify(folder / "quant_plan.json", out, src)
                if rc != 0:
                    self.line("FAIL", name, f"verify refused Quark's export ({', '.join(broken_checks(o))}): {first_line(e)}")
                    continue
                # A broken promise: the export claims another weight dtype.
                broken = folder / "broken"
                shutil.copytree(out, broken)
                cfg = json.loads((broken / "config.json").read_text())
                w = cfg["quantization_config"]["global_quant_config"].get("weight")
                if isinstance(w, list) and w:  # a two-level weight spec (int4_fp8): its first level
                    w = w[0]
                if isinstance(w, dict):
                    w["dtype"] = "uint8" if w.get("dtype") != "uint8" else "int8"
                    (broken / "config.json").write_text(json.dumps(cfg, indent=2))
                    rc2, o2, _ = self.verify(folder / "quant_plan.json", broken, src)
                    if "verify.torch.global_scheme" not in broken_checks(o2):
                        self.line("FAIL", name, "verify kept an export whose weight dtype was edited")
                        continue
                    self.edited += 1
                self.line("PASS", name, f"{plan['global_scheme']} in {secs:.1f} s; verify kept every promise")
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(broken, ignore_errors=True)


def expand_ranges(name: str):
    """The names an intake entry collapses ("layers.{0..2}.mlp" -> layers.0.mlp, layers.1.mlp, layers.2.mlp)."""
    m = re.search(r"\{(\d+)\.\.(\d+)\}", name)
    if not m:
        return [name]
    return [x for i in range(int(m.group(1)), int(m.group(2)) + 1) for x in expand_ranges(name[:m.start()] + str(i) + name[m.end():])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quarkplan", required=True)
    ap.add_argument("--release", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--facts", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--part", choices=["commands", "exports", "all"], default="all")
    a = ap.parse_args()
    global OUT
    sys.stdout.flush()
    OUT = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    a.quarkplan, a.corpus = str(Path(a.quarkplan).resolve()), str(Path(a.corpus).resolve())
    import quark

    if quark.__version__ != a.release:
        print(f"this Python runs amd-quark {quark.__version__}, not {a.release}", file=sys.stderr)
        return 2
    t0 = time.time()
    r = Runner(a)
    r.edited = 0
    if a.part in ("commands", "all"):
        r.commands()
        c = dict(r.counts)
        print(f"quantize_quark.py {a.release}: {r.checked_commands} distinct printed commands checked "
              f"(shell split, argparse, Quark's get_config; {r.follow_ups} quark-quant-perf follow-ups through its parser), "
              f"{c.get('PASS', 0)} passed, {c.get('FAIL', 0)} failed; "
              f"{c.get('REFUSED', 0)} plans refused by "
              f"quarkplan, {c.get('same', 0)} repeated a command", file=OUT, flush=True)
        fails = c.get("FAIL", 0)
        r.counts = Counts()
    else:
        fails = 0
    if a.part in ("exports", "all"):
        r.exports()
        c = r.counts
        print(f"quark.torch {a.release}: {c.get('PASS', 0) + c.get('FAIL', 0)} tiny checkpoints quantized as planned, "
              f"{c.get('PASS', 0)} passed verify, {c.get('FAIL', 0)} failed; {c.get('REFUSED', 0)} refused by quarkplan; "
              f"{r.edited} edited exports refused by verify; {time.time() - t0:.0f} s", file=OUT, flush=True)
        fails += c.get("FAIL", 0)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
