//===- ModelReader.cpp - parse, validate and index an ONNX model ----------===//
//
// Everything here treats the file as hostile: the protobuf is parsed from a bounded
// CodedInputStream (a parse failure is an error, never an abort), every size read from the
// file is checked before anything is allocated from it, and every reference between nodes,
// initializers and values is resolved before the rest of the importer sees the graph.
//
//===----------------------------------------------------------------------===//
#include "OnnxGraph.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <queue>

using namespace mlir;
using namespace spconv::onnx_import;

//===----------------------------------------------------------------------===//
// OnnxGraph
//===----------------------------------------------------------------------===//

Location OnnxGraph::nodeLoc(unsigned pos) const { return fileNodeLoc(fileIndex[pos]); }

Location OnnxGraph::fileNodeLoc(unsigned index) const {
  const onnx::NodeProto &node = model.graph().node(index);
  std::string name = node.name();
  if (name.empty())
    name = "<unnamed " + node.op_type() + " #" + std::to_string(index) + ">";
  return NameLoc::get(StringAttr::get(context, name),
                      FileLineColLoc::get(context, path, index + 1, 1));
}

Location OnnxGraph::fileLoc() const { return FileLineColLoc::get(context, path, 0, 0); }

unsigned OnnxGraph::useCount(StringRef name) const {
  unsigned count = graphOutputs.contains(name) ? 1 : 0;
  auto it = consumers.find(name);
  if (it != consumers.end())
    count += it->second.size();
  return count;
}

const ValueInfo *OnnxGraph::lookup(StringRef name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

const char *spconv::onnx_import::elemTypeName(int32_t elemType) {
  switch (elemType) {
  case onnx::TensorProto::FLOAT: return "float32";
  case onnx::TensorProto::UINT8: return "uint8";
  case onnx::TensorProto::INT8: return "int8";
  case onnx::TensorProto::UINT16: return "uint16";
  case onnx::TensorProto::INT16: return "int16";
  case onnx::TensorProto::INT32: return "int32";
  case onnx::TensorProto::INT64: return "int64";
  case onnx::TensorProto::STRING: return "string";
  case onnx::TensorProto::BOOL: return "bool";
  case onnx::TensorProto::FLOAT16: return "float16";
  case onnx::TensorProto::DOUBLE: return "float64";
  case onnx::TensorProto::UINT32: return "uint32";
  case onnx::TensorProto::UINT64: return "uint64";
  case onnx::TensorProto::BFLOAT16: return "bfloat16";
  case 0: return "undefined";
  default: return "unknown";
  }
}

const onnx::AttributeProto *spconv::onnx_import::findAttr(const onnx::NodeProto &node,
                                                          StringRef name) {
  for (const onnx::AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
spconv::onnx_import::constantDims(const onnx::TensorProto &tensor, Location loc,
                                  StringRef what) {
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return emitError(loc) << what << " '" << tensor.name() << "' has a negative dimension "
                            << d;
    if (llvm::MulOverflow(count, d, count))
      return emitError(loc) << what << " '" << tensor.name()
                            << "' has dimensions whose product overflows";
    dims.push_back(d);
  }
  // Every float must also be addressable in bytes.
  if (count > INT64_MAX / 4)
    return emitError(loc) << what << " '" << tensor.name() << "' is too large";
  return dims;
}

/// Reads the bytes of an external-data tensor; the file must lie under the model's
/// directory (as the ONNX checker requires), and must hold the requested range.
static FailureOr<std::unique_ptr<llvm::MemoryBuffer>>
readExternalData(const OnnxGraph &graph, const onnx::TensorProto &tensor, uint64_t expected,
                 Location loc, StringRef what) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    auto asNumber = [&](uint64_t &out) {
      if (StringRef(entry.value()).getAsInteger(10, out))
        return failure();
      return success();
    };
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (failed(asNumber(offset)))
        return emitError(loc) << what << " '" << tensor.name()
                              << "': bad external data offset '" << entry.value() << "'";
    } else if (entry.key() == "length") {
      uint64_t value = 0;
      if (failed(asNumber(value)))
        return emitError(loc) << what << " '" << tensor.name()
                              << "': bad external data length '" << entry.value() << "'";
      length = value;
    }
  }
  if (location.empty())
    return emitError(loc) << what << " '" << tensor.name()
                          << "' has external data without a location";
  if (llvm::sys::path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(llvm::sys::path::begin(location),
                                    llvm::sys::path::end(location)),
                   [](StringRef part) { return part == ".."; }))
    return emitError(loc) << what << " '" << tensor.name() << "': external data location '"
                          << location << "' must be a relative path inside the model's directory";
  SmallString<256> file(graph.directory);
  llvm::sys::path::append(file, location);
  uint64_t fileSize = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(file, fileSize))
    return emitError(loc) << what << " '" << tensor.name() << "': cannot read external data '"
                          << file << "': " << ec.message();
  uint64_t size = length ? *length : (offset <= fileSize ? fileSize - offset : 0);
  if (offset > fileSize || size > fileSize - offset)
    return emitError(loc) << what << " '" << tensor.name() << "': external data '" << file
                          << "' is too short (" << fileSize << " bytes, needs "
                          << offset << " + " << size << ")";
  if (size != expected)
    return emitError(loc) << what << " '" << tensor.name() << "': external data holds " << size
                          << " bytes, its dims need " << expected;
  auto buffer = llvm::MemoryBuffer::getFileSlice(file, size, offset);
  if (!buffer)
    return emitError(loc) << what << " '" << tensor.name() << "': cannot read external data '"
                          << file << "': " << buffer.getError().message();
  return std::move(*buffer);
}

