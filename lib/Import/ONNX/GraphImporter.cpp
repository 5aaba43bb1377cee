//===- GraphImporter.cpp - one ONNX model to one cleave module ------------===//
//
// Model-level checks, graph inputs and outputs, initializers (constants,
// inline weights, external weights) and the walk over the nodes.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"

#include "cleave/Dialect/Cleave/IR/CleaveAttributes.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Support/Progress.h"
#include "cleave/rt/Checked.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>

using namespace mlir;

namespace cleave::onnx_import {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

Type convertElementType(MLIRContext *context, int32_t dataType) {
  Builder b(context);
  auto unsignedType = [&](unsigned width) {
    return IntegerType::get(context, width, IntegerType::Unsigned);
  };
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return unsignedType(8);
  case onnx::TensorProto::UINT16:
    return unsignedType(16);
  case onnx::TensorProto::UINT32:
    return unsignedType(32);
  case onnx::TensorProto::UINT64:
    return unsignedType(64);
  default:
    return {};
  }
}

std::string getDataTypeName(int32_t dataType) {
  // The names of the data types newer than the ONNX headers cleave builds
  // with are spelled out here.
  static constexpr const char *names[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",
      "INT8",           "UINT16",     "INT16",
      "INT32",          "INT64",      "STRING",
      "BOOL",           "FLOAT16",    "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",
      "COMPLEX128",     "BFLOAT16",   "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",          "INT4",       "FLOAT4E2M1",
      "FLOAT8E8M0",     "UINT2",      "INT2"};
  if (dataType >= 0 && dataType < static_cast<int32_t>(std::size(names)))
    return names[dataType];
  return "data type " + std::to_string(dataType);
}

std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "[]";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      shape, os,
      [&](int64_t dim) {
        if (ShapedType::isDynamic(dim))
          os << '?';
        else
          os << dim;
      },
      "x");
  return text;
}

std::string formatList(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(values, os);
  os << ']';
  return text;
}

/// Bytes per element in ONNX raw data (booleans take one byte each).
static uint64_t getElementBytes(Type elementType) {
  return (elementType.getIntOrFloatBitWidth() + 7) / 8;
}

/// Builds an elements attribute from little-endian bytes in ONNX's raw
/// layout.
static DenseElementsAttr getElementsFromBytes(RankedTensorType type,
                                              ArrayRef<char> bytes) {
  // MLIR packs i1 as bits; ONNX stores one byte per boolean.
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bools(bytes.size());
    for (auto [i, byte] : llvm::enumerate(bytes))
      bools[i] = byte != 0;
    return DenseElementsAttr::get(type, bools);
  }
  if (type.getNumElements() == 0)
    return DenseElementsAttr::get(type, ArrayRef<Attribute>());
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

//===----------------------------------------------------------------------===//
// GraphImporter
//===----------------------------------------------------------------------===//

GraphImporter::GraphImporter(MLIRContext &context,
                             const ONNXImportOptions &options,
                             StringRef modelPath, StringRef displayPath,
                             const onnx::ModelProto &model,
                             const ModelLayout &layout)
    : context(context), options(options), modelPath(modelPath.str()),
      displayPath(displayPath.str()), model(model), layout(layout),
      builder(&context) {}

Location GraphImporter::fileLoc() {
  // Line 0 keeps diagnostic printers from quoting a "line" of the binary
  // file.
  return FileLineColLoc::get(&context, displayPath, 0, 0);
}

Location GraphImporter::nodeLoc(StringRef nodeName) {
  return NameLoc::get(builder.getStringAttr(nodeName), fileLoc());
}

std::string GraphImporter::nodeDisplayName(const onnx::NodeProto &node,
                                           unsigned index) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "_" + std::to_string(index);
}

static bool isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

