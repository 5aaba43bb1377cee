//===- EmitterBase.cpp - what the C++ and CUDA emitters share ----*- C++
//-*-===//
//
// The layout of an emitted program: a header comment, one function per entry
// point (`cleave_entry_<name>`), which runs the entry's steps in order, and
// the program info with the entry table. Each step starts with a comment
// naming the ops it implements and their ONNX node, and a `cleave_rt_step`
// call so that failures and profiles name the node.
//
//===----------------------------------------------------------------------===//

#include "EmitterBase.h"

#include "cleave/Conversion/KernelSignatures.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace cleave;
using namespace cleave::detail;

std::string EmitterBase::getPointer(int tensor) const {
  const ProgramTensor &t = program.tensors[tensor];
  switch (t.space) {
  case MemorySpace::Arena:
    if (t.stash >= 0) {
      const StashRegion &region = program.stashes[t.stash];
      return "(arena + " + std::to_string(t.offset) +
             " + (int64_t)(microbatch % " + std::to_string(region.slots) +
             ") * " + std::to_string(region.stride) + ")";
    }
    return "(arena + " + std::to_string(t.offset) + ")";
  case MemorySpace::Persistent:
    return "(persistent + " + std::to_string(t.offset) + ")";
  case MemorySpace::Weights:
    return "((uint8_t *)weights + " + std::to_string(t.offset) + ")";
  case MemorySpace::Input:
    return "((uint8_t *)inputs[" +
           std::to_string(getPortPosition(currentEntry->inputs, t.offset)) +
           "])";
  case MemorySpace::Output:
    return "((uint8_t *)outputs[" +
           std::to_string(getPortPosition(currentEntry->outputs, t.offset)) +
           "])";
  }
  return "";
}

size_t EmitterBase::getPortPosition(ArrayRef<int> ports,
                                    int64_t portIndex) const {
  for (auto [position, port] : llvm::enumerate(ports))
    if (program.tensors[port].offset == portIndex)
      return position;
  llvm::report_fatal_error("a step reads or writes graph port " +
                           llvm::Twine(portIndex) +
                           " that its entry does not take");
}

StringRef EmitterBase::getStorageType(DType type) const {
  if (type == DType::F16 || type == DType::BF16)
    return getHalfStorageType(type);
  return getScalarType(type);
}

StringRef EmitterBase::getScalarType(DType type) {
  switch (type) {
  case DType::F32:
    return "float";
  case DType::F16:
  case DType::BF16:
    break;
  case DType::F64:
    return "double";
  case DType::I64:
    return "int64_t";
  case DType::I32:
    return "int32_t";
  case DType::I16:
    return "int16_t";
  case DType::I8:
    return "int8_t";
  case DType::U8:
    return "uint8_t";
  case DType::Bool:
    return "bool";
  case DType::U16:
    return "uint16_t";
  case DType::U32:
    return "uint32_t";
  case DType::U64:
    return "uint64_t";
  case DType::Invalid:
    break;
  }
  return "void";
}

StringRef EmitterBase::getComputeType(DType type) {
  if (type == DType::F16 || type == DType::BF16)
    return "float";
  return getScalarType(type);
}

std::string EmitterBase::getLiteral(double value, DType type) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  switch (type) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F64: {
    bool single = type != DType::F64;
    if (std::isnan(value))
      return single ? "NAN" : "(double)NAN";
    if (std::isinf(value))
      return std::string(value < 0 ? "-" : "") +
             (single ? "INFINITY" : "(double)INFINITY");
    stream << llvm::format(single ? "%.9g" : "%.17g", value);
    if (text.find_first_of(".e") == std::string::npos)
      text += ".0";
    if (single)
      text += "f";
    return text;
  }
  case DType::Bool:
    return value != 0 ? "true" : "false";
  default:
    stream << "static_cast<" << getScalarType(type) << ">("
           << static_cast<int64_t>(value) << "LL)";
    return text;
  }
}

