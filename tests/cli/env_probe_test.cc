// `quarkplan env` with fake *-smi programs on PATH printing recorded outputs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>

#include "catalog/catalog.h"
#include "env/probe.h"
#include "support/test_support.h"

using namespace qp_test;
using quarkplan::Json;

namespace {

// A PATH holding shell scripts that print recorded outputs.
struct FakePath {
  TempDir dir;
  std::map<std::string, std::string> files;  // what sys.read returns, by path
  void tool(const std::string& name, const std::string& script) {
    write_file(dir / name, "#!/bin/sh\n" + script + "\n");
    ::chmod((dir / name).c_str(), 0755);
  }
  void printing(const std::string& name, const std::string& recorded, const std::string& banner = "") {
    std::string body = banner.empty() ? "cat '" + testdata("fake_smi/" + recorded).string() + "'"
                                      : "if [ $# -eq 0 ]; then cat '" + testdata("fake_smi/" + banner).string() + "'; else cat '" +
                                            testdata("fake_smi/" + recorded).string() + "'; fi";
    tool(name, body);
  }
  Json probe() {
    quarkplan::ProbeSystem sys = quarkplan::real_system();
    std::string path = dir.path().string() + ":/usr/bin:/bin";
    auto base_getenv = sys.getenv;
    sys.getenv = [path, base_getenv](const std::string& n) { return n == "PATH" ? path : base_getenv(n); };
    sys.run = [path](const std::string& program, const std::string& args, std::string& out) {
      std::string p = path.substr(0, path.find(':')) + "/" + program;
      if (::access(p.c_str(), X_OK) != 0) {
        if (program != "python3") return false;
        p = "/usr/bin/python3";
      }
      FILE* f = ::popen((p + " " + args + " 2>/dev/null").c_str(), "r");
      char buf[4096];
      size_t n;
      out.clear();
      while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
      return ::pclose(f) == 0;
    };
    auto fs = files;
    sys.read = [fs](const std::string& p) { return fs.count(p) ? fs.at(p) : std::string(); };
    sys.exists = [](const std::string&) { return false; };
    Json env = quarkplan::probe_environment(sys, quarkplan::Catalog::load().hardware(), quarkplan::Catalog::load().onnx()["npu_generations"]);
    EXPECT_TRUE(quarkplan::validate_against_schema(env, "schemas/env_context.schema.json").empty()) << env.dump();
    return env;
  }
};

}  // namespace