LogicalResult GraphImporter::checkModel() {
  if (!model.has_graph())
    return emitError(fileLoc()) << "not an ONNX model: the file holds no graph";
  // IR version 12, which models of opset 24 carry, adds only the FLOAT8E8M0
  // data type (refused by name like the other float8 types); a newer one
  // may carry fields this reader would silently skip.
  constexpr int64_t kMaxIRVersion = 12;
  if (model.ir_version() < 3 || model.ir_version() > kMaxIRVersion)
    return emitError(fileLoc())
           << "ONNX IR version " << model.ir_version()
           << " is not supported (cleave reads IR versions 3 to "
           << kMaxIRVersion << ")";
  if (model.graph().output_size() == 0)
    return emitError(fileLoc()) << "the graph has no outputs";

  std::optional<int64_t> defaultOpset;
  for (const onnx::OperatorSetIdProto &entry : model.opset_import())
    if (isDefaultDomain(entry.domain()))
      defaultOpset = entry.version();
  if (!defaultOpset)
    return emitError(fileLoc())
           << "the model imports no opset of the default ONNX domain";
  if (*defaultOpset < kMinOpset || *defaultOpset > kMaxOpset)
    return emitError(fileLoc())
           << "the model uses opset " << *defaultOpset
           << " of the default ONNX domain; cleave supports opsets "
           << kMinOpset << " to " << kMaxOpset;
  opset = *defaultOpset;

  const onnx::GraphProto &graph = model.graph();
  if (graph.sparse_initializer_size() > 0) {
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "sparse initializers are not supported: ";
    llvm::interleaveComma(graph.sparse_initializer(), diag,
                          [&](const onnx::SparseTensorProto &sparse) {
                            diag << "'" << sparse.values().name() << "'";
                          });
    return diag;
  }
  return success();
}

LogicalResult GraphImporter::checkSupportedOps() {
  // Every unsupported (operator, version) with the nodes that use it, so that
  // one error lists all of them.
  std::map<std::string, SmallVector<std::string>> unsupported;
  size_t count = 0;
  const onnx::GraphProto &graph = model.graph();
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    std::string key;
    if (isDefaultDomain(node.domain())) {
      if (handlers.lookup(node.op_type(), opset))
        continue;
      key = node.op_type() + " (opset " + std::to_string(opset) + ")";
    } else {
      std::string version = "which the model does not import";
      for (const onnx::OperatorSetIdProto &entry : model.opset_import())
        if (entry.domain() == node.domain())
          version = "version " + std::to_string(entry.version());
      key =
          node.op_type() + " (domain '" + node.domain() + "', " + version + ")";
    }
    unsupported[key].push_back(nodeDisplayName(node, index));
    ++count;
  }
  if (unsupported.empty())
    return success();

  constexpr size_t kNamesShown = 5;
  InFlightDiagnostic diag = emitError(fileLoc());
  diag << count
       << (count == 1 ? " node uses an operator" : " nodes use operators")
       << " that cleave does not support:";
  for (auto &[key, nodes] : unsupported) {
    diag << "\n  " << key << ": ";
    ArrayRef<std::string> shown(nodes);
    llvm::interleaveComma(
        shown.take_front(kNamesShown), diag,
        [&](const std::string &name) { diag << "'" << name << "'"; });
    if (nodes.size() > kNamesShown)
      diag << " and " << nodes.size() - kNamesShown << " more";
  }
  return diag;
}

LogicalResult GraphImporter::collectInitializers() {
  for (auto [index, tensor] : llvm::enumerate(model.graph().initializer())) {
    auto [it, inserted] = values.try_emplace(tensor.name());
    if (!inserted)
      return emitError(fileLoc()) << "initializer '" << tensor.name()
                                  << "' is defined more than once";
    it->second.initializer = static_cast<int>(index);
    it->second.definer = "initializer '" + tensor.name() + "'";
  }
  return success();
}

namespace {
/// One dimension of a declared input shape.
struct DeclaredDim {
  int64_t size = ShapedType::kDynamic;
  std::string param;
};
} // namespace