std::string EmitterBase::getLinearIndex(StringRef var, ArrayRef<int64_t> sizes,
                                        ArrayRef<int64_t> strides) {
  // Merge dimensions walked contiguously (or not at all): fewer divisions.
  struct Segment {
    int64_t size, stride;
  };
  SmallVector<Segment> segments;
  for (auto [size, stride] : llvm::zip(sizes, strides)) {
    if (size == 1)
      continue;
    if (!segments.empty()) {
      Segment &last = segments.back();
      bool bothBroadcast = last.stride == 0 && stride == 0;
      bool contiguous = stride != 0 && last.stride == stride * size;
      if (bothBroadcast || contiguous) {
        last.size *= size;
        last.stride = stride;
        continue;
      }
    }
    segments.push_back({size, stride});
  }
  std::string index;
  int64_t inner = 1;
  for (int64_t s = static_cast<int64_t>(segments.size()) - 1; s >= 0; --s) {
    const Segment &segment = segments[s];
    if (segment.stride != 0) {
      std::string term = var.str();
      if (inner != 1)
        term = "(" + term + " / " + std::to_string(inner) + ")";
      if (s != 0)
        term = "(" + term + " % " + std::to_string(segment.size) + ")";
      if (segment.stride != 1)
        term += " * " + std::to_string(segment.stride);
      index = index.empty() ? term : term + " + " + index;
    }
    inner *= segment.size;
  }
  return index.empty() ? "0" : index;
}

/// The strides of `load` along each dimension of the loop's iteration space
/// (0 where it broadcasts).
/// Whether `type` is a floating-point element type.
static bool isFloatDType(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16 ||
         type == DType::F64;
}

static SmallVector<int64_t> getLoadStrides(ArrayRef<int64_t> space,
                                           ArrayRef<int64_t> shape) {
  int64_t rank = space.size();
  int64_t lead = rank - static_cast<int64_t>(shape.size());
  SmallVector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int64_t d = rank - 1; d >= lead; --d) {
    int64_t size = shape[d - lead];
    strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
  return strides;
}

SmallVector<int64_t> EmitterBase::getLoopSpace(const FusedLoop &loop) const {
  SmallVector<int64_t> space(loop.iterationShape.begin(),
                             loop.iterationShape.end());
  if (loop.block == 0)
    return space;
  // (N, C, H, W) in nChw<b>c: (N, C/b, H, W, b).
  space[1] /= loop.block;
  space.push_back(loop.block);
  return space;
}

SmallVector<int64_t> EmitterBase::getLoadStrides(const FusedLoop &loop,
                                                 const FusedLoad &load) const {
  ArrayRef<int64_t> shape = program.tensors[load.tensor].shape;
  SmallVector<int64_t> strides = ::getLoadStrides(loop.iterationShape, shape);
  if (loop.block == 0)
    return strides;
  if (shape == ArrayRef<int64_t>(loop.iterationShape)) {
    // Blocked as the output is: its bytes in the output's order.
    SmallVector<int64_t> space = getLoopSpace(loop);
    return ::getLoadStrides(space, space);
  }
  // A tensor in its own order, whose channel c = C/b index * b + lane.
  int64_t block = loop.block;
  return {strides[0], strides[1] * block, strides[2], strides[3], strides[1]};
}

std::string EmitterBase::getLoadIndex(const FusedLoop &loop,
                                      const FusedLoad &load,
                                      StringRef i) const {
  return getLinearIndex(i, getLoopSpace(loop), getLoadStrides(loop, load));
}

