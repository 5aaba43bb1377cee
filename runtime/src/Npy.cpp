//===- Npy.cpp - tensors in .npy and ONNX .pb files
//------------------------===//
//
// Both readers take the whole file into memory and check every length
// against the bytes present, so a truncated or foreign file is an Error
// naming it, never a crash. TensorProto is read with a small protobuf
// wire-format decoder: the runtime has no protobuf dependency.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "Files.h"
#include "cleave/rt/Checked.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace cleave::rt {

namespace {

std::string readWholeFile(const std::string &path) {
  // Inputs are tensors: as large as a device's memory, not unbounded.
  return readRegularFile(path, kMaxTensorBytes);
}

bool hostIsLittleEndian() {
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

constexpr char npyMagic[] = "\x93NUMPY";

/// NumPy's type code (without byte order) of each dtype.
struct NpyCode {
  CleaveDType dtype;
  const char *code;
};
constexpr NpyCode npyCodes[] = {
    {CLEAVE_F32, "f4"}, {CLEAVE_F16, "f2"}, {CLEAVE_F64, "f8"},
    {CLEAVE_I64, "i8"}, {CLEAVE_I32, "i4"}, {CLEAVE_I16, "i2"},
    {CLEAVE_I8, "i1"},  {CLEAVE_U8, "u1"},  {CLEAVE_U16, "u2"},
    {CLEAVE_U32, "u4"}, {CLEAVE_U64, "u8"}, {CLEAVE_BOOL, "b1"},
};

/// Finds `key` (single- or double-quoted) in a header dict; returns the
/// position just after its colon.
std::size_t findKey(const std::string &header, const std::string &key,
                    const std::string &path) {
  for (char quote : {'\'', '"'}) {
    std::string quoted = quote + key + quote;
    std::size_t at = header.find(quoted);
    if (at == std::string::npos)
      continue;
    std::size_t colon = header.find(':', at + quoted.size());
    if (colon != std::string::npos)
      return colon + 1;
  }
  throw Error(path + ": the .npy header has no '" + key + "'");
}

std::size_t skipSpaces(const std::string &text, std::size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t'))
    ++at;
  return at;
}

} // namespace

Tensor readNpy(const std::string &path) {
  return parseNpy(readWholeFile(path), path);
}

NpyHeader parseNpyHeader(const std::string &bytes, const std::string &path) {
  if (bytes.size() < 10 || bytes.compare(0, 6, npyMagic) != 0)
    throw Error(path + ": not a .npy file");
  int major = static_cast<uint8_t>(bytes[6]);
  std::size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<uint8_t>(bytes[8]) |
                   static_cast<std::size_t>(static_cast<uint8_t>(bytes[9]))
                       << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw Error(path + ": truncated .npy header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |=
          static_cast<std::size_t>(static_cast<uint8_t>(bytes[8 + i]))
          << (8 * i);
    headerStart = 12;
  } else {
    throw Error(path + ": .npy format version " + std::to_string(major) +
                " is not supported");
  }
  if (bytes.size() < headerStart + headerLength)
    throw Error(path + ": truncated .npy header");
  std::string header = bytes.substr(headerStart, headerLength);

  // descr: '<f4', '|b1', ...
  std::size_t at = skipSpaces(header, findKey(header, "descr", path));
  if (at >= header.size() || (header[at] != '\'' && header[at] != '"'))
    throw Error(path + ": the .npy dtype is not a simple type (structured "
                       "arrays are not tensors)");
  std::size_t end = header.find(header[at], at + 1);
  if (end == std::string::npos)
    throw Error(path + ": malformed .npy header");
  std::string descr = header.substr(at + 1, end - at - 1);
  if (descr.size() < 3)
    throw Error(path + ": unsupported .npy dtype '" + descr + "'");
  char order = descr[0];
  std::string code = descr.substr(1);
  CleaveDType dtype = CLEAVE_DTYPE_INVALID;
  for (const NpyCode &entry : npyCodes)
    if (code == entry.code)
      dtype = entry.dtype;
  if (dtype == CLEAVE_DTYPE_INVALID)
    throw Error(path + ": unsupported .npy dtype '" + descr + "'");
  bool big = order == '>' || (order == '=' && !hostIsLittleEndian());
  if (big && cleave_dtype_size(dtype) > 1)
    throw Error(path + ": big-endian data ('" + descr +
                "') is not supported; save it little-endian "
                "(array.astype(array.dtype.newbyteorder('<')))");

  at = skipSpaces(header, findKey(header, "fortran_order", path));
  if (header.compare(at, 4, "True") == 0)
    throw Error(path + ": Fortran-ordered data is not supported; save it in "
                       "C order (numpy.ascontiguousarray)");
  if (header.compare(at, 5, "False") != 0)
    throw Error(path + ": malformed .npy header (fortran_order)");

  at = skipSpaces(header, findKey(header, "shape", path));
  std::size_t close = header.find(')', at);
  if (at >= header.size() || header[at] != '(' || close == std::string::npos)
    throw Error(path + ": malformed .npy header (shape)");
  std::vector<int64_t> shape;
  std::stringstream dims(header.substr(at + 1, close - at - 1));
  std::string dim;
  while (std::getline(dims, dim, ',')) {
    std::size_t first = dim.find_first_not_of(" \t");
    if (first == std::string::npos)
      continue; // the trailing comma of a one-dimensional shape
    char *stop = nullptr;
    long long value = std::strtoll(dim.c_str() + first, &stop, 10);
    if (value < 0 || stop == dim.c_str() + first ||
        dim.find_first_not_of(" \tL", stop - dim.c_str()) != std::string::npos)
      throw Error(path + ": malformed .npy shape '" +
                  header.substr(at, close - at + 1) + "'");
    shape.push_back(value);
  }
  if (shape.size() > CLEAVE_MAX_RANK)
    throw Error(path + ": rank " + std::to_string(shape.size()) +
                " exceeds the runtime's " + std::to_string(CLEAVE_MAX_RANK));

  int64_t elements, byteCount;
  if (!checkedTensorSize(shape, cleave_dtype_size(dtype), elements, byteCount))
    throw Error(path + ": " + typeString(dtype, shape) +
                " has more bytes than cleave can address");
  NpyHeader result;
  result.dtype = dtype;
  result.shape = std::move(shape);
  result.dataOffset = headerStart + headerLength;
  result.dataBytes = byteCount;
  return result;
}

Tensor parseNpy(const std::string &bytes, const std::string &path) {
  NpyHeader header = parseNpyHeader(bytes, path);
  std::size_t dataStart = header.dataOffset;
  if (bytes.size() - dataStart < static_cast<std::size_t>(header.dataBytes))
    throw Error(path +
                ": truncated: " + typeString(header.dtype, header.shape) +
                " needs " + std::to_string(header.dataBytes) +
                " bytes of data, the file holds " +
                std::to_string(bytes.size() - dataStart));
  Tensor tensor(header.dtype, header.shape);
  if (tensor.byteSize())
    std::memcpy(tensor.data(), bytes.data() + dataStart, tensor.byteSize());
  return tensor;
}

void writeNpy(const std::string &path, const Tensor &tensor) {
  const Tensor *source = &tensor;
  Tensor widened;
  if (tensor.dtype() == CLEAVE_BF16) {
    widened = Tensor(CLEAVE_F32, tensor.shape());
    const uint16_t *from = tensor.data<uint16_t>();
    uint32_t *to = widened.data<uint32_t>();
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      to[i] = static_cast<uint32_t>(from[i]) << 16;
    source = &widened;
  }
  const char *code = nullptr;
  for (const NpyCode &entry : npyCodes)
    if (entry.dtype == source->dtype())
      code = entry.code;
  if (!code)
    throw Error(path + ": cannot write a tensor of dtype " +
                dtypeName(source->dtype()));

  std::string shape = "(";
  for (int64_t dim : source->shape())
    shape += std::to_string(dim) + ", ";
  if (source->shape().size() == 1)
    shape.resize(shape.size() - 1); // "(5,)"
  else if (!source->shape().empty())
    shape.resize(shape.size() - 2);
  shape += ")";
  std::string header = std::string("{'descr': '") +
                       (cleave_dtype_size(source->dtype()) == 1 ? '|' : '<') +
                       code + "', 'fortran_order': False, 'shape': " + shape +
                       ", }";
  // NumPy pads the header with spaces and a newline so that the data starts
  // on a 64-byte boundary.
  std::size_t prefix = 10;
  std::size_t total = prefix + header.size() + 1;
  bool version2 = (total + 63) / 64 * 64 - prefix > 65535;
  if (version2)
    prefix = 12;
  total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::string out(npyMagic, 6);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  std::size_t length = header.size();
  for (std::size_t i = 0; i < prefix - 8; ++i)
    out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += header;
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(out.data(), static_cast<std::streamsize>(out.size()));
  stream.write(static_cast<const char *>(source->data()),
               static_cast<std::streamsize>(source->byteSize()));
  if (!stream)
    throw Error(path + ": cannot write (" + std::strerror(errno) + ")");
}

//===----------------------------------------------------------------------===//
// ONNX TensorProto
//===----------------------------------------------------------------------===//

namespace {

/// onnx.TensorProto.DataType codes and the dtypes they map to.
struct OnnxType {
  int code;
  CleaveDType dtype;
};
constexpr OnnxType onnxTypes[] = {
    {1, CLEAVE_F32},   {2, CLEAVE_U8},   {3, CLEAVE_I8},   {4, CLEAVE_U16},
    {5, CLEAVE_I16},   {6, CLEAVE_I32},  {7, CLEAVE_I64},  {9, CLEAVE_BOOL},
    {10, CLEAVE_F16},  {11, CLEAVE_F64}, {12, CLEAVE_U32}, {13, CLEAVE_U64},
    {16, CLEAVE_BF16},
};

/// The fields of TensorProto the runtime reads.
enum TensorField {
  dimsField = 1,
  dataTypeField = 2,
  floatDataField = 4,
  int32DataField = 5,
  int64DataField = 7,
  nameField = 8,
  rawDataField = 9,
  doubleDataField = 10,
  uint64DataField = 11,
  dataLocationField = 14,
};

enum WireType {
  varintWire = 0,
  fixed64Wire = 1,
  lengthWire = 2,
  fixed32Wire = 5
};

class WireReader {
public:
  WireReader(const std::string &bytes, const std::string &path)
      : data(reinterpret_cast<const uint8_t *>(bytes.data())),
        end(data + bytes.size()), path(path) {}
  WireReader(const uint8_t *begin, const uint8_t *end, const std::string &path)
      : data(begin), end(end), path(path) {}

