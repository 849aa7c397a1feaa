//===- Listing.cpp - JSON listing of the imported ONNX graph --------------===//
//
// spconv compiles the convs; everything else (pooling, adds, the classifier, a BN that could
// not be folded) is left to the framework that runs the model. The listing is the contract
// between the two: every node in topological order, marked as compiled ("spconv"), absorbed
// into a compiled conv ("fused"), only feeding compiled weights ("folded") or left to the
// host ("host"). docs/onnx-import.md describes the format. A host runs the entries in the
// listed order, so a conv fused with a residual Add stands where the Add stood: its
// residual may be computed after the Conv (ResNet's downsample path), never after the Add.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace spconv::onnx_import;

static llvm::json::Value shapeJson(const ValueInfo *info) {
  if (!info || !info->shape)
    return nullptr;
  llvm::json::Array dims;
  for (int64_t d : *info->shape)
    dims.push_back(d > 0 ? llvm::json::Value(d) : llvm::json::Value(nullptr));
  return std::move(dims);
}

static llvm::json::Array shapeArray(ArrayRef<int64_t> shape) {
  llvm::json::Array dims;
  for (int64_t d : shape)
    dims.push_back(d);
  return dims;
}

static llvm::json::Object valueJson(const OnnxGraph &graph, StringRef name) {
  const ValueInfo *info = graph.lookup(name);
  return llvm::json::Object{
      {"name", name},
      {"elem_type", elemTypeName(info ? info->elemType : 0)},
      {"shape", shapeJson(info)}};
}

std::string spconv::onnx_import::writeListing(const OnnxGraph &graph,
                                              ArrayRef<ImportedConv> convs) {
  enum class Role { Host, Spconv, Fused, Folded };
  std::vector<Role> role(graph.nodes.size(), Role::Host);
  std::vector<int> owner(graph.nodes.size(), -1);
  for (auto [i, conv] : llvm::enumerate(convs)) {
    role[conv.convPos] = Role::Spconv;
    owner[conv.convPos] = i;
    for (std::optional<unsigned> pos : {conv.bnPos, conv.addPos, conv.activationPos})
      if (pos) {
        role[*pos] = Role::Fused;
        owner[*pos] = i;
      }
  }
  // A Constant whose every reader is compiled, and that is not a compiled conv's runtime
  // input, only ever became weights, bias or a fused bound.
  for (unsigned pos = 0; pos < graph.nodes.size(); ++pos) {
    const onnx::NodeProto &node = *graph.nodes[pos];
    if (node.op_type() != "Constant" || node.output_size() != 1 ||
        graph.graphOutputs.contains(node.output(0)))
      continue;
    auto it = graph.consumers.find(node.output(0));
    if (it == graph.consumers.end())
      continue;
    bool folded = llvm::all_of(it->second, [&](unsigned reader) {
      if (role[reader] == Role::Host || role[reader] == Role::Folded)
        return false;
      return !(role[reader] == Role::Spconv &&
               graph.nodes[reader]->input(0) == node.output(0));
    });
    if (folded)
      role[pos] = Role::Folded;
  }

  llvm::json::Array inputs, outputs, nodes;
  for (const onnx::ValueInfoProto *input : graph.inputs)
    inputs.push_back(valueJson(graph, input->name()));
  for (const onnx::ValueInfoProto &output : graph.model.graph().output())
    outputs.push_back(valueJson(graph, output.name()));
  // Topological order, each residual conv moved to just before its Add.
  std::vector<unsigned> order;
  for (unsigned pos = 0; pos < graph.nodes.size(); ++pos) {
    if (role[pos] == Role::Spconv && convs[owner[pos]].addPos)
      continue;
    if (role[pos] == Role::Fused && convs[owner[pos]].addPos == pos)
      order.push_back(convs[owner[pos]].convPos);
    order.push_back(pos);
  }
  for (unsigned pos : order) {
    const onnx::NodeProto &node = *graph.nodes[pos];
    llvm::json::Array ins, outs;
    for (const std::string &in : node.input())
      ins.push_back(in);
    for (const std::string &out : node.output())
      outs.push_back(out);
    static const char *const roleNames[] = {"host", "spconv", "fused", "folded"};
    llvm::json::Object entry{{"index", pos},
                             {"file_index", graph.fileIndex[pos]},
                             {"op_type", node.op_type()},
                             {"domain", node.domain()},
                             {"name", node.name()},
                             {"inputs", std::move(ins)},
                             {"outputs", std::move(outs)},
                             {"run", roleNames[static_cast<int>(role[pos])]}};
    if (role[pos] == Role::Spconv) {
      const ImportedConv &conv = convs[owner[pos]];
      llvm::json::Array fused;
      for (std::optional<unsigned> p : {conv.bnPos, conv.addPos, conv.activationPos})
        if (p)
          fused.push_back(graph.nodes[*p]->name());
      entry["func"] = conv.funcName;
      entry["kernel"] = owner[pos];
      entry["fused"] = std::move(fused);
      entry["input"] = node.input(0);
      if (conv.addPos)
        entry["residual"] = conv.residualName;
      entry["result"] = conv.resultName;
      entry["input_shape"] = shapeArray(conv.geometry.input);
      entry["result_shape"] = shapeArray(conv.geometry.output);
    } else if (role[pos] == Role::Fused) {
      entry["fused_into"] = convs[owner[pos]].funcName;
    }
    nodes.push_back(std::move(entry));
  }
  llvm::json::Object listing{{"format", "spconv-onnx-listing"},
                             {"version", 2},
                             {"model", graph.path},
                             {"opset", graph.opset},
                             {"inputs", std::move(inputs)},
                             {"outputs", std::move(outputs)},
                             {"nodes", std::move(nodes)}};
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(listing))).str() + "\n";
}