void EmitterBase::emitReductionBody(const FusedLoop &loop, StringRef o,
                                    StringRef indent) {
  const ScalarReduction &reduction = *loop.reduction;
  ArrayRef<int64_t> space = loop.iterationShape;
  int64_t rank = space.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * space[d + 1];
  SmallVector<int64_t> keptSizes, keptStrides, reducedSizes, reducedStrides;
  int64_t reduced = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(reduction.axes, d)) {
      reducedSizes.push_back(space[d]);
      reducedStrides.push_back(strides[d]);
      reduced *= space[d];
    } else {
      keptSizes.push_back(space[d]);
      keptStrides.push_back(strides[d]);
    }
  }
  DType type = loop.nodes[loop.root].dtype;
  StringRef compute = getComputeType(type);
  std::string inner = (indent + "  ").str();
  os << indent
     << "const int64_t base = " << getLinearIndex(o, keptSizes, keptStrides)
     << ";\n";
  os << indent << compute << " acc = " << getLiteral(reduction.init, type)
     << ";\n";
  os << indent << "for (int64_t r = 0; r < " << reduced << "; ++r) {\n";
  os << inner << "const int64_t i = base + "
     << getLinearIndex("r", reducedSizes, reducedStrides) << ";\n";
  emitNodes(loop, inner,
            [&](int k) { return getLoadIndex(loop, loop.loads[k], "i"); });
  std::string value = "v" + std::to_string(loop.root);
  if (reduction.square)
    value = value + " * " + value;
  if (reduction.combine == "add")
    os << inner << "acc += " << value << ";\n";
  else if (reduction.combine == "mul")
    os << inner << "acc *= " << value << ";\n";
  else
    os << inner << "acc = cl::" << reduction.combine << "(acc, " << value
       << ");\n";
  os << indent << "}\n";
  std::string result = "acc";
  if (reduction.mean)
    result = "acc / " + getLiteral(static_cast<double>(reduced), type);
  if (reduction.sqrt)
    result = "cl::sqrt(acc)";
  DType outType = program.tensors[loop.output].dtype;
  os << indent << "y[" << o << "] = static_cast<" << getStorageType(outType)
     << ">(" << result << ");\n";
}

void EmitterBase::emitLoopBody(const FusedLoop &loop, StringRef indent) {
  emitNodes(loop, indent,
            [&](int k) { return getLoadIndex(loop, loop.loads[k], "i"); });
  DType outType = program.tensors[loop.output].dtype;
  os << indent << "y[i] = static_cast<" << getStorageType(outType) << ">(v"
     << loop.root << ");\n";
}

EmitterBase::RowNest EmitterBase::getRowNest(const FusedLoop &loop) const {
  SmallVector<int64_t> spaceSizes = getLoopSpace(loop);
  ArrayRef<int64_t> space = spaceSizes;
  int64_t rank = space.size();
  std::vector<SmallVector<int64_t>> strides;
  for (const FusedLoad &load : loop.loads)
    strides.push_back(getLoadStrides(loop, load));
  // The longest run of trailing dimensions that every load walks
  // row-major (contiguously) or not at all.
  auto fits = [&](ArrayRef<int64_t> s, int64_t d) {
    bool none = true, rowMajor = true;
    int64_t expect = 1;
    for (int64_t e = rank - 1; e >= d; --e) {
      if (space[e] == 1)
        continue;
      none &= s[e] == 0;
      rowMajor &= s[e] == expect;
      expect *= space[e];
    }
    return none || rowMajor;
  };
  int64_t first = rank;
  while (first > 0 && llvm::all_of(strides, [&](ArrayRef<int64_t> s) {
           return fits(s, first - 1);
         }))
    --first;
  RowNest nest;
  for (int64_t d = 0; d < rank; ++d)
    (d < first ? nest.outer : nest.inner) *= space[d];
  for (ArrayRef<int64_t> s : strides) {
    nest.walksRow.push_back(
        llvm::any_of(s.drop_front(first), [](int64_t x) { return x != 0; }));
    nest.rowStart.push_back(
        getLinearIndex("o", space.take_front(first), s.take_front(first)));
  }
  return nest;
}

/// Rows of at most this many elements are computed into a local array.
static constexpr int64_t kStagedRow = 64;

