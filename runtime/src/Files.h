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

#include <cstddef>
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

/// The whole of `file` (opened from `path`, non-empty), mapped read-only;
/// throws Error naming `path` when it cannot be mapped. Unmap with munmap
/// and `file.size()` bytes.
void *mapReadOnly(const RegularFile &file, const std::string &path);

/// The whole of regular file `path`, of at most `limit` bytes.
std::string readRegularFile(const std::string &path,
                            std::int64_t limit = std::int64_t(1) << 32);

/// A new file written for keeps: created (never over an existing one),
/// written in pieces and, on `commit`, flushed to the disk and closed. A
/// file not committed is removed.
class DurableFile {
public:
  /// Throws Error naming `path` when it cannot be created.
  explicit DurableFile(const std::string &path);
  ~DurableFile();
  DurableFile(const DurableFile &) = delete;
  DurableFile &operator=(const DurableFile &) = delete;

  void write(const void *data, std::size_t bytes);
  void commit();

private:
  std::string path;
  int fd = -1;
};

/// Flushes a directory's entries (files created or renamed in it) to the
/// disk; throws Error naming it on failure.
void syncDirectory(const std::string &path);

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_FILES_H