  bool atEnd() const { return data == end; }

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (data == end)
        truncated();
      uint8_t byte = *data++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
    throw Error(path + ": malformed TensorProto (a varint is too long)");
  }
  template <typename T> T fixed() {
    if (static_cast<std::size_t>(end - data) < sizeof(T))
      truncated();
    T value;
    std::memcpy(&value, data, sizeof(T));
    data += sizeof(T);
    return value;
  }
  /// The bytes of a length-delimited field.
  std::pair<const uint8_t *, const uint8_t *> bytes() {
    uint64_t length = varint();
    if (length > static_cast<uint64_t>(end - data))
      truncated();
    const uint8_t *begin = data;
    data += length;
    return {begin, data};
  }
  void skip(int wire) {
    switch (wire) {
    case varintWire:
      varint();
      return;
    case fixed64Wire:
      fixed<uint64_t>();
      return;
    case lengthWire:
      bytes();
      return;
    case fixed32Wire:
      fixed<uint32_t>();
      return;
    default:
      throw Error(path + ": malformed TensorProto (wire type " +
                  std::to_string(wire) + ")");
    }
  }

  /// A repeated scalar field, packed (length-delimited) or not.
  template <typename T, typename Read>
  void repeated(int wire, int expected, std::vector<T> &values, Read read) {
    if (wire == lengthWire) {
      auto [begin, stop] = bytes();
      WireReader packed(begin, stop, path);
      while (!packed.atEnd())
        values.push_back(read(packed));
      return;
    }
    if (wire != expected)
      throw Error(path + ": malformed TensorProto (wire type " +
                  std::to_string(wire) + " for a repeated field)");
    values.push_back(read(*this));
  }

private:
  [[noreturn]] void truncated() const {
    throw Error(path + ": truncated or not a TensorProto");
  }
  const uint8_t *data;
  const uint8_t *end;
  const std::string &path;
};

template <typename To, typename From>
void narrow(const std::vector<From> &values, void *destination) {
  To *out = static_cast<To *>(destination);
  for (std::size_t i = 0; i < values.size(); ++i)
    out[i] = static_cast<To>(values[i]);
}

} // namespace