LogicalResult GraphImporter::resolveInputTypes(
    SmallVectorImpl<const onnx::ValueInfoProto *> &args,
    SmallVectorImpl<Type> &types) {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringSet<> argNames;
  bool ok = true;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    // Before IR version 4 initializers are listed as inputs too; they keep
    // their stored value.
    if (values.contains(input.name()))
      continue;
    if (!argNames.insert(input.name()).second) {
      emitError(fileLoc()) << "graph input '" << input.name()
                           << "' is declared more than once";
      ok = false;
      continue;
    }
    args.push_back(&input);
  }

  // Every --input-shape must name an input.
  for (const auto &[name, shape] : options.inputShapes) {
    if (argNames.contains(name))
      continue;
    InFlightDiagnostic diag = emitError(fileLoc());
    diag << "--input-shape names '" << name
         << "', which is not an input of the model; its inputs are ";
    llvm::interleaveComma(args, diag, [&](const onnx::ValueInfoProto *arg) {
      diag << "'" << arg->name() << "'";
    });
    ok = false;
  }
  if (!ok)
    return failure();

  for (const onnx::ValueInfoProto *arg : args) {
    StringRef name = arg->name();
    if (!arg->type().has_tensor_type()) {
      emitError(fileLoc()) << "input '" << name
                           << "' is not a tensor; cleave imports tensor "
                              "inputs only";
      ok = false;
      continue;
    }
    const onnx::TypeProto::Tensor &tensorType = arg->type().tensor_type();
    Type elementType = convertElementType(&context, tensorType.elem_type());
    if (!elementType) {
      emitError(fileLoc()) << "input '" << name << "' has element type "
                           << getDataTypeName(tensorType.elem_type())
                           << ", which cleave does not support";
      ok = false;
      continue;
    }

    std::optional<SmallVector<DeclaredDim>> declared;
    if (tensorType.has_shape()) {
      declared.emplace();
      for (const onnx::TensorShapeProto::Dimension &dim :
           tensorType.shape().dim()) {
        DeclaredDim d;
        if (dim.has_dim_value() && dim.dim_value() >= 0)
          d.size = dim.dim_value();
        else if (dim.has_dim_param())
          d.param = dim.dim_param();
        declared->push_back(d);
      }
    }

    const SmallVector<int64_t> *bound = nullptr;
    for (const auto &[boundName, shape] : options.inputShapes)
      if (boundName == name)
        bound = &shape;

    SmallVector<int64_t> shape;
    if (bound) {
      if (declared && declared->size() != bound->size()) {
        emitError(fileLoc())
            << "--input-shape gives input '" << name << "' rank "
            << bound->size() << " (" << formatShape(*bound)
            << ") but the model declares rank " << declared->size();
        ok = false;
        continue;
      }
      shape.assign(bound->begin(), bound->end());
      if (declared) {
        for (auto [i, dim] : llvm::enumerate(*declared)) {
          if (ShapedType::isDynamic(dim.size) || dim.size == shape[i])
            continue;
          emitError(fileLoc()) << "--input-shape gives input '" << name
                               << "' dimension " << i << " size " << shape[i]
                               << " but the model declares it as " << dim.size;
          ok = false;
        }
      }
    } else if (!declared) {
      emitError(fileLoc()) << "input '" << name
                           << "' has no declared shape; give it with "
                              "--input-shape "
                           << name << "=<dims> (e.g. " << name << "=1x16)";
      ok = false;
      continue;
    } else {
      SmallVector<std::string> unbound;
      std::string example;
      for (auto [i, dim] : llvm::enumerate(*declared)) {
        shape.push_back(dim.size);
        if (!example.empty())
          example += "x";
        example +=
            ShapedType::isDynamic(dim.size) ? "1" : std::to_string(dim.size);
        if (!ShapedType::isDynamic(dim.size))
          continue;
        std::string text = std::to_string(i);
        text += dim.param.empty() ? " (unnamed)" : " ('" + dim.param + "')";
        unbound.push_back(text);
      }
      if (!unbound.empty()) {
        InFlightDiagnostic diag = emitError(fileLoc());
        diag << "input '" << name << "' has dynamic dimension"
             << (unbound.size() == 1 ? " " : "s ");
        llvm::interleaveComma(unbound, diag);
        diag << "; bind " << (unbound.size() == 1 ? "it" : "them")
             << " with --input-shape " << name << "=<dims> (e.g. --input-shape "
             << name << "=" << example << ")";
        ok = false;
        continue;
      }
    }
    int64_t elements, bytes;
    if (elementType.isIntOrFloat() &&
        !rt::checkedTensorSize(
            shape, llvm::divideCeil(elementType.getIntOrFloatBitWidth(), 8),
            elements, bytes)) {
      emitError(fileLoc()) << "input '" << name << "' of shape "
                           << formatShape(shape)
                           << " has more bytes than cleave can address";
      ok = false;
      continue;
    }
    types.push_back(RankedTensorType::get(shape, elementType));
  }
  return success(ok);
}

FailureOr<Value> GraphImporter::lookupValue(StringRef name) {
  auto it = values.find(name);
  if (it == values.end())
    return Value();
  ValueEntry &entry = it->second;
  if (entry.value || entry.initializer < 0)
    return entry.value;
  unsigned index = entry.initializer;
  const TensorPayloads *payloads = index < layout.initializers.size()
                                       ? &layout.initializers[index]
                                       : nullptr;
  Location loc = NameLoc::get(builder.getStringAttr(name), fileLoc());
  FailureOr<Value> value = importTensor(model.graph().initializer(index),
                                        payloads, name, "initializer", loc);
  if (failed(value))
    return failure();
  entry.value = *value;
  return *value;
}