bool spconv::onnx_import::isFloatElemType(int32_t elemType) {
  return elemType == onnx::TensorProto::FLOAT || elemType == onnx::TensorProto::FLOAT16 ||
         elemType == onnx::TensorProto::BFLOAT16;
}

float spconv::onnx_import::halfBitsToFloat(uint16_t bits, int32_t elemType) {
  // bfloat16 is the top half of a float32; float16 widens exactly through APFloat.
  if (elemType == onnx::TensorProto::BFLOAT16)
    return llvm::bit_cast<float>(uint32_t(bits) << 16);
  APFloat value(APFloat::IEEEhalf(), APInt(16, bits));
  bool lost;
  value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  return value.convertToFloat();
}

/// Little-endian elements of `width` bytes (4: float32; 2: float16/bfloat16 bits).
static std::vector<float> fromLittleEndian(StringRef bytes, size_t width, int32_t elemType) {
  std::vector<float> out(bytes.size() / width);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = width == 4 ? llvm::bit_cast<float>(
                              llvm::support::endian::read32le(bytes.data() + 4 * i))
                        : halfBitsToFloat(llvm::support::endian::read16le(bytes.data() + 2 * i),
                                          elemType);
  return out;
}

FailureOr<std::vector<float>>
spconv::onnx_import::readFloatConstant(const OnnxGraph &graph,
                                       const onnx::TensorProto &tensor, Location loc,
                                       StringRef what) {
  int32_t elemType = tensor.data_type();
  if (!isFloatElemType(elemType))
    return emitError(loc) << what << " '" << tensor.name() << "' has element type "
                          << elemTypeName(elemType)
                          << "; only float32, float16 and bfloat16 are supported";
  if (tensor.has_segment())
    return emitError(loc) << what << " '" << tensor.name() << "' is segmented (unsupported)";
  FailureOr<SmallVector<int64_t>> dims = constantDims(tensor, loc, what);
  if (failed(dims))
    return failure();
  uint64_t count = 1;
  for (int64_t d : *dims)
    count *= d; // checked by constantDims
  size_t width = elemType == onnx::TensorProto::FLOAT ? 4 : 2;
  uint64_t bytes = count * width;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto buffer = readExternalData(graph, tensor, bytes, loc, what);
    if (failed(buffer))
      return failure();
    return fromLittleEndian((*buffer)->getBuffer(), width, elemType);
  }
  if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != bytes)
      return emitError(loc) << what << " '" << tensor.name() << "' holds "
                            << tensor.raw_data().size() << " bytes of raw data, its dims need "
                            << bytes << " (" << count << " " << elemTypeName(elemType)
                            << " elements)";
    return fromLittleEndian(tensor.raw_data(), width, elemType);
  }
  if (width == 4) {
    if (static_cast<uint64_t>(tensor.float_data_size()) != count)
      return emitError(loc) << what << " '" << tensor.name() << "' holds "
                            << tensor.float_data_size() << " floats, its dims need " << count;
    return std::vector<float>(tensor.float_data().begin(), tensor.float_data().end());
  }
  // float16 and bfloat16 without raw data: one element's bits per int32_data entry.
  if (static_cast<uint64_t>(tensor.int32_data_size()) != count)
    return emitError(loc) << what << " '" << tensor.name() << "' holds "
                          << tensor.int32_data_size() << " int32_data entries, its dims need "
                          << count << " (one " << elemTypeName(elemType) << " each)";
  std::vector<float> out(count);
  for (uint64_t i = 0; i < count; ++i) {
    int32_t bits = tensor.int32_data(static_cast<int>(i));
    if (bits < 0 || bits > 0xFFFF)
      return emitError(loc) << what << " '" << tensor.name() << "': int32_data entry " << i
                            << " (" << bits << ") is not the 16 bits of a "
                            << elemTypeName(elemType);
    out[i] = halfBitsToFloat(static_cast<uint16_t>(bits), elemType);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Reading the model
//===----------------------------------------------------------------------===//

static ValueInfo valueInfoOf(const onnx::ValueInfoProto &info) {
  ValueInfo result;
  if (!info.type().has_tensor_type())
    return result;
  const onnx::TypeProto_Tensor &tensor = info.type().tensor_type();
  result.elemType = tensor.elem_type();
  if (tensor.has_shape()) {
    SmallVector<int64_t> dims;
    for (const onnx::TensorShapeProto_Dimension &d : tensor.shape().dim())
      dims.push_back(d.has_dim_value() && d.dim_value() > 0 ? d.dim_value() : -1);
    result.shape = std::move(dims);
  }
  return result;
}

/// Applies --onnx-batch and --onnx-input-shape to the graph inputs before shape inference.
static LogicalResult applyShapeOptions(OnnxGraph &graph, const spconv::OnnxImportOptions &options) {
  onnx::GraphProto *g = graph.model.mutable_graph();
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &t : g->initializer())
    initializers.insert(t.name());
  auto setShape = [](onnx::ValueInfoProto &input, ArrayRef<int64_t> dims) {
    onnx::TensorShapeProto *shape =
        input.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : dims)
      shape->add_dim()->set_dim_value(d);
  };
  if (options.batch < 0)
    return emitError(graph.fileLoc()) << "--onnx-batch must be positive";
  if (options.batch > 0) {
    for (onnx::ValueInfoProto &input : *g->mutable_input()) {
      if (initializers.contains(input.name()) || !input.type().has_tensor_type() ||
          !input.type().tensor_type().has_shape() ||
          input.type().tensor_type().shape().dim_size() != 4)
        continue;
      onnx::TensorShapeProto_Dimension *dim =
          input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
      dim->clear_dim_param();
      dim->set_dim_value(options.batch);
    }
  }
  for (const auto &[name, dims] : options.inputShapes) {
    auto it = llvm::find_if(g->input(), [&, &name = name](const onnx::ValueInfoProto &input) {
      return input.name() == name && !initializers.contains(input.name());
    });
    if (it == g->input().end())
      return emitError(graph.fileLoc())
             << "--onnx-input-shape names '" << name << "', which is not a graph input";
    onnx::ValueInfoProto &input = (*g->mutable_input())[it - g->input().begin()];
    setShape(input, dims);
  }
  return success();
}

