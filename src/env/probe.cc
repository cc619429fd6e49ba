#include "env/probe.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace quarkplan {

namespace {

bool on_path(const std::string& program, const std::string& path_env) {
  std::stringstream ss(path_env);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string p = dir + "/" + program;
    if (::access(p.c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string first_match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  std::regex re(pattern);
  return std::regex_search(text, m, re) && m.size() > 1 ? m[1].str() : "";
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  size_t i = s.find_first_not_of(' ');
  return i == std::string::npos ? "" : s.substr(i);
}

}  // namespace

ProbeSystem real_system() {
  ProbeSystem s;
  s.getenv = [](const std::string& n) {
    const char* v = std::getenv(n.c_str());
    return std::string(v ? v : "");
  };
  s.exists = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0;
  };
  s.read = [](const std::string& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str().substr(0, 1 << 20);
  };
  s.run = [getenv = s.getenv](const std::string& program, const std::string& args, std::string& out) {
    if (!on_path(program, getenv("PATH"))) return false;
    std::string cmd = (on_path("timeout", getenv("PATH")) ? "timeout 10 " : "") + program + " " + args + " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return false;
    std::array<char, 4096> buf;
    out.clear();
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0 && out.size() < (4u << 20)) out.append(buf.data(), n);
    int rc = ::pclose(p);
    return rc == 0;
  };
  return s;
}