LogicalResult GraphImporter::defineValue(StringRef name, Value value,
                                         StringRef definer,
                                         std::string &previous) {
  auto [it, inserted] = values.try_emplace(name);
  if (!inserted) {
    previous = it->second.definer;
    return failure();
  }
  it->second.value = value;
  it->second.definer = definer.str();
  return success();
}

FailureOr<Value> GraphImporter::importAttributeTensor(
    const onnx::TensorProto &tensor, unsigned nodeIndex,
    unsigned attributeIndex, StringRef valueName, Location loc) {
  auto it = layout.attributeTensors.find({nodeIndex, attributeIndex});
  const TensorPayloads *payloads =
      it == layout.attributeTensors.end() ? nullptr : &it->second;
  return importTensor(tensor, payloads, valueName, "constant", loc);
}

bool GraphImporter::isInlined(RankedTensorType type, StringRef kind) const {
  // For training, the float weights are exactly the parameters: the float
  // initializers, and not the tensors of Constant nodes.
  if (options.floatInitializersAsWeights &&
      isa<FloatType>(type.getElementType()))
    return kind != "initializer";
  return type.getNumElements() <= options.maxInlineElements;
}

FailureOr<DenseElementsAttr> GraphImporter::readSmallWeight(WeightOp weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  if (type.getNumElements() > options.maxInlineElements)
    return DenseElementsAttr();
  auto buffer = llvm::MemoryBuffer::getFileSlice(
      weight.getFile(), weight.getLength(), weight.getOffset(),
      /*IsVolatile=*/false);
  if (!buffer)
    return emitError(weight.getLoc())
           << "initializer '" << weight.getName() << "' cannot be read from '"
           << weight.getFile() << "': " << buffer.getError().message();
  ArrayRef<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  return getElementsFromBytes(type, bytes);
}

Value GraphImporter::createWeight(RankedTensorType type, StringRef valueName,
                                  StringRef file, uint64_t offset,
                                  uint64_t length, Location loc) {
  ++numWeights;
  weightBytes += length;
  return WeightOp::create(builder, loc, type, builder.getStringAttr(valueName),
                          builder.getStringAttr(file),
                          builder.getI64IntegerAttr(offset),
                          builder.getI64IntegerAttr(length));
}

/// How many values `tensor` stores in the typed field its data type uses.
static size_t getTypedValueCount(const onnx::TensorProto &tensor) {
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return tensor.float_data_size();
  case onnx::TensorProto::DOUBLE:
    return tensor.double_data_size();
  case onnx::TensorProto::INT64:
    return tensor.int64_data_size();
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    return tensor.uint64_data_size();
  default:
    // INT32 and the narrower types (including FLOAT16/BFLOAT16 bit patterns
    // and BOOL) live in int32_data.
    return tensor.int32_data_size();
  }
}

