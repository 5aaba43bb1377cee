//===- Files.h - opening the files a bundle and its inputs name -*- C++ -*-===//
//
// Every file the runtime reads because a manifest or a command line names it
// is opened here: as a regular file only (a FIFO, a device such as
// /dev/zero behind a symlink, or a directory is refused instead of blocking
// or reading forever), with its size taken from the open descriptor.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_FILES_H
#define CLEAVE_RT_SRC_FILES_H

#include <cstdint>
#include <string>

namespace cleave::rt {

/// An open regular file and its size; closes on destruction.
class RegularFile {
public:
  /// Opens `path` for reading; throws Error naming the path when it cannot
  /// be opened (`whenMissing` says why when it does not exist) or is not a
  /// regular file.
  explicit RegularFile(const std::string &path,
                       const char *whenMissing = "no such file");
  ~RegularFile();
  RegularFile(const RegularFile &) = delete;
  RegularFile &operator=(const RegularFile &) = delete;

  int descriptor() const { return fd; }
  std::int64_t size() const { return bytes; }

private:
  int fd = -1;
  std::int64_t bytes = 0;
};

/// The whole of regular file `path`, of at most `limit` bytes.
std::string readRegularFile(const std::string &path,
                            std::int64_t limit = std::int64_t(1) << 32);

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_FILES_H
