#include "support/test_support.h"

#include <map>

#include "intake/intake.h"
#include "plan/fix_shapes.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace qp_test {

TempDir::TempDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() / ("quarkplan_test_" + std::to_string(rd()) + std::to_string(::getpid()));
  fs::create_directories(path_);
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}


RunResult run_quarkplan(const std::vector<std::string>& args, const fs::path& cwd, const std::string& input) {
  TempDir io;
  fs::path out = io / "out", err = io / "err", in = io / "in";
  write_file(in, input);
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) _exit(127);
    int fin = ::open(in.c_str(), O_RDONLY);
    int fout = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ferr = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fin, 0);
    ::dup2(fout, 1);
    ::dup2(ferr, 2);
    std::vector<char*> argv;
    std::string bin = QUARKPLAN_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::setenv("NO_COLOR", "1", 1);
    ::execv(bin.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

void write_file(const fs::path& p, const std::string& content) {
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path model_cache() {
  if (const char* c = std::getenv("QUARKPLAN_MODEL_CACHE")) return c;
  if (const char* h = std::getenv("HOME")) return fs::path(h) / ".cache" / "quarkplan" / "models";
  return {};
}

fs::path real_model(const std::string& relative) {
  fs::path p = model_cache() / relative;
  if (!fs::exists(p))
    throw std::runtime_error("real model " + p.string() + " is missing: run scripts/fetch_models.sh first");
  return p;
}

std::string write_calibration_set(const fs::path& folder, const fs::path& model, int samples, const std::string& fix_shapes) {
  std::map<std::string, std::vector<int64_t>> fixed;
  if (!fix_shapes.empty()) try {
      for (auto& f : quarkplan::parse_fix_shapes(fix_shapes)) fixed[f.name] = f.dims;
    } catch (const std::invalid_argument&) {
      // a FixShapes the test expects the plan to refuse: the model's own shapes then
    }
  quarkplan::Json analysis;
  if (model.extension() == ".json") analysis = quarkplan::Json::parse(read_file(model));
  else {
    quarkplan::IntakeRequest req;
    req.model = model.string();
    analysis = quarkplan::run_intake(req);
  }
  const auto& inputs = analysis["model"]["onnx_specific"]["inputs"];
  static const std::map<std::string, std::string> descr = {{"float32", "<f4"}, {"float16", "<f2"}, {"float64", "<f8"}, {"int64", "<i8"},
                                                           {"int32", "<i4"}, {"int8", "|i1"}, {"uint8", "|u1"}, {"bool", "|b1"}};
  for (const auto& in : inputs) {
    std::string d = descr.count(in.value("dtype", "")) ? descr.at(in.value("dtype", "")) : "<f4";
    std::string dims;
    uint64_t n = 1;
    quarkplan::Json shape = in["shape"];
    if (fixed.count(in["name"].get<std::string>())) shape = fixed[in["name"].get<std::string>()];
    size_t rank = shape.is_array() ? shape.size() : 1;
    for (size_t i = 0; i < rank; ++i) {
      int64_t v = shape.is_array() && shape[i].is_number_integer() && shape[i].get<int64_t>() > 0 ? shape[i].get<int64_t>() : 1;
      dims += (i ? ", " : "") + std::to_string(v);
      n *= static_cast<uint64_t>(v);
    }
    if (rank == 1) dims += ",";
    std::string dict = "{'descr': '" + d + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    dict += std::string((64 - (10 + dict.size() + 1) % 64) % 64, ' ') + "\n";
    std::string head = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size() & 0xff) + static_cast<char>(dict.size() >> 8) + dict;
    fs::path dir = inputs.size() > 1 ? folder / in["name"].get<std::string>() : folder;
    fs::create_directories(dir);
    for (int k = 0; k < samples; ++k) {
      fs::path f = dir / ("sample_" + std::to_string(k) + ".npy");
      write_file(f, head);
      fs::resize_file(f, head.size() + n * static_cast<uint64_t>(std::stoi(d.substr(2))));  // sparse: zeros, no disk
    }
  }
  if (inputs.empty()) fs::create_directories(folder);
  return folder.string();
}

fs::path source_dir() { return QUARKPLAN_SOURCE_DIR; }
fs::path testdata(const std::string& relative) { return source_dir() / "tests" / "data" / relative; }

}  // namespace qp_test