TEST(EnvProbe, NvidiaH100) {
  FakePath p;
  p.printing("nvidia-smi", "nvidia-smi.h100x8", "nvidia-smi.banner");
  Json e = p.probe();
  EXPECT_EQ(e["hardware"]["accelerator"], "nvidia-cuda");
  EXPECT_EQ(e["hardware"]["gpu_count"], 8);
  EXPECT_EQ(e["hardware"]["gpu_model"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(e["hardware"]["gpu_arch"], "sm90");
  EXPECT_EQ(e["hardware"]["cuda_version"], "12.6");
  EXPECT_NEAR(e["hardware"]["memory_gb"].get<double>(), 79.6, 0.1);
  EXPECT_EQ(e["hardware"]["quarkplan_hardware"], "h100");
}

TEST(EnvProbe, AmdMi300x) {
  FakePath p;
  p.printing("rocminfo", "rocminfo.mi300x");
  p.printing("rocm-smi", "rocm-smi.mi300x");
  Json e = p.probe();
  EXPECT_EQ(e["hardware"]["accelerator"], "amd-rocm");
  EXPECT_EQ(e["hardware"]["gpu_count"], 2);
  EXPECT_EQ(e["hardware"]["gpu_model"], "AMD Instinct MI300X");
  EXPECT_EQ(e["hardware"]["gpu_arch"], "gfx942");
  EXPECT_EQ(e["hardware"]["rocm_version"], "unknown");  // ROCm present, version not found
  EXPECT_NEAR(e["hardware"]["memory_gb"].get<double>(), 192.0, 0.1);
  EXPECT_EQ(e["hardware"]["quarkplan_hardware"], "mi300x");
}

TEST(EnvProbe, NoEvidenceIsUnknownNeverCpu) {
  FakePath p;
  Json e = p.probe();
  EXPECT_EQ(e["hardware"]["accelerator"], "unknown");
  EXPECT_FALSE(e["hardware"]["detection_notes"].empty());
}

TEST(EnvProbe, ToolsProvingZeroGpusMeanCpu) {
  FakePath p;
  p.tool("nvidia-smi", "echo 'No devices were found'");
  Json e = p.probe();
  EXPECT_EQ(e["hardware"]["accelerator"], "cpu");
}

TEST(EnvProbe, ConflictingEvidenceIsUnknownAndExplained) {
  FakePath p;
  p.printing("nvidia-smi", "nvidia-smi.h100x8", "nvidia-smi.banner");
  p.printing("rocminfo", "rocminfo.mi300x");
  Json e = p.probe();
  EXPECT_EQ(e["hardware"]["accelerator"], "unknown");
  std::string notes = e["hardware"]["detection_notes"].dump();
  EXPECT_NE(notes.find("Both NVIDIA"), std::string::npos) << notes;
}

TEST(EnvProbe, PythonOutsideSupportedRangeIsFlagged) {
  FakePath p;
  p.tool("python3", "echo 'Python 3.14.1'");
  Json e = p.probe();
  EXPECT_EQ(e["environment"]["python"], "3.14");
  EXPECT_NE(e["hardware"]["detection_notes"].dump().find("outside 3.11-3.13"), std::string::npos);
}

TEST(EnvProbe, EnvContextDrivesTheTorchPlan) {
  FakePath p;
  p.printing("rocminfo", "rocminfo.mi300x");
  p.printing("rocm-smi", "rocm-smi.mi300x");
  Json env = p.probe();
  TempDir d;
  write_file(d / "env.json", env.dump());
  RunResult r = run_quarkplan({"plan", testdata("hf/qwen3-8b").string(), "--env", "env.json", "--yes", "--json"}, d.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json out = Json::parse(r.out);
  EXPECT_EQ(out["plan"]["hardware"], "mi300x");
  EXPECT_EQ(out["plan"]["global_scheme"], "fp8");  // native on gfx942
  EXPECT_EQ(out["plan"]["alternatives"][0]["scheme"], "amdfp4");  // the planning guide's MI300X row, emulated there
}

// The Ryzen AI NPU from the amdxdna driver's PCI ids (Ryzen AI's APU-type
// table): Krackan is 0x17f0 rev 0x20, STX 0x17f0 rev 0x10, PHX/HPT 0x1502; an
// id the catalog does not list is a note, not a guess.
TEST(EnvProbe, RyzenAiNpuGenerationFromThePciId) {
  for (const auto& [dev, rev, want] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"0x17f0\n", "0x20\n", "krackan"}, {"0x17f0", "0x10", "xdna2"}, {"0x1502", "0x00", "xdna"}, {"0x17f0", "0x99", ""}}) {
    FakePath p;
    p.files["/sys/class/accel/accel0/device/uevent"] = "DRIVER=amdxdna\nPCI_ID=1022:17F0\n";
    p.files["/sys/class/accel/accel0/device/device"] = dev;
    p.files["/sys/class/accel/accel0/device/revision"] = rev;
    Json e = p.probe();
    EXPECT_EQ(e["hardware"]["npu"], "amdxdna");
    if (want.empty()) {
      EXPECT_FALSE(e["hardware"].contains("npu_generation")) << e.dump();
      EXPECT_NE(e["hardware"]["detection_notes"].dump().find("which no NPU generation in the catalog lists"), std::string::npos);
    } else {
      EXPECT_EQ(e["hardware"]["npu_generation"], want) << dev << " " << rev;
    }
  }
}
