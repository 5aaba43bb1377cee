//===- TrainedModel.cpp - an ONNX model with trained weights --------------===//

#include "cleave/Import/ONNX/TrainedModel.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"
#include <google/protobuf/io/coded_stream.h>

using namespace cleave;

namespace {

/// An ONNX element type with its NumPy name and size.
struct ElementType {
  int32_t onnx;
  const char *numpy;
  uint64_t bytes;
};

constexpr ElementType elementTypes[] = {
    {onnx::TensorProto::FLOAT, "float32", 4},
    {onnx::TensorProto::DOUBLE, "float64", 8},
    {onnx::TensorProto::FLOAT16, "float16", 2},
    {onnx::TensorProto::BFLOAT16, "bfloat16", 2},
    {onnx::TensorProto::INT64, "int64", 8},
    {onnx::TensorProto::INT32, "int32", 4},
    {onnx::TensorProto::INT16, "int16", 2},
    {onnx::TensorProto::INT8, "int8", 1},
    {onnx::TensorProto::UINT64, "uint64", 8},
    {onnx::TensorProto::UINT32, "uint32", 4},
    {onnx::TensorProto::UINT16, "uint16", 2},
    {onnx::TensorProto::UINT8, "uint8", 1},
    {onnx::TensorProto::BOOL, "bool", 1},
};

const ElementType *findElementType(int32_t onnxType) {
  for (const ElementType &type : elementTypes)
    if (type.onnx == onnxType)
      return &type;
  return nullptr;
}

std::string typeText(llvm::StringRef dtype, llvm::ArrayRef<int64_t> shape) {
  std::string text = dtype.str() + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Reads the model; a model of several gigabytes keeps its weights outside.
llvm::Error readModel(llvm::StringRef path, onnx::ModelProto &model) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(path + ": cannot read: " + buffer.getError().message());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() > static_cast<size_t>(INT32_MAX))
    return fail(path + ": larger than the 2 GiB protobuf reads");
  google::protobuf::io::CodedInputStream input(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(bytes.size()));
  if (!model.ParseFromCodedStream(&input) || !input.ConsumedEntireMessage())
    return fail(path + ": not an ONNX model (the protobuf does not parse)");
  return llvm::Error::success();
}

/// The bytes of an initializer the source model keeps as external data.
llvm::Expected<std::string> readExternal(llvm::StringRef modelPath,
                                         const onnx::TensorProto &tensor,
                                         uint64_t byteSize) {
  std::string location;
  uint64_t offset = 0;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" &&
             llvm::StringRef(entry.value()).getAsInteger(10, offset))
      return fail(modelPath + ": initializer '" + tensor.name() +
                  "' has a bad external data offset");
  }
  if (location.empty() || llvm::sys::path::is_absolute(location))
    return fail(modelPath + ": initializer '" + tensor.name() +
                "' has no external data location relative to the model");
  llvm::SmallString<256> path = llvm::sys::path::parent_path(modelPath);
  llvm::sys::path::append(path, location);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileSlice(path, byteSize, offset);
  if (!buffer || (*buffer)->getBufferSize() != byteSize)
    return fail(path + ": cannot read the " + llvm::Twine(byteSize) +
                " bytes of initializer '" + tensor.name() + "' at offset " +
                llvm::Twine(offset));
  return (*buffer)->getBuffer().str();
}

/// Sets an initializer's bytes: inline, or appended to the data file.
class InitializerWriter {
public:
  InitializerWriter(std::string dataName, llvm::raw_ostream &data,
                    uint64_t threshold)
      : dataName(std::move(dataName)), data(data), threshold(threshold) {}

  void set(onnx::TensorProto &tensor, const std::string &bytes) {
    tensor.clear_float_data();
    tensor.clear_double_data();
    tensor.clear_int32_data();
    tensor.clear_int64_data();
    tensor.clear_uint64_data();
    tensor.clear_raw_data();
    tensor.clear_external_data();
    if (bytes.size() < threshold) {
      tensor.set_data_location(onnx::TensorProto::DEFAULT);
      tensor.set_raw_data(bytes);
      return;
    }
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *key, const std::string &value) {
      onnx::StringStringEntryProto *entry = tensor.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", dataName);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes.size()));
    data.write(bytes.data(), bytes.size());
    offset += bytes.size();
  }
  bool wroteAny() const { return offset > 0; }

private:
  std::string dataName;
  llvm::raw_ostream &data;
  uint64_t threshold;
  uint64_t offset = 0;
};