Json probe_environment(const ProbeSystem& sys, const Json& hw_catalog, const Json& npu_generations) {
  Json env, hw;
  Json notes = Json::array();
  // OS and container.
  struct utsname u {};
  std::string os = ::uname(&u) == 0 ? std::string(u.sysname) : "unknown";
  for (auto& c : os) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  env["os"] = os;
  std::string py, out;
  if (sys.run("python3", "--version", out)) py = first_match(out, "Python (\\d+\\.\\d+)");
  env["python"] = py.empty() ? "unknown" : py;
  if (!py.empty()) {
    int minor = std::atoi(py.c_str() + py.find('.') + 1);
    if (py.rfind("3.", 0) != 0 || minor < 11 || minor > 13)
      notes.push_back("Python " + py + " is outside 3.11-3.13: Quark will not work with it; use a 3.11-3.13 environment.");
  } else {
    notes.push_back("python3 not found on PATH: the Quark environment is not known yet.");
  }
  std::string runtime;
  if (sys.exists("/.dockerenv")) runtime = "docker";
  else if (sys.exists("/run/.containerenv")) runtime = "podman";
  else {
    std::string cg = sys.read("/proc/1/cgroup");
    if (cg.find("kubepods") != std::string::npos) runtime = "kubernetes";
    else if (cg.find("docker") != std::string::npos) runtime = "docker";
    else if (cg.find("containerd") != std::string::npos || cg.find("lxc") != std::string::npos) runtime = "containerd";
    else if (!sys.getenv("container").empty()) runtime = sys.getenv("container");
  }
  env["containerized"] = !runtime.empty();
  env["container_runtime"] = runtime.empty() ? Json(nullptr) : Json(runtime);

  // NVIDIA.
  int nv_count = -1;
  std::string nv_model, nv_cap, cuda;
  double nv_mem = 0;
  if (sys.run("nvidia-smi", "--query-gpu=name,memory.total,compute_cap --format=csv,noheader,nounits", out)) {
    nv_count = 0;
    std::stringstream ss(out);
    std::string line;
    while (std::getline(ss, line)) {
      if (trim(line).empty()) continue;
      if (line.find("No devices") != std::string::npos) continue;
      ++nv_count;
      std::stringstream ls(line);
      std::string name, mem, cap;
      std::getline(ls, name, ',');
      std::getline(ls, mem, ',');
      std::getline(ls, cap, ',');
      if (nv_model.empty()) {
        nv_model = trim(name);
        nv_mem = std::atof(trim(mem).c_str()) / 1024.0;
        nv_cap = trim(cap);
      }
    }
    std::string banner;
    if (sys.run("nvidia-smi", "", banner)) cuda = first_match(banner, "CUDA Version: *([0-9.]+)");
  }
  // AMD ROCm.
  int amd_count = -1;
  std::string amd_model, gfx, rocm;
  double amd_mem = 0;
  std::string info;
  if (sys.run("rocminfo", "", info)) {
    amd_count = 0;
    std::regex agent("Name:\\s+(gfx[0-9a-f]+)[\\s\\S]*?Marketing Name:\\s+([^\\n]+)");
    for (auto it = std::sregex_iterator(info.begin(), info.end(), agent); it != std::sregex_iterator(); ++it) {
      ++amd_count;
      if (gfx.empty()) {
        gfx = (*it)[1].str();
        amd_model = trim((*it)[2].str());
      }
    }
  }
  if (sys.run("amd-smi", "static --asic --vram --json", out) || sys.run("rocm-smi", "--showproductname --showmeminfo vram --json", out)) {
    if (amd_count <= 0) {
      std::string n = first_match(out, "\"(?:market_name|Card Series|Card series)\"\\s*:\\s*\"([^\"]+)\"");
      if (!n.empty()) {
        amd_model = n;
        amd_count = std::max(amd_count, 1);
      }
    }
    std::string vram = first_match(out, "\"(?:VRAM Total Memory \\(B\\))\"\\s*:\\s*\"?([0-9]+)");
    if (!vram.empty()) amd_mem = std::atof(vram.c_str()) / 1073741824.0;
    std::string vram_mb = first_match(out, "\"size\"\\s*:\\s*\\{\\s*\"value\"\\s*:\\s*([0-9]+)");
    if (amd_mem == 0 && !vram_mb.empty()) amd_mem = std::atof(vram_mb.c_str()) / 1024.0;
  }
  std::string ver = trim(sys.read("/opt/rocm/.info/version"));
  if (!ver.empty()) rocm = first_match(ver, "^([0-9]+\\.[0-9]+)");
  // Ryzen AI NPU: the amdxdna driver's accel device.
  std::string npu_driver = sys.read("/sys/class/accel/accel0/device/uevent");
  bool npu = npu_driver.find("amdxdna") != std::string::npos;

  bool has_nv = nv_count > 0, has_amd = amd_count > 0;
  std::string accelerator = "unknown";
  if (has_nv && has_amd) {
    notes.push_back("Both NVIDIA (" + nv_model + ") and AMD (" + amd_model + ") GPUs were detected: accelerator left unknown; say which one Quark should use.");
  } else if (has_nv) {
    accelerator = "nvidia-cuda";
  } else if (has_amd) {
    accelerator = "amd-rocm";
  } else if (nv_count == 0 || amd_count == 0) {
    accelerator = "cpu";  // a vendor tool ran and proved zero GPUs
    notes.push_back("GPU tools ran and found no GPU: CPU only.");
  } else {
    notes.push_back("No GPU tool (nvidia-smi, rocminfo, amd-smi, rocm-smi) answered: accelerator unknown, not assumed CPU.");
  }
  hw["accelerator"] = accelerator;
  hw["cuda_version"] = has_nv && !cuda.empty() ? Json(cuda) : Json(nullptr);
  hw["rocm_version"] = has_amd ? Json(rocm.empty() ? "unknown" : rocm) : Json(nullptr);
  hw["gpu_count"] = accelerator == "nvidia-cuda" ? nv_count : accelerator == "amd-rocm" ? amd_count : 0;
  hw["gpu_model"] = accelerator == "nvidia-cuda" ? Json(nv_model) : accelerator == "amd-rocm" ? Json(amd_model) : Json(nullptr);
  hw["gpu_arch"] = accelerator == "nvidia-cuda" ? (nv_cap.empty() ? Json(nullptr) : Json("sm" + std::string(1, nv_cap[0]) + (nv_cap.size() > 2 ? nv_cap.substr(2) : "")))
                   : accelerator == "amd-rocm" ? (gfx.empty() ? Json(nullptr) : Json(gfx))
                                               : Json(nullptr);
  double mem = accelerator == "nvidia-cuda" ? nv_mem : amd_mem;
  if (mem > 0) hw["memory_gb"] = std::round(mem * 10) / 10;
  // The catalog name of the accelerator, for --hardware.
  std::string model_text = hw["gpu_model"].is_string() ? hw["gpu_model"].get<std::string>() : "";
  std::string arch_text = hw["gpu_arch"].is_string() ? hw["gpu_arch"].get<std::string>() : "";
  for (const auto& p : hw_catalog["gpu_name_patterns"]) {
    std::string pat = p["pattern"];
    if ((!model_text.empty() && model_text.find(pat) != std::string::npos) || (!arch_text.empty() && arch_text == pat)) {
      hw["quarkplan_hardware"] = p["name"];
      break;
    }
  }
  hw["npu"] = npu ? Json("amdxdna") : Json(nullptr);
  // Which Ryzen AI NPU: the PCI device and revision the driver binds
  // (Ryzen AI's APU-type table, in the catalog's npu_generations).
  if (npu && npu_generations.is_object()) {
    auto hex = [](std::string v) {
      v = trim(v);
      for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (v.rfind("0x", 0) != 0) v = "0x" + v;
      while (v.size() > 4 && v[2] == '0') v.erase(2, 1);  // 0x0010 -> 0x10
      return v;
    };
    std::string dev = hex(sys.read("/sys/class/accel/accel0/device/device")), rev = hex(sys.read("/sys/class/accel/accel0/device/revision"));
    for (const auto& g : npu_generations.value("generations", Json::array()))
      for (const auto& pci : g.value("pci", Json::array()))
        if (hex(pci.value("device", "")) == dev)
          for (const auto& r : pci.value("revisions", Json::array()))
            if (hex(r.get<std::string>()) == rev) hw["npu_generation"] = g["name"];
    if (!hw.contains("npu_generation"))
      notes.push_back("A Ryzen AI NPU (amdxdna) was found, PCI device " + dev + " revision " + rev + ", which no NPU generation in the catalog lists: pass --hardware.");
  }
  hw["detection_notes"] = notes;
  return {{"environment", env}, {"hardware", hw}};
}

}  // namespace quarkplan
