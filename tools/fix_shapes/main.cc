// quarkplan-fix-shapes IN.onnx OUT.onnx 'name:[d0,d1,...];name2:[...]'
// Sets the named graph inputs' and outputs' dimensions, as Quark's
// quark.onnx.tools.fix_shapes (fix_input_and_output_shapes) does, and writes
// the model to OUT. The parser is the planner's own (plan/fix_shapes.h), so
// the tool takes exactly what a plan's FixShapes takes. Models with external
// data are refused (the demo's are self-contained).
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "plan/fix_shapes.h"

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "quarkplan-fix-shapes: error: %s\n", message.c_str());
  return 2;
}

void set_dims(onnx::ValueInfoProto& v, const std::vector<int64_t>& dims) {
  onnx::TensorShapeProto* shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return fail("usage: quarkplan-fix-shapes IN.onnx OUT.onnx 'name:[d0,d1,...];name2:[...]'");
  std::vector<quarkplan::FixedShape> fixed;
  try {
    fixed = quarkplan::parse_fix_shapes(argv[3]);
  } catch (const std::invalid_argument& e) {
    return fail(std::string(argv[3]) + ": " + e.what());
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) return fail(std::string(argv[1]) + ": cannot be read");
  std::stringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes.str())) return fail(std::string(argv[1]) + ": not an ONNX model");
  for (const auto& t : model.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return fail(std::string(argv[1]) + ": has external data, which this tool does not copy");
  std::map<std::string, bool> done;
  for (const auto& f : fixed) done[f.name] = false;
  auto apply = [&](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list) {
    for (auto& v : *list)
      for (const auto& f : fixed)
        if (v.name() == f.name) {
          set_dims(v, f.dims);
          done[f.name] = true;
        }
  };
  apply(model.mutable_graph()->mutable_input());
  apply(model.mutable_graph()->mutable_output());
  for (const auto& [name, ok] : done)
    if (!ok) return fail(std::string(argv[1]) + ": no graph input or output named '" + name + "'");
  // Inner value_info shapes may now disagree; ONNX Runtime re-infers them.
  model.mutable_graph()->clear_value_info();
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out)) return fail(std::string(argv[2]) + ": cannot be written");
  return 0;
}