/// ONNX's shape inference divides by strides and trusts window attributes: a stride of 0
/// in any Conv or pooling node is a division by zero inside it. Such attributes are
/// refused before inference runs, at the node.
static LogicalResult checkWindowAttributes(const OnnxGraph &graph) {
  const onnx::GraphProto &g = graph.model.graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    for (const onnx::AttributeProto &attr : node.attribute()) {
      StringRef name = attr.name();
      bool positive = name == "strides" || name == "dilations" || name == "kernel_shape";
      bool nonNegative = name == "pads";
      if (attr.type() == onnx::AttributeProto::INTS && (positive || nonNegative)) {
        for (int64_t v : attr.ints())
          if (positive ? v <= 0 : v < 0)
            return emitError(graph.fileNodeLoc(i))
                   << node.op_type() << " '" << name << "' must be "
                   << (positive ? "positive" : "non-negative") << ", got " << v;
      }
      if (name == "group" && attr.type() == onnx::AttributeProto::INT && attr.i() <= 0)
        return emitError(graph.fileNodeLoc(i))
               << node.op_type() << " 'group' must be positive, got " << attr.i();
    }
  }
  return success();
}

/// Calls to the model-local functions (ModelProto.functions) made by `nodes` and, inside
/// their graph attributes (If/Loop/Scan bodies), by the nodes of those graphs.
static void collectCalls(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                         const llvm::StringMap<SmallVector<unsigned>> &functionIndex,
                         SmallVectorImpl<unsigned> &callees) {
  for (const onnx::NodeProto &node : nodes) {
    auto it = functionIndex.find(node.domain() + ":" + node.op_type());
    if (it != functionIndex.end())
      callees.append(it->second.begin(), it->second.end());
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        collectCalls(attr.g().node(), functionIndex, callees);
      for (const onnx::GraphProto &graph : attr.graphs())
        collectCalls(graph.node(), functionIndex, callees);
    }
  }
}

