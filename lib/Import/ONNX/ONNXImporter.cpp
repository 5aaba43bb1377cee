//===- ONNXImporter.cpp - ONNX model to cleave IR -------------------------===//
//
// The public entry points: reading and parsing the model file, the
// `--input-shape` syntax and the cleave-translate registrations.
//
//===----------------------------------------------------------------------===//

#include "cleave/Import/ONNX/ONNXImporter.h"

#include "FunctionInliner.h"
#include "GraphImporter.h"
#include "OpHandlers.h"
#include "WireFormat.h"

#include "cleave/Dialect/Cleave/IR/CleaveDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include "onnx/onnx_pb.h"
#include <google/protobuf/io/coded_stream.h>

#include "cleave/rt/Checked.h"

#include <climits>

using namespace mlir;

namespace cleave {

bool parseInputShapeOption(llvm::StringRef text, ONNXImportOptions &opts,
                           std::string &error) {
  // Input names may contain '='; dimensions never do.
  size_t separator = text.rfind('=');
  if (separator == llvm::StringRef::npos) {
    error = "expected NAME=DIMS (e.g. input_ids=1x128, or NAME= for a "
            "scalar)";
    return false;
  }
  llvm::StringRef name = text.take_front(separator);
  llvm::StringRef dims = text.drop_front(separator + 1);
  if (name.empty()) {
    error = "the input name is empty";
    return false;
  }
  llvm::SmallVector<int64_t> shape;
  if (!dims.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    dims.split(parts, 'x');
    for (llvm::StringRef part : parts) {
      int64_t dim;
      if (part.getAsInteger(10, dim) || dim < 0) {
        error = "dimension '" + part.str() +
                "' is not a non-negative integer (dimensions are separated "
                "by 'x', e.g. 2x32)";
        return false;
      }
      shape.push_back(dim);
    }
    int64_t elements, bytes;
    if (!rt::checkedTensorSize(shape, /*elementBytes=*/1, elements, bytes)) {
      error = "the shape " + dims.str() +
              " has more elements than cleave can address";
      return false;
    }
  }
  for (const auto &entry : opts.inputShapes) {
    if (entry.first == name) {
      error = "input '" + name.str() + "' is given more than once";
      return false;
    }
  }
  opts.inputShapes.emplace_back(name.str(), std::move(shape));
  return true;
}

/// Protobuf's default limit on nested messages, and the deeper one used only
/// to tell a deeply nested model from a damaged one.
constexpr int kProtobufDepth = 100;
constexpr int kDeepProtobufDepth = 4096;

static bool parseModel(llvm::StringRef bytes, int depth,
                       onnx::ModelProto &model) {
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(bytes.size()));
  input.SetRecursionLimit(depth);
  return model.ParseFromCodedStream(&input) && input.ConsumedEntireMessage();
}

OwningOpRef<ModuleOp> importONNXModel(llvm::MemoryBufferRef buffer,
                                      MLIRContext &context,
                                      const ONNXImportOptions &opts) {
  context.loadDialect<CleaveDialect, func::FuncDialect>();
  llvm::StringRef displayPath = buffer.getBufferIdentifier();
  Location loc = FileLineColLoc::get(&context, displayPath, 0, 0);
  if (displayPath == "<stdin>" || displayPath == "-") {
    emitError(loc) << "cannot import an ONNX model from standard input: "
                      "weights are referenced by their place in the model "
                      "file, so pass the file's path";
    return nullptr;
  }

  llvm::StringRef bytes = buffer.getBuffer();
  if (bytes.empty()) {
    emitError(loc) << "the file is empty; expected an ONNX model";
    return nullptr;
  }
  // Protobuf cannot parse messages of 2 GiB or more.
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    emitError(loc) << "the model file is larger than 2 GiB; store its "
                      "weights as ONNX external data";
    return nullptr;
  }
  onnx::ModelProto model;
  llvm::ArrayRef<uint8_t> data(reinterpret_cast<const uint8_t *>(bytes.data()),
                               bytes.size());
  FailureOr<onnx_import::ModelLayout> layout =
      onnx_import::scanModelLayout(data);
  if (!parseModel(bytes, kProtobufDepth, model) || failed(layout)) {
    // Nesting past protobuf's limit is told apart from damage: the same
    // bytes parse when more depth is allowed.
    onnx::ModelProto deeper;
    if (succeeded(layout) && parseModel(bytes, kDeepProtobufDepth, deeper))
      emitError(loc) << "the model nests messages more than " << kProtobufDepth
                     << " deep (subgraphs of If, Loop or Scan nested about "
                     << kProtobufDepth / 3
                     << " levels), more than protobuf reads";
    else
      emitError(loc) << "not a valid ONNX model: the protobuf encoding is "
                        "malformed or truncated";
    return nullptr;
  }

  llvm::SmallString<256> absolutePath(displayPath);
  if (std::error_code error = llvm::sys::fs::make_absolute(absolutePath)) {
    emitError(loc) << "cannot resolve the model's path: " << error.message();
    return nullptr;
  }
  llvm::sys::path::remove_dots(absolutePath, /*remove_dot_dot=*/true);
  if (failed(onnx_import::inlineLocalFunctions(model, *layout, loc)))
    return nullptr;
  onnx_import::GraphImporter importer(context, opts, absolutePath, displayPath,
                                      model, *layout);
  return importer.import();
}