FailureOr<Value> GraphImporter::importTensor(const onnx::TensorProto &tensor,
                                             const TensorPayloads *payloads,
                                             StringRef valueName,
                                             StringRef kind, Location loc) {
  auto fail = [&]() -> InFlightDiagnostic {
    return emitError(loc) << kind << " '" << valueName << "' ";
  };
  Type elementType = convertElementType(&context, tensor.data_type());
  if (!elementType)
    return fail() << "has element type " << getDataTypeName(tensor.data_type())
                  << ", which cleave does not support";
  if (tensor.has_segment())
    return fail() << "is segmented; segmented tensors are not supported";

  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      return fail() << "has negative dimension " << dim;
    if (llvm::MulOverflow(count, dim, count))
      return fail() << "has more elements than cleave can count";
    shape.push_back(dim);
  }
  auto type = RankedTensorType::get(shape, elementType);
  uint64_t elementBytes = getElementBytes(elementType);
  bool overflow = false;
  uint64_t byteSize = llvm::SaturatingMultiply(static_cast<uint64_t>(count),
                                               elementBytes, &overflow);
  if (overflow)
    return fail() << "has more bytes than cleave can count";
  bool inlined = isInlined(type, kind);

  // The wire scan and the parser see the tensors in the same order; a name
  // that disagrees means the scan went astray, and its ranges are not used.
  if (payloads && payloads->name != tensor.name())
    payloads = nullptr;

  if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
    return importExternalTensor(tensor, type, byteSize, valueName, kind, loc);

  auto sizeMismatch = [&](size_t stored) -> InFlightDiagnostic {
    return fail() << "stores " << stored << " values but its shape "
                  << formatShape(shape) << " has " << count << " elements";
  };

  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != byteSize)
      return fail() << "has " << raw.size() << " bytes of raw data but "
                    << getDataTypeName(tensor.data_type()) << " "
                    << formatShape(shape) << " needs " << byteSize;
    if (inlined)
      return Value(ConstantOp::create(
          builder, loc, type,
          getElementsFromBytes(type, ArrayRef<char>(raw.data(), raw.size()))));
    if (!payloads || !payloads->rawData ||
        payloads->rawData->length != raw.size())
      return fail() << "has raw data whose place in the file could not be "
                       "found";
    return createWeight(type, valueName, modelPath, payloads->rawData->offset,
                        byteSize, loc);
  }

  // Typed fields. Packed float_data and double_data have the byte layout of
  // raw data, so large ones are referenced in place like raw data; the
  // varint-encoded integer fields have no such layout and are decoded. The
  // stored count is checked before anything is allocated for the shape.
  size_t stored = getTypedValueCount(tensor);
  if (static_cast<uint64_t>(stored) != static_cast<uint64_t>(count))
    return sizeMismatch(stored);
  auto referenceInPlace =
      [&](const std::optional<ByteRange> &range) -> std::optional<Value> {
    if (inlined || !range || range->length != byteSize)
      return std::nullopt;
    return createWeight(type, valueName, modelPath, range->offset, byteSize,
                        loc);
  };
  if (tensor.data_type() == onnx::TensorProto::FLOAT)
    if (std::optional<Value> weight =
            referenceInPlace(payloads ? payloads->floatData : std::nullopt))
      return *weight;
  if (tensor.data_type() == onnx::TensorProto::DOUBLE)
    if (std::optional<Value> weight =
            referenceInPlace(payloads ? payloads->doubleData : std::nullopt))
      return *weight;

  std::vector<char> bytes;
  bytes.reserve(byteSize);
  auto append = [&](uint64_t bits) {
    for (uint64_t i = 0; i < elementBytes; ++i)
      bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float value : tensor.float_data())
      append(llvm::bit_cast<uint32_t>(value));
    break;
  case onnx::TensorProto::DOUBLE:
    for (double value : tensor.double_data())
      append(llvm::bit_cast<uint64_t>(value));
    break;
  case onnx::TensorProto::INT64:
    for (int64_t value : tensor.int64_data())
      append(static_cast<uint64_t>(value));
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    for (uint64_t value : tensor.uint64_data())
      append(value);
    break;
  default:
    for (int32_t value : tensor.int32_data())
      append(static_cast<uint32_t>(value));
    break;
  }
  return Value(ConstantOp::create(builder, loc, type,
                                  getElementsFromBytes(type, bytes)));
}

FailureOr<uint64_t>
GraphImporter::getFileSize(StringRef path, StringRef tensorName, Location loc) {
  auto it = fileSizes.find(path);
  if (it != fileSizes.end())
    return it->second;
  llvm::sys::fs::file_status status;
  if (std::error_code error = llvm::sys::fs::status(path, status))
    return emitError(loc) << "external data file '" << path
                          << "' of initializer '" << tensorName
                          << "' cannot be opened: " << error.message();
  if (!llvm::sys::fs::is_regular_file(status))
    return emitError(loc) << "external data file '" << path
                          << "' of initializer '" << tensorName
                          << "' is not a regular file";
  fileSizes[path] = status.getSize();
  return status.getSize();
}

LogicalResult GraphImporter::checkInsideModelDirectory(
    StringRef path, StringRef location,
    llvm::function_ref<InFlightDiagnostic()> fail) {
  SmallString<256> directory = llvm::sys::path::parent_path(modelPath);
  if (directory.empty())
    directory = ".";
  SmallString<256> realDirectory, realPath;
  // A file that does not exist is reported when its size is read.
  if (llvm::sys::fs::real_path(directory, realDirectory) ||
      llvm::sys::fs::real_path(path, realPath))
    return success();
  StringRef inside = realPath.str();
  if (inside.consume_front(realDirectory) &&
      (inside.empty() || llvm::sys::path::is_separator(inside.front())))
    return success();
  return fail() << "has external data location '" << location
                << "', which resolves to '" << realPath
                << "' outside the model's directory '" << realDirectory << "'",
         failure();
}