void EmitterBase::emitRowBody(const FusedLoop &loop, const RowNest &nest,
                              StringRef indent) {
  for (auto [k, start] : llvm::enumerate(nest.rowStart))
    os << indent << "const int64_t b" << k << " = " << start << ";\n";
  std::string inner = (indent + "  ").str();
  DType outType = program.tensors[loop.output].dtype;
  StringRef storage = getStorageType(outType);
  // A short row (a blocked loop's channel block) is computed into a local
  // array first: with no store in the loop that might alias its loads, the
  // compiler vectorises it, where it would otherwise unroll it to scalars.
  bool staged = nest.inner <= kStagedRow;
  if (staged)
    os << indent << getComputeType(loop.nodes[loop.root].dtype) << " row["
       << nest.inner << "];\n";
  os << indent << "for (int64_t j = 0; j < " << nest.inner << "; ++j) {\n";
  emitNodes(loop, inner, [&](int k) {
    return "b" + std::to_string(k) + (nest.walksRow[k] ? " + j" : "");
  });
  std::string value = "v" + std::to_string(loop.root);
  if (staged) {
    os << inner << "row[j] = " << value << ";\n";
    os << indent << "}\n";
    os << indent << "for (int64_t j = 0; j < " << nest.inner << "; ++j)\n";
    value = "row[j]";
  }
  os << inner << "y[o * " << nest.inner << " + j] = static_cast<" << storage
     << ">(" << value << ");\n";
  if (!staged)
    os << indent << "}\n";
}

void EmitterBase::emitNodes(const FusedLoop &loop, StringRef indent,
                            llvm::function_ref<std::string(int)> loadAt) {
  for (auto [index, node] : llvm::enumerate(loop.nodes)) {
    os << indent << "const " << getComputeType(node.dtype) << " v" << index
       << " = ";
    switch (node.kind) {
    case ScalarNode::Kind::Load: {
      os << "static_cast<" << getComputeType(node.dtype) << ">(x"
         << node.loadIndex << "[" << loadAt(node.loadIndex) << "])";
      break;
    }
    case ScalarNode::Kind::Literal:
      os << getLiteral(node.literal, node.dtype);
      break;
    case ScalarNode::Kind::Cast:
      if (node.dtype == DType::Bool)
        os << "(v" << node.args[0] << " != 0)";
      // Half-precision values compute as floats: the cast rounds them.
      else if (node.dtype == DType::BF16)
        os << "cl::round_bf16(static_cast<float>(v" << node.args[0] << "))";
      else if (node.dtype == DType::F16)
        os << "cl::round_f16(static_cast<float>(v" << node.args[0] << "))";
      else
        os << "static_cast<" << getComputeType(node.dtype) << ">(v"
           << node.args[0] << ")";
      break;
    case ScalarNode::Kind::Call: {
      StringRef infix = llvm::StringSwitch<StringRef>(node.function)
                            .Case("add", "+")
                            .Case("sub", "-")
                            .Case("mul", "*")
                            .Default("");
      // Integer division is cl::div, which defines x / 0 and MIN / -1.
      if (node.function == "div" && isFloatDType(node.dtype))
        infix = "/";
      if (!infix.empty() && node.args.size() == 2) {
        os << "v" << node.args[0] << " " << infix << " v" << node.args[1];
        break;
      }
      os << "cl::" << node.function << "(";
      llvm::interleaveComma(node.args, os, [&](int arg) { os << "v" << arg; });
      os << ")";
      break;
    }
    }
    os << ";\n";
  }
}

void EmitterBase::emitTensor(int tensor) {
  if (tensor < 0) {
    os << "{nullptr, 0, 0, {0}}";
    return;
  }
  const ProgramTensor &t = program.tensors[tensor];
  os << "{" << getPointer(tensor) << ", " << getDTypeEnumerator(t.dtype) << ", "
     << t.shape.size() << ", {";
  if (t.shape.empty())
    os << "0";
  llvm::interleaveComma(t.shape, os);
  os << "}}";
}