OwningOpRef<ModuleOp> importONNXModel(llvm::StringRef path,
                                      MLIRContext &context,
                                      const ONNXImportOptions &opts) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(FileLineColLoc::get(&context, path, 0, 0))
        << "cannot open the ONNX model: " << buffer.getError().message();
    return nullptr;
  }
  return importONNXModel((*buffer)->getMemBufferRef(), context, opts);
}

void printSupportedONNXOps(llvm::raw_ostream &os) {
  onnx_import::OpHandlerTable().print(os);
}

void registerONNXImportTranslation() {
  // Translation options must outlive the registry, as upstream
  // translations' do; they are only read when the translation runs.
  static llvm::cl::list<std::string> inputShapes(
      "input-shape",
      llvm::cl::desc("--import-onnx: bind the shape of graph input NAME, "
                     "e.g. input_ids=1x128 (repeatable; NAME= is a scalar)"),
      llvm::cl::value_desc("NAME=DIMS"));
  static llvm::cl::opt<int64_t> maxInlineElements(
      "onnx-max-inline-elements",
      llvm::cl::desc("--import-onnx: initializers with at most this many "
                     "elements become constants, larger ones weights"),
      llvm::cl::init(ONNXImportOptions().maxInlineElements));
  static llvm::cl::opt<bool> floatWeights(
      "onnx-float-weights",
      llvm::cl::desc("--import-onnx: float initializers become weights "
                     "whatever their size (the parameters training updates)"),
      llvm::cl::init(false));
  static llvm::cl::opt<std::string> functionName(
      "onnx-function-name",
      llvm::cl::desc("--import-onnx: name of the imported function"),
      llvm::cl::init(ONNXImportOptions().functionName));

  TranslateToMLIRRegistration importRegistration(
      "import-onnx", "import an ONNX model into the cleave dialect",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
        ONNXImportOptions options;
        options.maxInlineElements = maxInlineElements;
        options.floatInitializersAsWeights = floatWeights;
        options.functionName = functionName;
        for (const std::string &text : inputShapes) {
          std::string error;
          if (!parseInputShapeOption(text, options, error)) {
            emitError(FileLineColLoc::get(context,
                                          buffer->getBufferIdentifier(), 0, 0))
                << "invalid --input-shape '" << text << "': " << error;
            return nullptr;
          }
        }
        return importONNXModel(buffer->getMemBufferRef(), *context, options);
      },
      [](DialectRegistry &registry) {
        registry.insert<CleaveDialect, func::FuncDialect>();
      });

  TranslateFromMLIRRegistration tableRegistration(
      "onnx-operator-table",
      "print the Markdown table of the ONNX operators --import-onnx "
      "supports (the input is ignored)",
      [](Operation *, llvm::raw_ostream &os) {
        printSupportedONNXOps(os);
        return success();
      },
      [](DialectRegistry &) {});
}

} // namespace cleave