FailureOr<Value> GraphImporter::importExternalTensor(
    const onnx::TensorProto &tensor, RankedTensorType type, uint64_t byteSize,
    StringRef valueName, StringRef kind, Location loc) {
  auto fail = [&]() -> InFlightDiagnostic {
    return emitError(loc) << kind << " '" << valueName << "' ";
  };
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    StringRef key = entry.key(), value = entry.value();
    uint64_t number;
    if (key == "location") {
      location = value.str();
    } else if (key == "offset" || key == "length") {
      if (value.getAsInteger(10, number))
        return fail() << "has external data " << key << " '" << value
                      << "', which is not a non-negative integer";
      if (key == "offset")
        offset = number;
      else
        length = number;
    }
  }
  if (location.empty())
    return fail() << "is stored externally but names no location";

  // External data lies in the model's directory, as ONNX requires: a
  // location is relative to it and, with symlinks resolved, stays inside it.
  if (llvm::sys::path::is_absolute(location))
    return fail() << "has external data location '" << location
                  << "', an absolute path; ONNX external data must be named "
                     "relative to the model's directory";
  SmallString<256> path = llvm::sys::path::parent_path(modelPath);
  llvm::sys::path::append(path, location);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  if (failed(checkInsideModelDirectory(path, location, fail)))
    return failure();

  if (length && *length != byteSize)
    return fail() << "has external data length " << *length << " but "
                  << getDataTypeName(tensor.data_type()) << " "
                  << formatShape(type.getShape()) << " needs " << byteSize
                  << " bytes";
  FailureOr<uint64_t> fileSize = getFileSize(path, valueName, loc);
  if (failed(fileSize))
    return failure();
  bool overflow = false;
  uint64_t end = llvm::SaturatingAdd(offset, byteSize, &overflow);
  if (overflow || end > *fileSize)
    return fail() << "needs bytes [" << offset << ", " << offset + byteSize
                  << ") of external data file '" << path << "', which has only "
                  << *fileSize << " bytes";

  if (!isInlined(type, kind))
    return createWeight(type, valueName, path, offset, byteSize, loc);

  // Small tensors (shape operands among them) are constants; reading their
  // few bytes keeps the cost independent of the data file's size.
  auto buffer = llvm::MemoryBuffer::getFileSlice(path, byteSize, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer)
    return fail() << "cannot be read from '" << path
                  << "': " << buffer.getError().message();
  ArrayRef<char> bytes((*buffer)->getBufferStart(), (*buffer)->getBufferSize());
  return Value(ConstantOp::create(builder, loc, type,
                                  getElementsFromBytes(type, bytes)));
}

LogicalResult GraphImporter::importNodes() {
  const onnx::GraphProto &graph = model.graph();
  // Nodes bind their initializers (weight references) as they read them, so
  // this one step covers both.
  ProgressStep progress = beginProgress(
      options.progress, "importing " + displayPath, graph.node_size(), "nodes");
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    progress.advance();
    std::string name = nodeDisplayName(node, index);
    Location loc = nodeLoc(name);
    NodeBinder binder(*this, node, index, loc, name);

    // Inputs must name values defined before the node, even those a handler
    // does not read.
    for (auto [i, input] : llvm::enumerate(node.input())) {
      if (input.empty() || isDefined(input))
        continue;
      return binder.emitError()
             << "input " << i << " '" << input
             << "' names no value defined before the node (graph inputs, "
                "initializers and outputs of earlier nodes)";
    }

    const OpHandler *handler = handlers.lookup(node.op_type(), opset);
    if (!handler)
      return binder.emitError() << "no handler for opset " << opset;
    if (failed(binder.checkUniqueAttributes()) ||
        failed(handler->handler(binder)) ||
        failed(binder.checkEverythingRead()))
      return failure();
  }
  return success();
}

