//===- ParseDeviceProgram.cpp - read and verify the text form ----*- C++
//-*-===//
//
// The reader of what PrintDeviceProgram.cpp writes, one line at a time, and
// the verifier both the reader and the lowering run: a program the emitters
// accept has every index in range and every buffer inside its memory, so
// hand-written or edited programs fail here with a line and column, never in
// an emitter.
//
//===----------------------------------------------------------------------===//

#include "cleave/Conversion/DeviceProgram.h"
#include "cleave/Conversion/KernelSignatures.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"

#include <set>

#include <cmath>
#include <limits>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

static bool isIdentifier(StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

static bool isPhaseName(StringRef name) {
  for (int phase = 0; phase < rt::kNumPhases; ++phase)
    if (name == rt::phaseName(static_cast<rt::Phase>(phase)))
      return true;
  return false;
}

/// a + b, or none when it overflows.
static std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    return std::nullopt;
  return sum;
}

/// The bytes of `tensor`, or none when the count overflows.
static std::optional<int64_t> getCheckedBytes(const ProgramTensor &tensor) {
  int64_t bytes = getDTypeSize(tensor.dtype);
  for (int64_t dim : tensor.shape)
    if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes))
      return std::nullopt;
  return bytes;
}

/// Whether the emitters can write `value` as a literal of `type`: any
/// number of a floating-point type (NaN and infinities included) or as a
/// bool, and for an integer type a finite value inside int64_t.
static bool isLiteralOf(double value, DType type) {
  switch (type) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::F64:
  case DType::Bool:
    return true;
  default:
    return std::isfinite(value) && value >= -0x1p63 && value < 0x1p63;
  }
}

/// `value` as printf's %g writes it.
static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

