// The digest that ties a plan to its analysis (analysis_sha256): key order
// must not matter, and it must stay the digest of the sorted compact dump that
// plans already on disk carry.
#include "common/sha256.h"

#include <gtest/gtest.h>

#include "common/files.h"
#include "support/test_support.h"

namespace quarkplan {
namespace {

std::string sorted_dump_digest(const Json& v, const char* skip = nullptr) {
  nlohmann::json plain = nlohmann::json::parse(v.dump(-1, ' ', false, Json::error_handler_t::replace));  // std::map: sorted keys
  if (skip) plain.erase(skip);
  return sha256_hex(plain.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

TEST(JsonDigest, IsTheSortedCompactDumpWhateverTheKeyOrder) {
  Json a = Json::parse(R"({"z":1,"a":{"y":[1,2.5,-3,true,null],"b":"\u00e9\n\"q\""},"m":[{"k":2,"c":1}],"analysis_sha256":"x"})");
  Json b = Json::parse(R"({"analysis_sha256":"y","m":[{"c":1,"k":2}],"a":{"b":"\u00e9\n\"q\"","y":[1,2.5,-3,true,null]},"z":1})");
  EXPECT_EQ(json_sha256(a, "analysis_sha256"), json_sha256(b, "analysis_sha256"));
  EXPECT_NE(json_sha256(a), json_sha256(b));  // the skipped key counts when not skipped
  EXPECT_EQ(json_sha256(a), sorted_dump_digest(a));
  EXPECT_EQ(json_sha256(a, "analysis_sha256"), sorted_dump_digest(a, "analysis_sha256"));
  // Invalid UTF-8 (a hand-edited file) is replaced the same way.
  Json bad = Json::object();
  bad["k\xff"] = std::string("v\xfe");
  EXPECT_EQ(json_sha256(bad), sorted_dump_digest(bad));
  // Real artifacts: an analysis and a plan quarkplan wrote (tests/data/artifacts).
  for (const char* f : {"model_analysis.json", "quant_plan.json"}) {
    Json doc = Json::parse(read_small_file(qp_test::testdata(std::string("artifacts/") + f).string(), 64 << 20));
    EXPECT_EQ(json_sha256(doc, "analysis_sha256"), sorted_dump_digest(doc, "analysis_sha256")) << f;
    EXPECT_EQ(json_sha256(doc), sorted_dump_digest(doc)) << f;
  }
}

TEST(ArtifactKind, NamesEachArtifactFromItsTopLevelKeysOnly) {
  qp_test::TempDir d;
  auto kind = [&](const std::string& text) {
    write_file_atomic((d / "f.json").string(), text);
    return artifact_kind((d / "f.json").string());
  };
  EXPECT_EQ(kind(R"({"requires_confirmation":true,"backend":"torch"})"), "plan");
  EXPECT_EQ(kind(R"({"model":{},"quantization_targets":{"backend":1,"requires_confirmation":2}})"), "analysis");
  EXPECT_EQ(kind(R"({"x":{"requires_confirmation":true,"backend":"torch"}})"), "other");  // nested keys do not count
  EXPECT_EQ(kind(R"({"constraints":[],"workflow":{}})"), "session");
  EXPECT_EQ(kind(R"({"available_providers":[]})"), "install result");
  EXPECT_EQ(kind(R"([{"requires_confirmation":true,"backend":"torch"}])"), "other");
  EXPECT_EQ(kind(R"({"requires_confirmation":true,"backend":)"), "other");  // truncated: not a known artifact
  EXPECT_EQ(kind("not json"), "other");
  // The values are skipped, not trusted: the whole text must be JSON.
  EXPECT_EQ(kind(R"({"requires_confirmation":tru,"backend":"torch"})"), "other");
  EXPECT_EQ(kind(R"({"requires_confirmation":true,"backend":"torch"} trailing)"), "other");
  EXPECT_EQ(kind(R"({"requires_confirmation":true "backend":"torch"})"), "other");
  EXPECT_EQ(kind(R"({"model": +, "quantization_targets": --})"), "other");   // not JSON numbers
  EXPECT_EQ(kind(R"({"model": 01, "quantization_targets": 1.})"), "other");
  EXPECT_EQ(kind(R"({"model": -0.5e+3, "quantization_targets": [0, 1E2, -7]})"), "analysis");
  EXPECT_EQ(kind("{\"model\": \"\xff\xfe\", \"quantization_targets\": 1}"), "other");  // not UTF-8
  EXPECT_EQ(kind("{\"model\": \"\xed\xa0\x80\", \"quantization_targets\": 1}"), "other");  // a surrogate
  EXPECT_EQ(kind("{\"model\": \"caf\xc3\xa9 \xf0\x9f\x99\x82\", \"quantization_targets\": 1}"), "analysis");
  EXPECT_EQ(kind(R"({"model": )" + std::string(70, '[') + std::string(70, ']') + R"(, "quantization_targets": {}})"), "analysis");
  EXPECT_EQ(kind(" \n {\"model\" : { \"a\" : [1, 2.5e3, null, \"\\u00e9\\\"\"] } ,\n \"quantization_targets\" : {} } \n"), "analysis");
  EXPECT_EQ(kind("<!DOCTYPE html>\n<html><head><meta name=\"generator\" content=\"quarkplan 0.1.0\">"), "report");
  EXPECT_EQ(kind("<!DOCTYPE html>\n<html><head><title>someone else's page</title>"), "other");
  EXPECT_EQ(kind(""), "");  // nothing to lose
  EXPECT_EQ(artifact_kind((d / "missing.json").string()), "");
}

}  // namespace
}  // namespace quarkplan