void EmitterBase::emitCall(const KernelCall &call) {
  os << "  {\n    const CleaveTensor in[] = {";
  if (call.inputs.empty())
    os << "{nullptr, 0, 0, {0}}";
  llvm::interleave(
      call.inputs, os, [&](int t) { emitTensor(t); }, ",\n        ");
  // A call without inputs (recv) or outputs (send) passes a placeholder
  // array and a count of 0.
  os << "};\n    CleaveTensor out[] = {";
  if (call.outputs.empty())
    os << "{nullptr, 0, 0, {0}}";
  llvm::interleave(
      call.outputs, os, [&](int t) { emitTensor(t); }, ",\n        ");
  os << "};\n";
  os << "    static const int64_t ints[] = {";
  if (call.ints.empty())
    os << "0";
  llvm::interleaveComma(call.ints, os);
  os << "};\n    static const double floats[] = {";
  if (call.floats.empty())
    os << "0";
  llvm::interleaveComma(call.floats, os, [&](double value) {
    os << getLiteral(value, DType::F64);
  });
  os << "};\n";
  os << "    if (int32_t status = cleave_" << getKernelLibrary() << "_"
     << call.kernel << "(ctx, in, " << call.inputs.size() << ", out, "
     << call.outputs.size() << ", ints, floats))\n";
  os << "      return cleave_rt_failed(status);\n  }\n";
}

LogicalResult EmitterBase::checkKernelTypes(std::string &error) const {
  for (const ProgramTensor &tensor : program.tensors) {
    if (tensor.dtype == DType::Invalid) {
      error = (getLanguageName() + " programs cannot hold tensors of " +
               getDTypeName(tensor.dtype) + " elements")
                  .str();
      return failure();
    }
  }
  for (const ProgramEntry &entry : program.entries) {
    for (const ProgramStep &step : entry.steps) {
      if (!step.call || step.call->kernel == kernels::send.name ||
          step.call->kernel == kernels::recv.name)
        continue;
      for (int t :
           llvm::concat<const int>(step.call->inputs, step.call->outputs)) {
        // -1: an optional input the call leaves out.
        if (t < 0)
          continue;
        DType type = program.tensors[t].dtype;
        if (supports(type))
          continue;
        error = (getLanguageName() + " programs cannot compute in " +
                 getDTypeName(type) + ": " + step.call->kernel)
                    .str();
        if (!step.node.empty())
          error += " (node '" + step.node + "')";
        error += " takes a " + getDTypeName(type).str() +
                 " tensor, which only fused loops and send/recv hold";
        return failure();
      }
    }
  }
  return success();
}

LogicalResult EmitterBase::emit(std::string &error) {
  if (failed(checkKernelTypes(error)))
    return failure();
  os << "// " << options.modelName << " for " << options.targetName
     << ", emitted by cleave. Recompile the model rather than editing.\n";
  os << "//\n// " << program.entries.size() << " entries, "
     << program.getNumSteps() << " steps; arena " << program.arenaBytes
     << " bytes (" << program.unplannedArenaBytes << " without reuse), weights "
     << program.weightBytes << " bytes, persistent " << program.persistentBytes
     << " bytes.\n\n";
  os << "#include \"cleave/rt/Kernels.h\"\n";
  emitPrelude();
  for (const ProgramEntry &entry : program.entries)
    emitEntry(entry);
  emitInfo();
  return success();
}

/// Steps per emitted function: a compiler's time grows faster than linearly
/// with a function's length, so a long entry is a sequence of functions.
constexpr size_t kStepsPerFunction = 64;

static constexpr llvm::StringLiteral kEntryParameters =
    "(CleaveContext *ctx, int32_t microbatch, uint8_t *arena,\n"
    "    uint8_t *persistent, const uint8_t *weights,\n"
    "    const void *const *inputs, void *const *outputs)";