static llvm::Error fail(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// [offset, offset + bytes) inside [0, size).
static bool fits(int64_t offset, int64_t bytes, int64_t size) {
  std::optional<int64_t> end = checkedAdd(offset, bytes);
  return offset >= 0 && end && *end <= size;
}

static llvm::Error verifyTensors(const DeviceProgram &program) {
  int64_t numStashes = static_cast<int64_t>(program.stashes.size());
  for (auto [index, tensor] : llvm::enumerate(program.tensors)) {
    std::string name = ("tensor t" + Twine(index)).str();
    if (tensor.dtype == DType::Invalid || getDTypeSize(tensor.dtype) == 0)
      return fail(name + " has no element type");
    if (tensor.shape.size() > 8)
      return fail(name + " has rank " + Twine(tensor.shape.size()) +
                  "; at most 8 is supported");
    std::optional<int64_t> bytes = getCheckedBytes(tensor);
    if (!bytes)
      return fail(name + " has a negative dimension or too many bytes");
    if (tensor.stash >= numStashes || tensor.stash < -1)
      return fail(name + " names stash region s" + Twine(tensor.stash) +
                  " of " + Twine(numStashes));
    if (tensor.stash >= 0 && tensor.space != MemorySpace::Arena)
      return fail(name + " is stashed but not in the arena");
    switch (tensor.space) {
    case MemorySpace::Arena:
      if (tensor.stash < 0 && !fits(tensor.offset, *bytes, program.arenaBytes))
        return fail(name + " (" + Twine(*bytes) + " bytes at " +
                    Twine(tensor.offset) + ") is outside the arena of " +
                    Twine(program.arenaBytes) + " bytes");
      break;
    case MemorySpace::Weights:
      if (!fits(tensor.offset, *bytes, program.weightBytes))
        return fail(name + " (" + Twine(*bytes) + " bytes at " +
                    Twine(tensor.offset) + ") is outside the weight file of " +
                    Twine(program.weightBytes) + " bytes");
      break;
    case MemorySpace::Persistent:
      if (!fits(tensor.offset, *bytes, program.persistentBytes))
        return fail(name + " (" + Twine(*bytes) + " bytes at " +
                    Twine(tensor.offset) +
                    ") is outside persistent memory of " +
                    Twine(program.persistentBytes) + " bytes");
      break;
    case MemorySpace::Input:
    case MemorySpace::Output:
      if (tensor.offset < 0)
        return fail(name + " is graph port " + Twine(tensor.offset));
      break;
    }
  }
  return llvm::Error::success();
}

static llvm::Error verifyWeightsAndStashes(const DeviceProgram &program) {
  for (const WeightEntry &weight : program.weights) {
    std::string name = "weight \"" + weight.name + "\"";
    if (weight.bytes < 0 ||
        !fits(weight.offset, weight.bytes, program.weightBytes))
      return fail(name + " (" + Twine(weight.bytes) + " bytes at " +
                  Twine(weight.offset) + ") is outside the weight file of " +
                  Twine(program.weightBytes) + " bytes");
    if (weight.file.empty() &&
        static_cast<int64_t>(weight.data.size()) != weight.bytes)
      return fail(name + " has " + Twine(weight.data.size()) +
                  " bytes of data for " + Twine(weight.bytes));
    if (weight.fileOffset < 0)
      return fail(name + " is at file offset " + Twine(weight.fileOffset));
    if (!weight.window.empty()) {
      size_t rank = weight.window.size();
      if (weight.starts.size() != rank || weight.shape.size() != rank)
        return fail(name + " has a window, starts and shape of different "
                           "ranks");
      if (weight.splitDim < -1 || weight.splitDim >= (int64_t)rank)
        return fail(name + " splits dimension " + Twine(weight.splitDim) +
                    " of a rank-" + Twine(rank) + " tensor");
      int64_t bytes = weight.elementBytes;
      for (size_t d = 0; d < rank; ++d) {
        if (weight.window[d] < 0 || weight.starts[d] < 0 ||
            weight.starts[d] > weight.shape[d] ||
            weight.window[d] > weight.shape[d] - weight.starts[d])
          return fail(name + "'s window leaves its tensor in dimension " +
                      Twine(d));
        if (__builtin_mul_overflow(bytes, weight.window[d], &bytes))
          return fail(name + "'s window is too large");
      }
      if (weight.elementBytes <= 0 || bytes != weight.bytes)
        return fail(name + "'s window holds " + Twine(bytes) + " bytes, not " +
                    Twine(weight.bytes));
    }
    if (weight.writable &&
        !fits(weight.persistentOffset, weight.bytes, program.persistentBytes))
      return fail(name + " is writable outside persistent memory (" +
                  Twine(weight.bytes) + " bytes at " +
                  Twine(weight.persistentOffset) + " of " +
                  Twine(program.persistentBytes) + ")");
  }
  for (auto [index, stash] : llvm::enumerate(program.stashes)) {
    std::string name = ("stash region s" + Twine(index)).str();
    if (stash.tensor < 0 ||
        stash.tensor >= static_cast<int>(program.tensors.size()) ||
        program.tensors[stash.tensor].stash != static_cast<int>(index))
      return fail(name + " does not hold a tensor stashed in it");
    const ProgramTensor &tensor = program.tensors[stash.tensor];
    int64_t bytes = *getCheckedBytes(tensor);
    int64_t extent;
    if (stash.slots < 1 || stash.stride < bytes ||
        __builtin_mul_overflow(stash.slots, stash.stride, &extent) ||
        !fits(stash.offset, extent, program.arenaBytes) ||
        tensor.offset != stash.offset)
      return fail(name + " (" + Twine(stash.slots) + " slots of " +
                  Twine(stash.stride) + " bytes at " + Twine(stash.offset) +
                  ") does not fit its tensor in the arena of " +
                  Twine(program.arenaBytes) + " bytes");
  }
  return llvm::Error::success();
}

static llvm::Error verifyLoop(const DeviceProgram &program,
                              const FusedLoop &loop, const Twine &where) {
  int numTensors = static_cast<int>(program.tensors.size());
  if (loop.output < 0 || loop.output >= numTensors)
    return fail(where + " writes tensor t" + Twine(loop.output) + " of " +
                Twine(numTensors));
  ArrayRef<int64_t> space = loop.iterationShape;
  for (const FusedLoad &load : loop.loads) {
    if (load.tensor < 0 || load.tensor >= numTensors)
      return fail(where + " loads tensor t" + Twine(load.tensor) + " of " +
                  Twine(numTensors));
    // The emitters index a load by broadcasting it against the iteration
    // space from the right: every dimension it has is the space's or 1.
    ArrayRef<int64_t> shape = program.tensors[load.tensor].shape;
    bool broadcasts = shape.size() <= space.size();
    for (size_t d = 0; broadcasts && d < shape.size(); ++d) {
      int64_t dim = shape[shape.size() - 1 - d];
      broadcasts = dim == 1 || dim == space[space.size() - 1 - d];
    }
    if (!broadcasts)
      return fail(where + " loads tensor t" + Twine(load.tensor) +
                  ", whose shape does not broadcast to its iteration space");
  }
  int numNodes = static_cast<int>(loop.nodes.size());
  for (auto [index, node] : llvm::enumerate(loop.nodes)) {
    // Nodes come after their arguments, so the expression is acyclic.
    for (int arg : node.args)
      if (arg < 0 || arg >= static_cast<int>(index))
        return fail(where + " has a node whose argument is not an earlier "
                            "node");
    if (node.dtype == DType::Invalid)
      return fail(where + " has a node without an element type");
    switch (node.kind) {
    case ScalarNode::Kind::Load:
      if (node.loadIndex < 0 ||
          node.loadIndex >= static_cast<int>(loop.loads.size()))
        return fail(where + " has a load of no tensor");
      if (program.tensors[loop.loads[node.loadIndex].tensor].dtype !=
          node.dtype)
        return fail(where + " loads a tensor as another element type");
      break;
    case ScalarNode::Kind::Cast:
      if (node.args.size() != 1)
        return fail(where + " has a cast of " + Twine(node.args.size()) +
                    " values");
      break;
    case ScalarNode::Kind::Call:
      if (!isIdentifier(node.function))
        return fail(where + " calls '" + node.function +
                    "', which is not a scalar function name");
      break;
    case ScalarNode::Kind::Literal:
      if (!isLiteralOf(node.literal, node.dtype))
        return fail(where + " has a literal " + formatNumber(node.literal) +
                    " that is not a value of " + getDTypeName(node.dtype));
      break;
    }
  }
  if (loop.root < 0 || loop.root >= numNodes)
    return fail(where + " has no root expression");
  const ProgramTensor &output = program.tensors[loop.output];
  if (loop.reduction) {
    size_t rank = loop.iterationShape.size();
    if (loop.reduction->axes.empty() ||
        !llvm::is_sorted(loop.reduction->axes) ||
        llvm::any_of(loop.reduction->axes, [&](int64_t axis) {
          return axis < 0 || axis >= static_cast<int64_t>(rank);
        }))
      return fail(where +
                  " reduces dimensions that its iteration space "
                  "of rank " +
                  Twine(rank) + " does not have, or unsorted");
    // The output is the iteration space without (or with size 1 in) the
    // reduced dimensions.
    int64_t kept = 1, reduced = 1;
    for (auto [d, dim] : llvm::enumerate(loop.iterationShape)) {
      if (dim < 0)
        return fail(where + " iterates over a negative dimension");
      int64_t &product =
          llvm::is_contained(loop.reduction->axes, (int64_t)d) ? reduced : kept;
      if (__builtin_mul_overflow(product, dim, &product))
        return fail(where + " iterates over too many elements");
    }
    if (kept != output.getNumElements())
      return fail(where + " reduces to " + Twine(kept) +
                  " elements into a tensor of " +
                  Twine(output.getNumElements()));
    if (!isLiteralOf(loop.reduction->init, loop.nodes[loop.root].dtype))
      return fail(where + " starts its reduction from " +
                  formatNumber(loop.reduction->init) +
                  ", which is not a value of " +
                  getDTypeName(loop.nodes[loop.root].dtype));
    if (!isIdentifier(loop.reduction->combine))
      return fail(where + " combines with '" + loop.reduction->combine + "'");
  } else if (ArrayRef<int64_t>(loop.iterationShape) !=
             ArrayRef<int64_t>(output.shape)) {
    return fail(where + " iterates over a shape other than its output's");
  }
  if (loop.block != 0) {
    if (loop.block != 8 && loop.block != 16)
      return fail(where + " is blocked by " + Twine(loop.block) +
                  " channels; the blocks are 8 and 16");
    if (loop.reduction || output.shape.size() != 4 ||
        output.shape[1] % loop.block != 0)
      return fail(where + " is blocked by " + Twine(loop.block) +
                  " channels, which needs an output of rank 4 whose "
                  "channels the block divides, and no reduction");
  }
  return llvm::Error::success();
}

llvm::Error cleave::verifyDeviceProgram(const DeviceProgram &program) {
  if (program.arenaBytes < 0 || program.weightBytes < 0 ||
      program.persistentBytes < 0 || program.unplannedArenaBytes < 0)
    return fail("a memory size is negative");
  if (llvm::Error error = verifyTensors(program))
    return error;
  if (llvm::Error error = verifyWeightsAndStashes(program))
    return error;
  int numTensors = static_cast<int>(program.tensors.size());
  llvm::StringSet<> names;
  std::set<std::pair<std::string, int64_t>> phases;
  for (const ProgramEntry &entry : program.entries) {
    std::string name = "entry " + entry.name;
    if (!isIdentifier(entry.name) || !names.insert(entry.name).second)
      return fail("entry name '" + entry.name +
                  "' is not a C identifier, or not unique");
    if (entry.chunk < 0)
      return fail(name + " runs chunk " + Twine(entry.chunk));
    if (!isPhaseName(entry.phase) ||
        !phases.insert({entry.phase, entry.chunk}).second)
      return fail(name + " runs phase '" + entry.phase + "'" +
                  (entry.chunk ? " of chunk " + Twine(entry.chunk) : "") +
                  ", which is unknown or run by another entry");
    for (int t : llvm::concat<const int>(entry.inputs, entry.outputs))
      if (t < 0 || t >= numTensors)
        return fail(name + " has a port of tensor t" + Twine(t) + " of " +
                    Twine(numTensors));
    if (entry.inputNames.size() != entry.inputs.size() ||
        entry.outputNames.size() != entry.outputs.size())
      return fail(name + " names " + Twine(entry.inputNames.size()) +
                  " inputs and " + Twine(entry.outputNames.size()) +
                  " outputs for " + Twine(entry.inputs.size()) + " and " +
                  Twine(entry.outputs.size()));
    if (entry.inPlaceSteps < 0 ||
        entry.inPlaceSteps > static_cast<int64_t>(entry.steps.size()))
      return fail(name + " has " + Twine(entry.inPlaceSteps) +
                  " steps in place of " + Twine(entry.steps.size()));
    // A step reaches a graph port through its entry's pointer arrays.
    auto takes = [&](ArrayRef<int> ports, int t) {
      return llvm::any_of(ports, [&](int port) {
        return program.tensors[port].offset == program.tensors[t].offset;
      });
    };
    auto checkPorts = [&](int t, const std::string &where) -> llvm::Error {
      if (t < 0 || t >= numTensors)
        return llvm::Error::success();
      MemorySpace space = program.tensors[t].space;
      if ((space == MemorySpace::Input && !takes(entry.inputs, t)) ||
          (space == MemorySpace::Output && !takes(entry.outputs, t)))
        return fail(where + " uses graph " +
                    (space == MemorySpace::Input ? "input " : "output ") +
                    Twine(program.tensors[t].offset) +
                    ", which the entry does not take");
      return llvm::Error::success();
    };
    for (auto [index, step] : llvm::enumerate(entry.steps)) {
      std::string where = (name + ", step " + Twine(index)).str();
      if (step.loop.has_value() == step.call.has_value())
        return fail(where + " is neither one loop nor one kernel call");
      SmallVector<int> used;
      if (step.loop) {
        used.push_back(step.loop->output);
        for (const FusedLoad &load : step.loop->loads)
          used.push_back(load.tensor);
      } else {
        used.append(step.call->inputs.begin(), step.call->inputs.end());
        used.append(step.call->outputs.begin(), step.call->outputs.end());
      }
      for (int t : used)
        if (llvm::Error error = checkPorts(t, where))
          return error;
      if (step.loop) {
        if (llvm::Error error = verifyLoop(program, *step.loop, where))
          return error;
        continue;
      }
      const KernelCall &call = *step.call;
      // Tensor numbers are checked first: the signature reads their ranks.
      for (int t : call.inputs)
        if (t < -1 || t >= numTensors)
          return fail(where + " reads tensor t" + Twine(t) + " of " +
                      Twine(numTensors));
      for (int t : call.outputs)
        if (t < 0 || t >= numTensors)
          return fail(where + " writes tensor t" + Twine(t) + " of " +
                      Twine(numTensors));
      std::string mismatch = kernels::checkCall(call, [&](int t) {
        return static_cast<int64_t>(program.tensors[t].shape.size());
      });
      if (!mismatch.empty())
        return fail(where + " " + mismatch);
    }
  }
  if (!program.getEntry(rt::phaseName(rt::Phase::Forward)))
    return fail("the program has no forward entry");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

/// Emits `message` at `at` in the main buffer of `sourceMgr`.
static LogicalResult emitProgramError(llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context, const char *at,
                                      const Twine &message) {
  llvm::SMLoc loc = llvm::SMLoc::getFromPointer(at);
  auto [line, column] = sourceMgr.getLineAndColumn(loc);
  StringRef file = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                       ->getBufferIdentifier();
  return emitError(FileLineColLoc::get(context, file, line, column), message);
}

namespace {

/// Reads one line of the text form; every parse method reports at the
/// cursor and returns failure.
class LineParser {
public:
  LineParser(llvm::SourceMgr &sourceMgr, MLIRContext *context, StringRef line)
      : sourceMgr(sourceMgr), context(context), rest(line) {}

  /// Reports at the cursor, as an MLIR diagnostic (so that
  /// --verify-diagnostics checks it), and fails.
  LogicalResult error(const Twine &message) {
    return emitProgramError(sourceMgr, context, rest.data(), message);
  }

  void skipSpaces() { rest = rest.ltrim(' '); }
  bool atEnd() {
    skipSpaces();
    return rest.empty();
  }
  /// Consumes `text` (after spaces) when it is next.
  bool consumeIf(StringRef text) {
    skipSpaces();
    return rest.consume_front(text);
  }
  LogicalResult expect(StringRef text) {
    if (consumeIf(text))
      return success();
    return error("expected '" + text + "'");
  }
  LogicalResult expectEnd() {
    if (atEnd())
      return success();
    return error("unexpected '" + rest + "' at the end of the line");
  }
  bool startsWith(StringRef text) {
    skipSpaces();
    return rest.starts_with(text);
  }

  LogicalResult parseWord(std::string &word) {
    skipSpaces();
    size_t length = 0;
    while (length < rest.size() &&
           (llvm::isAlnum(rest[length]) || rest[length] == '_'))
      ++length;
    if (length == 0)
      return error("expected a name");
    word = rest.take_front(length).str();
    rest = rest.drop_front(length);
    return success();
  }

  LogicalResult parseInteger(int64_t &value) {
    skipSpaces();
    size_t length = rest.starts_with("-") ? 1 : 0;
    while (length < rest.size() && llvm::isDigit(rest[length]))
      ++length;
    if (rest.take_front(length).getAsInteger(10, value))
      return error("expected an integer");
    rest = rest.drop_front(length);
    return success();
  }

  LogicalResult parseInteger(int &value) {
    int64_t wide = 0;
    if (failed(parseInteger(wide)))
      return failure();
    if (wide < std::numeric_limits<int>::min() ||
        wide > std::numeric_limits<int>::max())
      return error("integer out of range");
    value = static_cast<int>(wide);
    return success();
  }

  LogicalResult parseNumber(double &value) {
    skipSpaces();
    if (consumeIf("nan")) {
      value = std::numeric_limits<double>::quiet_NaN();
      return success();
    }
    if (consumeIf("inf")) {
      value = std::numeric_limits<double>::infinity();
      return success();
    }
    if (consumeIf("-inf")) {
      value = -std::numeric_limits<double>::infinity();
      return success();
    }
    size_t length = 0;
    while (length < rest.size() && (llvm::isDigit(rest[length]) ||
                                    StringRef("+-.eE").contains(rest[length])))
      ++length;
    if (length == 0 || rest.take_front(length).getAsDouble(value))
      return error("expected a number");
    rest = rest.drop_front(length);
    return success();
  }

  /// A string as llvm::printEscapedString writes it, in double quotes.
  LogicalResult parseString(std::string &value) {
    if (failed(expect("\"")))
      return failure();
    value.clear();
    while (!rest.empty() && rest.front() != '"') {
      char c = rest.front();
      rest = rest.drop_front();
      if (c != '\\') {
        value.push_back(c);
        continue;
      }
      if (rest.consume_front("\\")) {
        value.push_back('\\');
        continue;
      }
      unsigned byte;
      if (rest.size() < 2 || rest.take_front(2).getAsInteger(16, byte))
        return error("expected two hex digits after '\\'");
      value.push_back(static_cast<char>(byte));
      rest = rest.drop_front(2);
    }
    return expect("\"");
  }

  /// `tN`, or `none` (-1) when `allowNone`.
  LogicalResult parseTensor(int &tensor, bool allowNone = false) {
    if (allowNone && consumeIf("none")) {
      tensor = -1;
      return success();
    }
    if (failed(expect("t")))
      return failure();
    if (failed(parseInteger(tensor)))
      return failure();
    if (tensor < 0)
      return error("negative tensor number");
    return success();
  }

  /// `(x, y, ...)` or `[x, y, ...]` of elements read by `parseElement`.
  template <typename Fn>
  LogicalResult parseList(StringRef open, StringRef close, Fn parseElement) {
    if (failed(expect(open)))
      return failure();
    if (consumeIf(close))
      return success();
    do {
      if (failed(parseElement()))
        return failure();
    } while (consumeIf(","));
    return expect(close);
  }

  template <typename Vector> LogicalResult parseIntegerList(Vector &values) {
    values.clear();
    return parseList("[", "]", [&] {
      int64_t value = 0;
      if (failed(parseInteger(value)))
        return failure();
      values.push_back(value);
      return success();
    });
  }

  template <typename Vector>
  LogicalResult parseTensorList(Vector &tensors, bool allowNone = false) {
    tensors.clear();
    return parseList("(", ")", [&] {
      int tensor = -1;
      if (failed(parseTensor(tensor, allowNone)))
        return failure();
      tensors.push_back(tensor);
      return success();
    });
  }

  LogicalResult parseDType(DType &type) {
    std::string name;
    if (failed(parseWord(name)))
      return failure();
#define CLEAVE_DTYPE(suffix, enumerator, code, bytes, numpy)                   \
  if (name == #numpy) {                                                        \
    type = DType::enumerator;                                                  \
    return success();                                                          \
  }
#include "cleave/rt/DTypeList.def"
    return error("unknown element type '" + name + "'");
  }

  /// Text up to `  // ` (the step's comment), which it consumes.
  StringRef takeUntilComment() {
    size_t at = rest.find("  // ");
    StringRef taken = rest.take_front(at);
    rest = at == StringRef::npos ? StringRef() : rest.drop_front(at + 5);
    return taken;
  }

  StringRef &remaining() { return rest; }

private:
  llvm::SourceMgr &sourceMgr;
  MLIRContext *context;
  StringRef rest;
};

class ProgramParser {
public:
  ProgramParser(llvm::SourceMgr &sourceMgr, MLIRContext *context)
      : sourceMgr(sourceMgr), context(context) {}

  FailureOr<DeviceProgram> parse();

private:
  LogicalResult parseHeader(LineParser &line);
  LogicalResult parseTensor(LineParser &line);
  LogicalResult parseWeight(LineParser &line, bool writable);
  LogicalResult parseStash(LineParser &line);
  LogicalResult parseEntry(LineParser &line);
  LogicalResult parseStep(LineParser &line);
  LogicalResult parseLoop(LineParser &line, FusedLoop &loop);
  FailureOr<int> parseExpression(LineParser &line, FusedLoop &loop,
                                 llvm::DenseMap<int, int> &loadOfTensor);

  llvm::SourceMgr &sourceMgr;
  MLIRContext *context;
  DeviceProgram program;
  /// The step count each entry line declares.
  std::vector<int64_t> expectedSteps;
  int64_t declaredEntries = 0;
  bool sawHeader = false;
  /// The header line, where errors about the whole program are reported.
  const char *header = nullptr;
};

} // namespace

LogicalResult ProgramParser::parseHeader(LineParser &line) {
  if (failed(line.expect("program:")) ||
      failed(line.parseInteger(declaredEntries)) ||
      failed(line.expect("entries, arena")) ||
      failed(line.parseInteger(program.arenaBytes)) ||
      failed(line.expect("bytes (unplanned")) ||
      failed(line.parseInteger(program.unplannedArenaBytes)) ||
      failed(line.expect("), weights")) ||
      failed(line.parseInteger(program.weightBytes)) ||
      failed(line.expect("bytes, persistent")) ||
      failed(line.parseInteger(program.persistentBytes)) ||
      failed(line.expect("bytes")))
    return failure();
  sawHeader = true;
  return line.expectEnd();
}

LogicalResult ProgramParser::parseTensor(LineParser &line) {
  ProgramTensor tensor;
  int index = -1;
  if (failed(line.parseTensor(index)))
    return failure();
  if (index != static_cast<int>(program.tensors.size()))
    return line.error("expected tensor t" + Twine(program.tensors.size()) +
                      " next");
  if (failed(line.parseDType(tensor.dtype)) ||
      failed(line.parseIntegerList(tensor.shape)))
    return failure();
  std::string space;
  if (failed(line.parseWord(space)))
    return failure();
  std::optional<MemorySpace> parsed;
  for (MemorySpace candidate :
       {MemorySpace::Arena, MemorySpace::Weights, MemorySpace::Input,
        MemorySpace::Output, MemorySpace::Persistent})
    if (space == getMemorySpaceName(candidate))
      parsed = candidate;
  if (!parsed)
    return line.error("unknown memory space '" + space + "'");
  tensor.space = *parsed;
  if (failed(line.parseInteger(tensor.offset)))
    return failure();
  if (line.consumeIf("stash")) {
    if (failed(line.expect("s")) || failed(line.parseInteger(tensor.stash)))
      return failure();
  }
  if (failed(line.parseString(tensor.name)))
    return failure();
  program.tensors.push_back(std::move(tensor));
  return line.expectEnd();
}

LogicalResult ProgramParser::parseWeight(LineParser &line, bool writable) {
  WeightEntry weight;
  weight.writable = writable;
  if (failed(line.parseString(weight.name)) || failed(line.expect("weights")) ||
      failed(line.parseInteger(weight.offset)))
    return failure();
  if (writable && (failed(line.expect("-> persistent")) ||
                   failed(line.parseInteger(weight.persistentOffset))))
    return failure();
  if (failed(line.expect(",")) || failed(line.parseInteger(weight.bytes)) ||
      failed(line.expect("bytes,")))
    return failure();
  if (line.consumeIf("data")) {
    std::string hex;
    if (failed(line.parseString(hex)))
      return failure();
    std::string bytes;
    if (!llvm::tryGetFromHex(hex, bytes))
      return line.error("weight data is not hexadecimal");
    weight.data.assign(bytes.begin(), bytes.end());
  } else {
    if (failed(line.expect("file")) || failed(line.parseString(weight.file)) ||
        failed(line.expect("at")) ||
        failed(line.parseInteger(weight.fileOffset)))
      return failure();
    if (weight.file.empty())
      return line.error("a weight's file name is empty");
    if (line.consumeIf(", window")) {
      if (failed(line.parseIntegerList(weight.window)) ||
          failed(line.expect("at")) ||
          failed(line.parseIntegerList(weight.starts)) ||
          failed(line.expect("of")) ||
          failed(line.parseIntegerList(weight.shape)) ||
          failed(line.expect("of")) ||
          failed(line.parseInteger(weight.elementBytes)) ||
          failed(line.expect("-byte elements")))
        return failure();
      if (line.consumeIf(", split") &&
          failed(line.parseInteger(weight.splitDim)))
        return failure();
    }
  }
  program.weights.push_back(std::move(weight));
  return line.expectEnd();
}

LogicalResult ProgramParser::parseStash(LineParser &line) {
  StashRegion stash;
  int index = -1;
  if (failed(line.expect("s")) || failed(line.parseInteger(index)))
    return failure();
  if (index != static_cast<int>(program.stashes.size()))
    return line.error("expected stash region s" +
                      Twine(program.stashes.size()) + " next");
  if (failed(line.parseTensor(stash.tensor)) || failed(line.expect("arena")) ||
      failed(line.parseInteger(stash.offset)) || failed(line.expect(",")) ||
      failed(line.parseInteger(stash.slots)) ||
      failed(line.expect("slots of")) ||
      failed(line.parseInteger(stash.stride)) || failed(line.expect("bytes")))
    return failure();
  program.stashes.push_back(stash);
  return line.expectEnd();
}

LogicalResult ProgramParser::parseEntry(LineParser &line) {
  ProgramEntry entry;
  int64_t steps = 0;
  if (failed(line.parseWord(entry.name)) || failed(line.expect("phase")) ||
      failed(line.parseWord(entry.phase)) ||
      (line.consumeIf("chunk") && failed(line.parseInteger(entry.chunk))) ||
      failed(line.expect(":")) || failed(line.parseInteger(steps)) ||
      failed(line.expect("steps,")) ||
      failed(line.parseInteger(entry.inPlaceSteps)) ||
      failed(line.expect("in place, inputs")) ||
      failed(line.parseTensorList(entry.inputs)) ||
      failed(line.expect("outputs")) ||
      failed(line.parseTensorList(entry.outputs)) ||
      failed(line.expect("named")))
    return failure();
  for (std::vector<std::string> *names :
       {&entry.inputNames, &entry.outputNames}) {
    if (failed(line.parseList("(", ")", [&] {
          names->emplace_back();
          return line.parseString(names->back());
        })))
      return failure();
  }
  if (steps < 0)
    return line.error("negative step count");
  // The steps follow; the count is checked when the next entry (or the end)
  // comes.
  entry.steps.reserve(std::min<int64_t>(steps, 1 << 16));
  program.entries.push_back(std::move(entry));
  expectedSteps.push_back(steps);
  return line.expectEnd();
}

/// Reads an expression. A literal or call without a `:dtype` suffix is left
/// without a type (Invalid) here: it has its parent's, which `resolveTypes`
/// gives it once the whole expression is read. Iterative, with the calls
/// and casts whose arguments are being read on a stack: a fused chain is as
/// deep as the model is long.
FailureOr<int>
ProgramParser::parseExpression(LineParser &line, FusedLoop &loop,
                               llvm::DenseMap<int, int> &loadOfTensor) {
  SmallVector<ScalarNode> open;
  auto push = [&](ScalarNode node) {
    loop.nodes.push_back(std::move(node));
    return static_cast<int>(loop.nodes.size()) - 1;
  };
  while (true) {
    // An operand: a load, a literal, or the start of a cast or call.
    line.skipSpaces();
    StringRef &rest = line.remaining();
    int done = -1;
    if (rest.size() >= 2 && rest[0] == 't' && llvm::isDigit(rest[1])) {
      const char *at = rest.data();
      int tensor = -1;
      if (failed(line.parseTensor(tensor)))
        return failure();
      if (tensor >= static_cast<int>(program.tensors.size()))
        return emitProgramError(sourceMgr, context, at,
                                "load of undeclared tensor t" + Twine(tensor));
      done = loop.getOrAddLoad(tensor, program.tensors[tensor].dtype,
                               loadOfTensor);
    } else if (rest.empty() || !(llvm::isAlpha(rest[0]) || rest[0] == '_') ||
               rest.starts_with("inf") || rest.starts_with("nan")) {
      ScalarNode literal;
      literal.kind = ScalarNode::Kind::Literal;
      if (failed(line.parseNumber(literal.literal)))
        return failure();
      if (line.consumeIf(":") && failed(line.parseDType(literal.dtype)))
        return failure();
      done = push(std::move(literal));
    } else {
      ScalarNode node;
      if (line.consumeIf("cast<")) {
        node.kind = ScalarNode::Kind::Cast;
        if (failed(line.parseDType(node.dtype)) || failed(line.expect(">(")))
          return failure();
      } else {
        node.kind = ScalarNode::Kind::Call;
        if (failed(line.parseWord(node.function)) || failed(line.expect("(")))
          return failure();
      }
      bool noArguments =
          node.kind == ScalarNode::Kind::Call && line.consumeIf(")");
      if (!noArguments) {
        open.push_back(std::move(node));
        continue;
      }
      if (line.consumeIf(":") && failed(line.parseDType(node.dtype)))
        return failure();
      done = push(std::move(node));
    }
    // Hand the finished operand to the innermost open call; close calls
    // whose last argument it was.
    while (true) {
      if (open.empty())
        return done;
      ScalarNode &parent = open.back();
      parent.args.push_back(done);
      if (parent.kind == ScalarNode::Kind::Call && line.consumeIf(","))
        break;
      if (failed(line.expect(")")))
        return failure();
      ScalarNode finished = std::move(open.back());
      open.pop_back();
      if (finished.kind == ScalarNode::Kind::Call && line.consumeIf(":") &&
          failed(line.parseDType(finished.dtype)))
        return failure();
      done = push(std::move(finished));
    }
  }
}

/// Gives every node read without a type its parent's (the root: the loop
/// output's). Parents come after their arguments, so one pass from the last
/// node down reaches each parent first.
static void resolveTypes(FusedLoop &loop, DType outputType) {
  if (loop.nodes[loop.root].dtype == DType::Invalid)
    loop.nodes[loop.root].dtype = outputType;
  for (int index = static_cast<int>(loop.nodes.size()) - 1; index >= 0;
       --index) {
    const ScalarNode &node = loop.nodes[index];
    for (int arg : node.args)
      if (loop.nodes[arg].dtype == DType::Invalid)
        loop.nodes[arg].dtype = node.dtype;
  }
}

LogicalResult ProgramParser::parseLoop(LineParser &line, FusedLoop &loop) {
  const char *at = line.remaining().data();
  if (failed(line.parseTensor(loop.output)) || failed(line.expect("=")))
    return failure();
  if (loop.output >= static_cast<int>(program.tensors.size()))
    return emitProgramError(sourceMgr, context, at,
                            "loop writes undeclared tensor t" +
                                Twine(loop.output));
  const ProgramTensor &output = program.tensors[loop.output];
  llvm::DenseMap<int, int> loadOfTensor;
  if (line.consumeIf("reduce ")) {
    ScalarReduction reduction;
    if (failed(line.parseWord(reduction.combine)))
      return failure();
    reduction.square = line.consumeIf("of squares");
    reduction.mean = line.consumeIf(", mean");
    reduction.sqrt = line.consumeIf(", sqrt");
    if (std::optional<double> init = getReductionIdentity(reduction.combine))
      reduction.init = *init;
    if (line.consumeIf("from") && failed(line.parseNumber(reduction.init)))
      return failure();
    if (failed(line.expect("over")) ||
        failed(line.parseIntegerList(reduction.axes)) ||
        failed(line.expect("of")))
      return failure();
    FailureOr<int> root = parseExpression(line, loop, loadOfTensor);
    if (failed(root) || failed(line.expect("in")) ||
        failed(line.parseIntegerList(loop.iterationShape)))
      return failure();
    loop.root = *root;
    loop.reduction = std::move(reduction);
  } else {
    FailureOr<int> root = parseExpression(line, loop, loadOfTensor);
    if (failed(root))
      return failure();
    loop.root = *root;
    loop.iterationShape = output.shape;
    if (line.consumeIf("blocked") && failed(line.parseInteger(loop.block)))
      return failure();
  }
  resolveTypes(loop, output.dtype);
  return success();
}

LogicalResult ProgramParser::parseStep(LineParser &line) {
  if (program.entries.empty())
    return line.error("a step before any entry");
  ProgramEntry &entry = program.entries.back();
  int64_t index = -1;
  if (failed(line.parseInteger(index)))
    return failure();
  if (index != static_cast<int64_t>(entry.steps.size()))
    return line.error("expected step " + Twine(entry.steps.size()) +
                      " of entry " + entry.name + " next");
  ProgramStep step;
  if (line.consumeIf("loop")) {
    step.loop.emplace();
    if (failed(parseLoop(line, *step.loop)))
      return failure();
  } else if (line.consumeIf("kernel")) {
    KernelCall &call = step.call.emplace();
    if (failed(line.parseWord(call.kernel)) ||
        failed(line.parseTensorList(call.inputs, /*allowNone=*/true)) ||
        failed(line.expect("->")) || failed(line.parseTensorList(call.outputs)))
      return failure();
    if (line.consumeIf("ints") && failed(line.parseIntegerList(call.ints)))
      return failure();
    if (line.consumeIf("floats") &&
        failed(line.parseList("[", "]", [&]() -> LogicalResult {
          double value = 0;
          if (failed(line.parseNumber(value)))
            return failure();
          call.floats.push_back(value);
          return success();
        })))
      return failure();
  } else {
    return line.error("expected 'loop' or 'kernel'");
  }
  // The comment: the ops the step implements, then the node in quotes.
  if (failed(line.expect("//")))
    return failure();
  StringRef &rest = line.remaining();
  size_t quote = rest.find('"');
  step.summary = rest.take_front(quote).trim(' ').str();
  rest = rest.drop_front(std::min(quote, rest.size()));
  if (!rest.empty() && failed(line.parseString(step.node)))
    return failure();
  entry.steps.push_back(std::move(step));
  return line.expectEnd();
}

FailureOr<DeviceProgram> ProgramParser::parse() {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef text = buffer->getBuffer();
  while (!text.empty()) {
    auto [lineText, next] = text.split('\n');
    text = next;
    LineParser line(sourceMgr, context, lineText.rtrim("\r"));
    if (line.atEnd() || line.startsWith("//"))
      continue;
    if (!sawHeader) {
      header = lineText.data();
      if (failed(parseHeader(line)))
        return failure();
      continue;
    }
    LogicalResult result = failure();
    if (line.consumeIf("tensor "))
      result = parseTensor(line);
    else if (line.consumeIf("weight "))
      result = parseWeight(line, /*writable=*/false);
    else if (line.consumeIf("writable weight "))
      result = parseWeight(line, /*writable=*/true);
    else if (line.consumeIf("stash "))
      result = parseStash(line);
    else if (line.consumeIf("entry "))
      result = parseEntry(line);
    else if (line.consumeIf("step "))
      result = parseStep(line);
    else
      result = line.error("expected a tensor, weight, stash, entry or step");
    if (failed(result))
      return failure();
  }
  if (!sawHeader)
    return emitProgramError(sourceMgr, context, buffer->getBufferStart(),
                            "expected 'program:' header");
  if (declaredEntries != static_cast<int64_t>(program.entries.size()))
    return emitProgramError(sourceMgr, context, header,
                            "the header declares " + Twine(declaredEntries) +
                                " entries; " + Twine(program.entries.size()) +
                                " follow");
  for (auto [entry, steps] : llvm::zip(program.entries, expectedSteps))
    if (steps != static_cast<int64_t>(entry.steps.size()))
      return emitProgramError(sourceMgr, context, header,
                              "entry " + entry.name + " declares " +
                                  Twine(steps) + " steps; " +
                                  Twine(entry.steps.size()) + " follow");
  if (llvm::Error error = verifyDeviceProgram(program))
    return emitProgramError(sourceMgr, context, header,
                            "invalid device program: " +
                                llvm::toString(std::move(error)));
  return std::move(program);
}

FailureOr<DeviceProgram> cleave::parseDeviceProgram(llvm::SourceMgr &sourceMgr,
                                                    MLIRContext *context) {
  return ProgramParser(sourceMgr, context).parse();
}
