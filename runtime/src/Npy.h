//===- Npy.h - tensors in .npy and ONNX .pb files ----------------*- C++
//-*-===//
//
// The file formats `cleave run` reads inputs from and writes outputs to:
// NumPy's .npy (little-endian, C order) and ONNX TensorProto .pb, the
// format of the ONNX backend test data.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_NPY_H
#define CLEAVE_RT_SRC_NPY_H

#include "cleave/rt/Runtime.h"

#include <string>
#include <vector>

namespace cleave::rt {

Tensor readNpy(const std::string &path);
/// What a .npy header says: the dtype and shape of its array, and where its
/// data starts in the file and how many bytes it takes.
struct NpyHeader {
  CleaveDType dtype = CLEAVE_DTYPE_INVALID;
  std::vector<int64_t> shape;
  std::size_t dataOffset = 0;
  int64_t dataBytes = 0;
};
/// Reads the header of a .npy file from its first bytes (all of the header,
/// which NumPy pads to a multiple of 64 bytes); `path` names it in errors.
NpyHeader parseNpyHeader(const std::string &bytes, const std::string &path);
/// Reads the bytes of a .npy file; `path` names it in errors.
Tensor parseNpy(const std::string &bytes, const std::string &path);
/// Writes a version 1.0 file (2.0 when the header needs it). NumPy has no
/// bfloat16, so a bfloat16 tensor is written widened to float32, exactly.
void writeNpy(const std::string &path, const Tensor &tensor);

/// Reads a serialised onnx.TensorProto; `name` receives its name field.
Tensor readTensorProto(const std::string &path, std::string *name = nullptr);
/// Reads the bytes of a serialised onnx.TensorProto; `path` names it in
/// errors.
Tensor parseTensorProto(const std::string &bytes, const std::string &path,
                        std::string *name = nullptr);

/// .npy or .pb, by the file's extension.
Tensor readTensorFile(const std::string &path, std::string *name = nullptr);

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_NPY_H