/// ONNX's shape inference infers a call to a model-local function by inferring its body,
/// recursively and without a depth limit: a function that calls itself (directly or through
/// others) overflows the stack, and a long chain of calls can too. Both are refused here.
static LogicalResult checkLocalFunctions(const OnnxGraph &graph) {
  const auto &functions = graph.model.functions();
  if (functions.empty())
    return success();
  // ONNX keys local functions by "domain:name"; a call may reach any of the functions
  // that share a key (which one ONNX picks is its business).
  llvm::StringMap<SmallVector<unsigned>> functionIndex;
  for (int i = 0; i < functions.size(); ++i)
    functionIndex[functions[i].domain() + ":" + functions[i].name()].push_back(i);
  std::vector<SmallVector<unsigned>> callees(functions.size());
  for (int i = 0; i < functions.size(); ++i)
    collectCalls(functions[i].node(), functionIndex, callees[i]);
  // Longest call chain starting at each function, by depth-first search; a function met
  // again while it is on the current path is a cycle.
  constexpr unsigned kMaxDepth = 16;
  enum class State { New, OnPath, Done };
  std::vector<State> state(functions.size(), State::New);
  std::vector<unsigned> depth(functions.size(), 1);
  for (int root = 0; root < functions.size(); ++root) {
    if (state[root] != State::New)
      continue;
    // (function, next callee to visit)
    SmallVector<std::pair<unsigned, unsigned>> stack{{unsigned(root), 0}};
    state[root] = State::OnPath;
    while (!stack.empty()) {
      auto &[f, next] = stack.back();
      if (next == callees[f].size()) {
        state[f] = State::Done;
        unsigned done = f;
        stack.pop_back();
        if (!stack.empty())
          depth[stack.back().first] = std::max(depth[stack.back().first], depth[done] + 1);
        continue;
      }
      unsigned callee = callees[f][next++];
      if (state[callee] == State::OnPath)
        return emitError(graph.fileLoc())
               << "model-local function '" << functions[callee].domain() << ":"
               << functions[callee].name()
               << "' calls itself (directly or through other functions)";
      if (state[callee] == State::Done) {
        depth[f] = std::max(depth[f], depth[callee] + 1);
        continue;
      }
      state[callee] = State::OnPath;
      stack.push_back({callee, 0});
    }
  }
  for (int i = 0; i < functions.size(); ++i)
    if (depth[i] > kMaxDepth)
      return emitError(graph.fileLoc())
             << "model-local function '" << functions[i].domain() << ":"
             << functions[i].name() << "' nests calls " << depth[i]
             << " functions deep; at most " << kMaxDepth << " are supported";
  return success();
}

/// Bytes per element of the fixed-size ONNX element types (0: none, or not fixed).
static size_t elemSize(int32_t elemType) {
  switch (elemType) {
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::BOOL: return 1;
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: return 2;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32: return 4;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::COMPLEX64: return 8;
  case onnx::TensorProto::COMPLEX128: return 16;
  default: return 0;
  }
}

/// ONNX 1.12's shape inference reads constant inputs (a Reshape's shape, a Tile's repeats,
/// ...) with ParseData, which sizes its vector as raw_data.size() / sizeof(T) and then
/// copies all of raw_data into it: raw data that is not a whole number of elements
/// overflows the heap inside libonnx. Every tensor in the model (initializers, sparse
/// initializers, tensor attributes, in every graph, subgraph and local function) must
/// therefore hold whole elements.
namespace {
struct RawDataChecker {
  const OnnxGraph &graph;

