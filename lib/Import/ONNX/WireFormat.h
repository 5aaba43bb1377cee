//===- WireFormat.h - where tensor bytes lie in an ONNX file ----*- C++ -*-===//
//
// A scan of the protobuf wire format of a serialized ModelProto that finds
// the byte range of every tensor payload of the main graph, so that weights
// stored inside the .onnx file are referenced by offset instead of copied.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_LIB_IMPORT_ONNX_WIREFORMAT_H
#define CLEAVE_LIB_IMPORT_ONNX_WIREFORMAT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cleave::onnx_import {

/// A byte range of the model file.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// Where the payload fields of one TensorProto lie in the file. A field is
/// absent when the tensor does not use it, or when it occurs more than once
/// (its bytes are then not contiguous).
struct TensorPayloads {
  /// `name` (field 8), to check that the entry belongs to the parsed tensor
  /// it is matched with by index.
  std::string name;
  /// `raw_data` (field 9).
  std::optional<ByteRange> rawData;
  /// Packed `float_data` (field 4): little-endian f32, the layout of raw data.
  std::optional<ByteRange> floatData;
  /// Packed `double_data` (field 10): little-endian f64.
  std::optional<ByteRange> doubleData;
};

/// Payload locations of the main graph's tensors, indexed like the parsed
/// ModelProto (repeated fields keep their wire order).
struct ModelLayout {
  /// One entry per `GraphProto.initializer`.
  std::vector<TensorPayloads> initializers;
  /// Tensor-valued attributes (`AttributeProto.t`), keyed by (node index,
  /// attribute index).
  llvm::DenseMap<std::pair<unsigned, unsigned>, TensorPayloads>
      attributeTensors;
};

/// Scans the serialized ModelProto `bytes`. Fails when the wire format is
/// malformed.
llvm::FailureOr<ModelLayout> scanModelLayout(llvm::ArrayRef<uint8_t> bytes);

} // namespace cleave::onnx_import

#endif // CLEAVE_LIB_IMPORT_ONNX_WIREFORMAT_H