LogicalResult GraphImporter::importOutputs(func::FuncOp func) {
  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  bool ok = true;
  for (const onnx::ValueInfoProto &output : model.graph().output()) {
    StringRef name = output.name();
    FailureOr<Value> value = lookupValue(name);
    if (failed(value))
      return failure();
    if (!*value) {
      emitError(fileLoc()) << "graph output '" << name
                           << "' is not produced by any node";
      ok = false;
      continue;
    }
    auto type = cast<RankedTensorType>(value->getType());

    // A declared type must agree with the computed one where it says
    // anything.
    if (output.type().has_tensor_type()) {
      const onnx::TypeProto::Tensor &declared = output.type().tensor_type();
      Type declaredElement = convertElementType(&context, declared.elem_type());
      if (declared.elem_type() != onnx::TensorProto::UNDEFINED &&
          declaredElement != type.getElementType()) {
        emitError(fileLoc())
            << "graph output '" << name << "' is declared "
            << getDataTypeName(declared.elem_type()) << " but the model "
            << "computes " << type.getElementType();
        ok = false;
      }
      if (declared.has_shape()) {
        const onnx::TensorShapeProto &shape = declared.shape();
        bool mismatch = shape.dim_size() != type.getRank();
        SmallVector<int64_t> declaredDims;
        for (auto [i, dim] : llvm::enumerate(shape.dim())) {
          declaredDims.push_back(dim.has_dim_value() ? dim.dim_value()
                                                     : ShapedType::kDynamic);
          if (!mismatch && dim.has_dim_value() && !type.isDynamicDim(i) &&
              dim.dim_value() != type.getDimSize(i))
            mismatch = true;
        }
        if (mismatch) {
          emitError(fileLoc())
              << "graph output '" << name << "' is declared with shape "
              << formatShape(declaredDims) << " but the model computes "
              << formatShape(type.getShape());
          ok = false;
        }
      }
    }
    results.push_back(*value);
    resultTypes.push_back(type);
  }
  if (!ok)
    return failure();

  func::ReturnOp::create(builder, fileLoc(), results);
  func.setFunctionType(
      builder.getFunctionType(func.getArgumentTypes(), resultTypes));
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto &output : model.graph().output())
    names.push_back(output.name());
  setResultNames(func, names);
  return success();
}

void GraphImporter::setModuleAttributes(ModuleOp module) {
  std::string producer = model.producer_name();
  if (!model.producer_version().empty())
    producer += (producer.empty() ? "" : " ") + model.producer_version();
  setOnnxProvenance(module, modelPath, producer, opset, model.ir_version());
}

void GraphImporter::eraseDeadOps(Block &block) {
  // Folding leaves behind the constants it consumed (configuration inputs,
  // intermediate shape values) and ONNX graphs may hold unused nodes.
  // Walking backwards erases whole dead chains in one pass.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
    if (isOpTriviallyDead(&op))
      op.erase();
}

OwningOpRef<ModuleOp> GraphImporter::import() {
  if (failed(checkModel()) || failed(checkSupportedOps()) ||
      failed(collectInitializers()))
    return nullptr;

  SmallVector<const onnx::ValueInfoProto *> args;
  SmallVector<Type> argTypes;
  if (failed(resolveInputTypes(args, argTypes)))
    return nullptr;

  for (const onnx::NodeProto &node : model.graph().node())
    for (const std::string &input : node.input())
      consumed.insert(input);
  for (const onnx::ValueInfoProto &output : model.graph().output())
    consumed.insert(output.name());

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  setModuleAttributes(*module);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc(), options.functionName,
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  std::vector<std::string> argNames;
  for (const onnx::ValueInfoProto *arg : args)
    argNames.push_back(arg->name());
  setArgNames(func, argNames);
  for (auto [i, arg] : llvm::enumerate(args)) {
    entry->getArgument(i).setLoc(nodeLoc(arg->name()));
    std::string previous;
    (void)defineValue(arg->name(), entry->getArgument(i),
                      "graph input '" + arg->name() + "'", previous);
  }
  builder.setInsertionPointToEnd(entry);

  if (failed(importNodes()) || failed(importOutputs(func)))
    return nullptr;
  eraseDeadOps(*entry);
  if (failed(mlir::verify(*module)))
    return nullptr;
  if (options.progress)
    options.progress->remark(llvm::formatv(
        "imported {0}: {1} nodes, {2} weights referencing {3} bytes ({4:f1} "
        "GB, not read)",
        displayPath, model.graph().node_size(), numWeights, weightBytes,
        static_cast<double>(weightBytes) / 1e9));
  return module;
}

} // namespace cleave::onnx_import