  LogicalResult tensor(const onnx::TensorProto &t, Location loc) {
    size_t size = elemSize(t.data_type());
    if (!t.has_raw_data() || size <= 1 || t.raw_data().size() % size == 0)
      return success();
    return emitError(loc) << "tensor '" << t.name() << "' holds " << t.raw_data().size()
                          << " bytes of raw data, not a whole number of "
                          << elemTypeName(t.data_type()) << " elements (" << size
                          << " bytes each)";
  }
  LogicalResult sparse(const onnx::SparseTensorProto &t, Location loc) {
    return success(succeeded(tensor(t.values(), loc)) && succeeded(tensor(t.indices(), loc)));
  }
  LogicalResult nodes(const google::protobuf::RepeatedPtrField<onnx::NodeProto> &list,
                      bool topLevel) {
    for (int i = 0; i < list.size(); ++i) {
      Location loc = topLevel ? graph.fileNodeLoc(i) : graph.fileLoc();
      for (const onnx::AttributeProto &attr : list[i].attribute()) {
        if (attr.has_t() && failed(tensor(attr.t(), loc)))
          return failure();
        for (const onnx::TensorProto &t : attr.tensors())
          if (failed(tensor(t, loc)))
            return failure();
        if (attr.has_sparse_tensor() && failed(sparse(attr.sparse_tensor(), loc)))
          return failure();
        for (const onnx::SparseTensorProto &t : attr.sparse_tensors())
          if (failed(sparse(t, loc)))
            return failure();
        if (attr.has_g() && failed(subgraph(attr.g(), /*topLevel=*/false)))
          return failure();
        for (const onnx::GraphProto &g : attr.graphs())
          if (failed(subgraph(g, /*topLevel=*/false)))
            return failure();
      }
    }
    return success();
  }
  LogicalResult subgraph(const onnx::GraphProto &g, bool topLevel) {
    for (const onnx::TensorProto &t : g.initializer())
      if (failed(tensor(t, graph.fileLoc())))
        return failure();
    for (const onnx::SparseTensorProto &t : g.sparse_initializer())
      if (failed(sparse(t, graph.fileLoc())))
        return failure();
    return nodes(g.node(), topLevel);
  }
  LogicalResult model() {
    if (failed(subgraph(graph.model.graph(), /*topLevel=*/true)))
      return failure();
    for (const onnx::FunctionProto &f : graph.model.functions())
      if (failed(nodes(f.node(), /*topLevel=*/false)))
        return failure();
    return success();
  }
};
} // namespace

/// The listing (a JSON file) names nodes, values, op types and domains; JSON strings must be
/// UTF-8, and replacing bad bytes would make distinct names equal. Such names are refused.
static LogicalResult checkNames(const OnnxGraph &graph) {
  const onnx::GraphProto &g = graph.model.graph();
  auto bad = [](const std::string &s) { return !llvm::json::isUTF8(s); };
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    bool invalid = bad(node.name()) || bad(node.op_type()) || bad(node.domain()) ||
                   llvm::any_of(node.input(), bad) || llvm::any_of(node.output(), bad);
    if (invalid)
      return emitError(graph.fileNodeLoc(i))
             << "node " << i << " has a name, op type, domain or input/output name that is "
                "not valid UTF-8";
  }
  for (const auto *list : {&g.input(), &g.output()})
    for (const onnx::ValueInfoProto &info : *list)
      if (bad(info.name()))
        return emitError(graph.fileLoc())
               << "a graph input or output has a name that is not valid UTF-8";
  return success();
}