Tensor readTensorProto(const std::string &path, std::string *name) {
  return parseTensorProto(readWholeFile(path), path, name);
}

Tensor parseTensorProto(const std::string &bytes, const std::string &path,
                        std::string *name) {
  WireReader reader(bytes, path);
  std::vector<int64_t> dims;
  int64_t dataType = 0;
  std::vector<float> floats;
  std::vector<int64_t> int32s, int64s; // int32_data widened as read
  std::vector<double> doubles;
  std::vector<uint64_t> uint64s;
  std::string raw;
  bool hasRaw = false;
  std::string tensorName;

  auto readVarint = [](WireReader &r) { return r.varint(); };
  while (!reader.atEnd()) {
    uint64_t key = reader.varint();
    int field = static_cast<int>(key >> 3);
    int wire = static_cast<int>(key & 7);
    switch (field) {
    case dimsField: {
      std::vector<uint64_t> values;
      reader.repeated(wire, varintWire, values, readVarint);
      for (uint64_t value : values)
        dims.push_back(static_cast<int64_t>(value));
      break;
    }
    case dataTypeField:
      dataType = static_cast<int64_t>(reader.varint());
      break;
    case floatDataField:
      reader.repeated(wire, fixed32Wire, floats,
                      [](WireReader &r) { return r.fixed<float>(); });
      break;
    case int32DataField:
      reader.repeated(wire, varintWire, int32s, [](WireReader &r) {
        return static_cast<int64_t>(static_cast<int32_t>(r.varint()));
      });
      break;
    case int64DataField:
      reader.repeated(wire, varintWire, int64s, [](WireReader &r) {
        return static_cast<int64_t>(r.varint());
      });
      break;
    case doubleDataField:
      reader.repeated(wire, fixed64Wire, doubles,
                      [](WireReader &r) { return r.fixed<double>(); });
      break;
    case uint64DataField:
      reader.repeated(wire, varintWire, uint64s, readVarint);
      break;
    case nameField:
    case rawDataField: {
      if (wire != lengthWire)
        throw Error(path + ": malformed TensorProto");
      auto [begin, stop] = reader.bytes();
      std::string value(reinterpret_cast<const char *>(begin), stop - begin);
      if (field == nameField) {
        tensorName = std::move(value);
      } else {
        raw = std::move(value);
        hasRaw = true;
      }
      break;
    }
    case dataLocationField:
      if (reader.varint() == 1)
        throw Error(path + ": the tensor's data is external; store it in the "
                           "file (onnx.numpy_helper.from_array)");
      break;
    default:
      reader.skip(wire);
    }
  }

  CleaveDType dtype = CLEAVE_DTYPE_INVALID;
  for (const OnnxType &entry : onnxTypes)
    if (entry.code == dataType)
      dtype = entry.dtype;
  if (dtype == CLEAVE_DTYPE_INVALID)
    throw Error(path + ": ONNX data type " + std::to_string(dataType) +
                " is not supported");
  for (int64_t dim : dims)
    if (dim < 0)
      throw Error(path + ": negative dimension in the TensorProto");
  if (dims.size() > CLEAVE_MAX_RANK)
    throw Error(path + ": rank " + std::to_string(dims.size()) +
                " exceeds the runtime's " + std::to_string(CLEAVE_MAX_RANK));
  if (!hostIsLittleEndian())
    throw Error(path + ": reading TensorProto needs a little-endian host");

  // Check the data against the shape before allocating: a few bytes of
  // file can declare a shape of terabytes.
  int64_t elements, byteCount;
  if (!checkedTensorSize(dims, cleave_dtype_size(dtype), elements, byteCount))
    throw Error(path + ": " + typeString(dtype, dims) +
                " has more bytes than cleave can address");
  if (hasRaw && raw.size() != static_cast<std::size_t>(byteCount))
    throw Error(path + ": " + typeString(dtype, dims) + " needs " +
                std::to_string(byteCount) + " bytes, but raw_data has " +
                std::to_string(raw.size()));
  if (!hasRaw) {
    // The field each dtype's values are stored in.
    auto [present, field] = [&]() -> std::pair<std::size_t, const char *> {
      switch (dtype) {
      case CLEAVE_F32:
        return {floats.size(), "float_data"};
      case CLEAVE_F64:
        return {doubles.size(), "double_data"};
      case CLEAVE_I64:
        return {int64s.size(), "int64_data"};
      case CLEAVE_U32:
      case CLEAVE_U64:
        return {uint64s.size(), "uint64_data"};
      default:
        return {int32s.size(), "int32_data"};
      }
    }();
    if (present != static_cast<std::size_t>(elements))
      throw Error(path + ": " + typeString(dtype, dims) + " holds " +
                  std::to_string(elements) + " elements, but " + field +
                  " has " + std::to_string(present));
  }

  Tensor tensor(dtype, dims);
  if (hasRaw) {
    if (!raw.empty())
      std::memcpy(tensor.data(), raw.data(), raw.size());
  } else {
    switch (dtype) {
    case CLEAVE_F32:
      narrow<float>(floats, tensor.data());
      break;
    case CLEAVE_F64:
      narrow<double>(doubles, tensor.data());
      break;
    case CLEAVE_I64:
      narrow<int64_t>(int64s, tensor.data());
      break;
    case CLEAVE_U32:
      narrow<uint32_t>(uint64s, tensor.data());
      break;
    case CLEAVE_U64:
      narrow<uint64_t>(uint64s, tensor.data());
      break;
    case CLEAVE_I32:
      narrow<int32_t>(int32s, tensor.data());
      break;
    case CLEAVE_I16:
      narrow<int16_t>(int32s, tensor.data());
      break;
    case CLEAVE_I8:
      narrow<int8_t>(int32s, tensor.data());
      break;
    case CLEAVE_U16:
    case CLEAVE_F16: // bit patterns
    case CLEAVE_BF16:
      narrow<uint16_t>(int32s, tensor.data());
      break;
    case CLEAVE_U8:
    case CLEAVE_BOOL:
      narrow<uint8_t>(int32s, tensor.data());
      break;
    default:
      break;
    }
  }
  if (name)
    *name = tensorName;
  return tensor;
}

Tensor readTensorFile(const std::string &path, std::string *name) {
  auto endsWith = [&](const char *suffix) {
    std::size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  if (endsWith(".npy"))
    return readNpy(path);
  if (endsWith(".pb"))
    return readTensorProto(path, name);
  throw Error(path + ": unknown tensor file type (expected .npy or .pb)");
}

} // namespace cleave::rt