void EmitterBase::emitEntry(const ProgramEntry &entry) {
  currentEntry = &entry;
  os << "\n// The " << entry.phase << " phase";
  if (entry.chunk > 0)
    os << " of model chunk " << entry.chunk;
  os << ".\n";
  size_t numParts = std::max<size_t>(
      1, (entry.steps.size() + kStepsPerFunction - 1) / kStepsPerFunction);
  for (size_t part = 0; part < numParts; ++part) {
    if (part > 0)
      os << "\n";
    if (numParts == 1)
      os << "static int32_t cleave_entry_" << entry.name;
    else
      os << "__attribute__((noinline)) static int32_t cleave_entry_"
         << entry.name << "_part" << part;
    os << kEntryParameters << " {\n";
    os << "  (void)microbatch;\n  (void)arena;\n  (void)persistent;\n"
          "  (void)weights;\n  (void)inputs;\n  (void)outputs;\n";
    size_t end = std::min(entry.steps.size(), (part + 1) * kStepsPerFunction);
    for (size_t index = part * kStepsPerFunction; index < end; ++index) {
      const ProgramStep &step = entry.steps[index];
      int s = static_cast<int>(index);
      os << "\n  // " << s << ": " << step.summary;
      if (!step.node.empty())
        os << " (" << step.node << ")";
      os << "\n  cleave_rt_step(ctx, " << s << ", \"";
      os.write_escaped(step.node);
      os << "\");\n";
      if (step.loop)
        emitLoop(entry, s, *step.loop);
      else
        emitCall(*step.call);
    }
    os << "  return 0;\n}\n";
  }
  if (numParts == 1)
    return;
  // The entry runs its parts in order and stops at the first failure.
  os << "\nstatic int32_t cleave_entry_" << entry.name << kEntryParameters
     << " {\n";
  for (size_t part = 0; part < numParts; ++part)
    os << "  if (int32_t status = cleave_entry_" << entry.name << "_part"
       << part
       << "(ctx, microbatch, arena, persistent, weights, inputs, outputs))\n"
          "    return cleave_rt_failed(status);\n";
  os << "  return 0;\n}\n";
}

void EmitterBase::emitPorts(StringRef array, ArrayRef<int> tensors,
                            ArrayRef<std::string> names) {
  if (tensors.empty())
    return;
  os << "\nstatic const CleavePortInfo " << array << "[] = {\n";
  for (auto [tensor, name] : llvm::zip_equal(tensors, names)) {
    const ProgramTensor &t = program.tensors[tensor];
    os << "    {\"";
    os.write_escaped(name);
    os << "\", " << getDTypeEnumerator(t.dtype) << ", " << t.shape.size()
       << ", {";
    if (t.shape.empty())
      os << "0";
    llvm::interleaveComma(t.shape, os);
    os << "}},\n";
  }
  os << "};\n";
}

void EmitterBase::emitInfo() {
  for (const ProgramEntry &entry : program.entries) {
    emitPorts("kInputs_" + entry.name, entry.inputs, entry.inputNames);
    emitPorts("kOutputs_" + entry.name, entry.outputs, entry.outputNames);
  }
  os << "\nstatic const CleaveEntryInfo kEntries[] = {\n";
  for (const ProgramEntry &entry : program.entries) {
    os << "    {\"" << entry.name << "\", \"" << entry.phase
       << "\", cleave_entry_" << entry.name << ", " << entry.inputs.size()
       << ", " << entry.outputs.size() << ", ";
    os << (entry.inputs.empty() ? "nullptr" : "kInputs_" + entry.name) << ", "
       << (entry.outputs.empty() ? "nullptr" : "kOutputs_" + entry.name)
       << "},\n";
  }
  os << "};\n";
  int numWritable = 0;
  os << "\nstatic const CleaveWritableWeight kWritableWeights[] = {\n";
  for (const WeightEntry &weight : program.weights) {
    if (!weight.writable)
      continue;
    os << "    {" << weight.offset << ", " << weight.persistentOffset << ", "
       << weight.bytes << "}, // " << weight.name << "\n";
    ++numWritable;
  }
  // A C++ array cannot be empty.
  if (numWritable == 0)
    os << "    {0, 0, 0},\n";
  os << "};\n";
  os << "\nstatic const CleaveProgramInfo kProgramInfo = {\n"
     << "    CLEAVE_ABI_VERSION, " << program.entries.size() << ", kEntries, "
     << program.arenaBytes << ", " << program.weightBytes << ", "
     << program.persistentBytes << ", " << numWritable
     << ", kWritableWeights};\n\n";
  os << "extern \"C\" const CleaveProgramInfo *cleave_program_info(void) {\n"
        "  return &kProgramInfo;\n}\n";
}
