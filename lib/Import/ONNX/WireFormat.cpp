//===- WireFormat.cpp - where tensor bytes lie in an ONNX file ------------===//
//
// Walks just enough of the protobuf encoding (varint tags, length-delimited
// submessages) to find tensor payloads; every other field is skipped without
// being decoded.
//
//===----------------------------------------------------------------------===//

#include "WireFormat.h"

using namespace llvm;

namespace cleave::onnx_import {
namespace {

// Field numbers from onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphNode = 1;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kNodeAttribute = 5;
constexpr uint32_t kAttributeTensor = 5;
constexpr uint32_t kTensorFloatData = 4;
constexpr uint32_t kTensorName = 8;
constexpr uint32_t kTensorRawData = 9;
constexpr uint32_t kTensorDoubleData = 10;

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

/// A cursor over one message's bytes. Offsets are relative to the start of
/// the file so that payload ranges can be reported directly.
class MessageReader {
public:
  MessageReader(ArrayRef<uint8_t> file, uint64_t begin, uint64_t end)
      : file(file), pos(begin), end(end) {}

  bool atEnd() const { return pos >= end; }

  /// Reads the next field's tag. For length-delimited fields, `payload` is
  /// the range of the field's contents and the cursor moves past them.
  LogicalResult next(uint32_t &field, uint32_t &wireType, ByteRange &payload) {
    uint64_t tag;
    if (failed(readVarint(tag)))
      return failure();
    field = static_cast<uint32_t>(tag >> 3);
    wireType = static_cast<uint32_t>(tag & 7);
    if (field == 0)
      return failure();
    switch (wireType) {
    case kVarint: {
      uint64_t ignored;
      return readVarint(ignored);
    }
    case kFixed64:
      return advance(8);
    case kFixed32:
      return advance(4);
    case kLengthDelimited: {
      uint64_t length;
      if (failed(readVarint(length)) || length > end - pos)
        return failure();
      payload = {pos, length};
      pos += length;
      return success();
    }
    case kStartGroup:
      // onnx.proto has no groups, but the parser keeps unknown ones.
      return skipGroup(field);
    default:
      return failure();
    }
  }

private:
  LogicalResult readVarint(uint64_t &value) {
    value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos >= end)
        return failure();
      uint8_t byte = file[pos++];
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return success();
    }
    return failure();
  }

  /// Skips the fields of a group up to its end tag.
  LogicalResult skipGroup(uint32_t groupField) {
    while (pos < end) {
      // Peek at the tag: an end-group tag closes this group.
      uint64_t savedPos = pos, tag;
      if (failed(readVarint(tag)))
        return failure();
      if ((tag & 7) == kEndGroup)
        return success((tag >> 3) == groupField);
      pos = savedPos;
      uint32_t field, wireType;
      ByteRange ignored;
      if (failed(next(field, wireType, ignored)))
        return failure();
    }
    return failure();
  }

  LogicalResult advance(uint64_t count) {
    if (count > end - pos)
      return failure();
    pos += count;
    return success();
  }

  ArrayRef<uint8_t> file;
  uint64_t pos;
  uint64_t end;
};

/// Records `range` in `slot`, or clears the slot when the field repeats: a
/// repeated occurrence is concatenated (packed fields) or replaces the first
/// (bytes), and neither leaves one contiguous range we could trust.
void recordOnce(std::optional<ByteRange> &slot, bool &seen, ByteRange range) {
  slot = seen ? std::nullopt : std::optional<ByteRange>(range);
  seen = true;
}

LogicalResult scanTensor(ArrayRef<uint8_t> file, ByteRange message,
                         TensorPayloads &payloads) {
  MessageReader reader(file, message.offset, message.offset + message.length);
  bool seenRaw = false, seenFloat = false, seenDouble = false;
  while (!reader.atEnd()) {
    uint32_t field, wireType;
    ByteRange payload;
    if (failed(reader.next(field, wireType, payload)))
      return failure();
    if (wireType != kLengthDelimited)
      continue;
    if (field == kTensorName)
      payloads.name.assign(
          reinterpret_cast<const char *>(&file[payload.offset]),
          payload.length);
    else if (field == kTensorRawData)
      recordOnce(payloads.rawData, seenRaw, payload);
    else if (field == kTensorFloatData)
      recordOnce(payloads.floatData, seenFloat, payload);
    else if (field == kTensorDoubleData)
      recordOnce(payloads.doubleData, seenDouble, payload);
  }
  return success();
}

LogicalResult scanNode(ArrayRef<uint8_t> file, ByteRange message,
                       unsigned nodeIndex, ModelLayout &layout) {
  MessageReader reader(file, message.offset, message.offset + message.length);
  unsigned attributeIndex = 0;
  while (!reader.atEnd()) {
    uint32_t field, wireType;
    ByteRange payload;
    if (failed(reader.next(field, wireType, payload)))
      return failure();
    if (field != kNodeAttribute || wireType != kLengthDelimited)
      continue;
    MessageReader attribute(file, payload.offset,
                            payload.offset + payload.length);
    while (!attribute.atEnd()) {
      uint32_t attrField, attrWireType;
      ByteRange tensor;
      if (failed(attribute.next(attrField, attrWireType, tensor)))
        return failure();
      if (attrField != kAttributeTensor || attrWireType != kLengthDelimited)
        continue;
      TensorPayloads payloads;
      if (failed(scanTensor(file, tensor, payloads)))
        return failure();
      layout.attributeTensors[{nodeIndex, attributeIndex}] = payloads;
    }
    ++attributeIndex;
  }
  return success();
}

LogicalResult scanGraph(ArrayRef<uint8_t> file, ByteRange message,
                        ModelLayout &layout, unsigned &nodeIndex) {
  MessageReader reader(file, message.offset, message.offset + message.length);
  while (!reader.atEnd()) {
    uint32_t field, wireType;
    ByteRange payload;
    if (failed(reader.next(field, wireType, payload)))
      return failure();
    if (wireType != kLengthDelimited)
      continue;
    if (field == kGraphInitializer) {
      TensorPayloads payloads;
      if (failed(scanTensor(file, payload, payloads)))
        return failure();
      layout.initializers.push_back(payloads);
    } else if (field == kGraphNode) {
      if (failed(scanNode(file, payload, nodeIndex++, layout)))
        return failure();
    }
  }
  return success();
}

} // namespace

FailureOr<ModelLayout> scanModelLayout(ArrayRef<uint8_t> bytes) {
  ModelLayout layout;
  MessageReader reader(bytes, 0, bytes.size());
  // A graph field that occurs twice is merged by the parser: its repeated
  // fields are concatenated, which continuing the indices reproduces.
  unsigned nodeIndex = 0;
  while (!reader.atEnd()) {
    uint32_t field, wireType;
    ByteRange payload;
    if (failed(reader.next(field, wireType, payload)))
      return failure();
    if (field == kModelGraph && wireType == kLengthDelimited &&
        failed(scanGraph(bytes, payload, layout, nodeIndex)))
      return failure();
  }
  return layout;
}

} // namespace cleave::onnx_import