LogicalResult spconv::onnx_import::readOnnxModel(StringRef path, StringRef bytes,
                                                 const OnnxImportOptions &options,
                                                 OnnxGraph &graph) {
  graph.path = path.str();
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  graph.directory = dir.empty() ? "." : std::string(dir);

  // Protobuf counts sizes in int: a larger file cannot be a model it can read.
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return emitError(graph.fileLoc()) << "file too large for a protobuf (" << bytes.size()
                                      << " bytes); keep weights in external data";
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()), static_cast<int>(bytes.size()));
  stream.SetRecursionLimit(64);
  if (!graph.model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return emitError(graph.fileLoc())
           << "not a valid ONNX model (protobuf parse failed: truncated or corrupt file)";
  if (!graph.model.has_graph())
    return emitError(graph.fileLoc()) << "not a valid ONNX model (no graph)";
  for (const onnx::OperatorSetIdProto &opset : graph.model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      graph.opset = opset.version();
  if (graph.opset <= 0)
    return emitError(graph.fileLoc()) << "the model imports no version of the ONNX operator set";

  if (failed(checkNames(graph)) || failed(applyShapeOptions(graph, options)) ||
      failed(checkWindowAttributes(graph)) || failed(checkLocalFunctions(graph)) ||
      failed(RawDataChecker{graph}.model()))
    return failure();
  if (std::optional<std::string> error = runOnnxShapeInference(graph.model))
    return emitError(graph.fileLoc()) << "ONNX shape inference failed: " << *error;

  const onnx::GraphProto &g = graph.model.graph();
  // Values: declared shapes first, then what inference added (value_info), initializers last.
  for (const onnx::ValueInfoProto &info : g.input())
    graph.values[info.name()] = valueInfoOf(info);
  for (const onnx::ValueInfoProto &info : g.value_info())
    graph.values[info.name()] = valueInfoOf(info);
  for (const onnx::ValueInfoProto &info : g.output()) {
    graph.values[info.name()] = valueInfoOf(info);
    graph.graphOutputs.insert(info.name());
  }
  llvm::StringSet<> available;
  for (const onnx::TensorProto &t : g.initializer()) {
    if (t.name().empty())
      return emitError(graph.fileLoc()) << "an initializer has no name";
    if (!graph.constants.try_emplace(t.name(), &t).second)
      return emitError(graph.fileLoc()) << "initializer '" << t.name() << "' is defined twice";
    ValueInfo info;
    info.elemType = t.data_type();
    info.shape = SmallVector<int64_t>(t.dims().begin(), t.dims().end());
    graph.values[t.name()] = info;
    available.insert(t.name());
  }
  for (const onnx::ValueInfoProto &info : g.input()) {
    if (!graph.constants.contains(info.name()))
      graph.inputs.push_back(&info);
    available.insert(info.name());
  }

  // Topological order, ties broken by file order (so a well-formed file keeps its order).
  unsigned numNodes = g.node_size();
  llvm::StringMap<unsigned> producer;
  for (unsigned i = 0; i < numNodes; ++i)
    for (const std::string &out : g.node(i).output()) {
      if (out.empty())
        continue;
      if (available.contains(out) || !producer.try_emplace(out, i).second)
        return emitError(graph.fileNodeLoc(i))
               << "node '" << g.node(i).name() << "' (" << g.node(i).op_type()
               << ") defines '" << out << "', which is already defined";
    }
  std::vector<unsigned> pending(numNodes, 0);
  std::vector<SmallVector<unsigned>> readers(numNodes);
  for (unsigned i = 0; i < numNodes; ++i) {
    for (const std::string &in : g.node(i).input()) {
      if (in.empty() || available.contains(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return emitError(graph.fileNodeLoc(i))
               << "node '" << g.node(i).name() << "' (" << g.node(i).op_type() << ") reads '"
               << in << "', which is no graph input, initializer or node output";
      ++pending[i];
      readers[it->second].push_back(i);
    }
  }
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>> ready;
  for (unsigned i = 0; i < numNodes; ++i)
    if (pending[i] == 0)
      ready.push(i);
  while (!ready.empty()) {
    unsigned i = ready.top();
    ready.pop();
    graph.fileIndex.push_back(i);
    graph.nodes.push_back(&g.node(i));
    for (unsigned r : readers[i])
      if (--pending[r] == 0)
        ready.push(r);
  }
  if (graph.nodes.size() != numNodes)
    return emitError(graph.fileLoc()) << "the graph has a cycle";

  for (unsigned pos = 0; pos < graph.nodes.size(); ++pos) {
    const onnx::NodeProto &node = *graph.nodes[pos];
    llvm::StringSet<> seen;
    for (const std::string &in : node.input())
      if (!in.empty() && seen.insert(in).second)
        graph.consumers[in].push_back(pos);
    if (node.op_type() == "Constant" && node.domain().empty() && node.output_size() == 1) {
      if (const onnx::AttributeProto *value = findAttr(node, "value")) {
        if (value->type() != onnx::AttributeProto::TENSOR)
          continue;
        graph.constants[node.output(0)] = &value->t();
        ValueInfo info;
        info.elemType = value->t().data_type();
        info.shape = SmallVector<int64_t>(value->t().dims().begin(), value->t().dims().end());
        graph.values[node.output(0)] = info;
      }
    }
  }
  for (const onnx::ValueInfoProto &out : g.output())
    if (!available.contains(out.name()) && !producer.contains(out.name()))
      return emitError(graph.fileLoc())
             << "graph output '" << out.name() << "' is produced by no node";
  return success();
}