/// A file written under a temporary name beside its final one.
std::string temporaryName(llvm::StringRef path) {
  return (path + ".tmp-" + llvm::Twine(llvm::sys::Process::getProcessId()))
      .str();
}

} // namespace

llvm::Error cleave::writeModelWithInitializers(
    llvm::StringRef modelPath, llvm::StringRef outputPath,
    const std::map<std::string, InitializerValue> &values,
    const TrainedModelOptions &options) {
  onnx::ModelProto model;
  if (llvm::Error error = readModel(modelPath, model))
    return error;
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringMap<onnx::TensorProto *> initializers;
  for (onnx::TensorProto &tensor : *graph->mutable_initializer())
    initializers[tensor.name()] = &tensor;

  // Every value must fit the initializer it replaces.
  for (const auto &[name, value] : values) {
    auto found = initializers.find(name);
    if (found == initializers.end())
      return fail(modelPath + ": has no initializer '" + name +
                  "', a trained parameter of the checkpoint; is it the model "
                  "the bundle was compiled from?");
    const onnx::TensorProto &tensor = *found->second;
    const ElementType *type = findElementType(tensor.data_type());
    std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
    if (!type || value.dtype != type->numpy || dims != value.shape)
      return fail(modelPath + ": initializer '" + name + "' is " +
                  typeText(type ? type->numpy : "an unsupported type", dims) +
                  ", but the checkpoint's parameter is " +
                  typeText(value.dtype, value.shape));
  }

  llvm::StringRef outputDir = llvm::sys::path::parent_path(outputPath);
  if (!outputDir.empty())
    if (std::error_code error = llvm::sys::fs::create_directories(outputDir))
      return fail(outputDir + ": cannot create: " + error.message());
  if (!outputDir.empty() && !llvm::sys::fs::is_directory(outputDir))
    return fail(outputDir + ": not a directory, so " + outputPath +
                " cannot be written");
  llvm::SmallString<256> dataPath(outputPath);
  dataPath += ".data";
  std::string dataName = llvm::sys::path::filename(dataPath).str();
  std::string dataTemporary = temporaryName(dataPath);
  std::error_code code;
  auto data = std::make_unique<llvm::raw_fd_ostream>(dataTemporary, code);
  if (code)
    return fail(dataPath + ": cannot write: " + code.message());
  InitializerWriter writer(dataName, *data, options.externalThreshold);
  for (onnx::TensorProto &tensor : *graph->mutable_initializer()) {
    auto value = values.find(tensor.name());
    if (value != values.end()) {
      writer.set(tensor, value->second.bytes);
      continue;
    }
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    // The source's external files stay behind: their bytes move along.
    const ElementType *type = findElementType(tensor.data_type());
    uint64_t byteSize = type ? type->bytes : 0;
    for (int64_t dim : tensor.dims())
      byteSize *= static_cast<uint64_t>(dim);
    if (!type) {
      llvm::sys::fs::remove(dataTemporary);
      return fail(modelPath + ": initializer '" + tensor.name() +
                  "' is external data of a type cleave does not copy");
    }
    llvm::Expected<std::string> bytes =
        readExternal(modelPath, tensor, byteSize);
    if (!bytes) {
      llvm::sys::fs::remove(dataTemporary);
      return bytes.takeError();
    }
    writer.set(tensor, *bytes);
  }
  data->close();
  if (data->has_error()) {
    std::string message = data->error().message();
    data->clear_error();
    llvm::sys::fs::remove(dataTemporary);
    return fail(dataPath + ": cannot write: " + message);
  }

  std::string serialized;
  if (!model.SerializeToString(&serialized)) {
    llvm::sys::fs::remove(dataTemporary);
    return fail(outputPath + ": the model does not serialize (over 2 GiB "
                             "without its external data?)");
  }
  std::string modelTemporary = temporaryName(outputPath);
  {
    llvm::raw_fd_ostream out(modelTemporary, code);
    if (!code) {
      out << serialized;
      out.close();
      if (out.has_error()) {
        code = out.error();
        out.clear_error();
      }
    }
  }
  if (code) {
    llvm::sys::fs::remove(dataTemporary);
    llvm::sys::fs::remove(modelTemporary);
    return fail(outputPath + ": cannot write: " + code.message());
  }
  if (writer.wroteAny()) {
    if (std::error_code error = llvm::sys::fs::rename(dataTemporary, dataPath))
      return fail(dataPath + ": cannot write: " + error.message());
  } else {
    llvm::sys::fs::remove(dataTemporary);
  }
  if (std::error_code error = llvm::sys::fs::rename(modelTemporary, outputPath))
    return fail(outputPath + ": cannot write: " + error.message());
  return llvm::Error::success();
}
