//===- Files.cpp - opening the files a bundle and its inputs name ---------===//

#include "Files.h"

#include "cleave/rt/Runtime.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace cleave::rt {

RegularFile::RegularFile(const std::string &path, const char *whenMissing) {
  // Non-blocking, so that opening a FIFO returns at once; the flag is
  // dropped once the file is known to be regular.
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw Error(path + ": " +
                (errno == ENOENT ? std::string(whenMissing)
                                 : std::string(std::strerror(errno))));
  struct stat status;
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    std::string reason = S_ISDIR(status.st_mode) ? "is a directory"
                                                 : "is not a regular file";
    ::close(fd);
    throw Error(path + ": " + reason);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  bytes = status.st_size;
}

RegularFile::~RegularFile() {
  if (fd >= 0)
    ::close(fd);
}

std::string readRegularFile(const std::string &path, std::int64_t limit) {
  RegularFile file(path);
  if (file.size() > limit)
    throw Error(path + ": " + std::to_string(file.size()) +
                " bytes, more than the " + std::to_string(limit) +
                " this file may have");
  std::string text(static_cast<std::size_t>(file.size()), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t got = ::read(file.descriptor(), text.data() + done,
                         text.size() - done);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      throw Error(path + ": " + std::strerror(errno));
    if (got == 0)
      break;
    done += static_cast<std::size_t>(got);
  }
  // A file that shrank while it was read.
  text.resize(done);
  return text;
}

DurableFile::DurableFile(const std::string &path) : path(path) {
  fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(path + ": cannot create: " + std::strerror(errno));
}

DurableFile::~DurableFile() {
  if (fd < 0)
    return;
  ::close(fd);
  ::unlink(path.c_str());
}

void DurableFile::write(const void *data, std::size_t bytes) {
  const auto *at = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t put = ::write(fd, at, bytes);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      throw Error(path + ": cannot write: " + std::strerror(errno));
    at += put;
    bytes -= static_cast<std::size_t>(put);
  }
}

void DurableFile::commit() {
  if (::fsync(fd) != 0)
    throw Error(path + ": cannot sync: " + std::strerror(errno));
  int closing = std::exchange(fd, -1);
  if (::close(closing) != 0)
    throw Error(path + ": cannot close: " + std::strerror(errno));
}

void syncDirectory(const std::string &path) {
  int dir = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    throw Error(path + ": cannot open: " + std::strerror(errno));
  int status = ::fsync(dir);
  int error = errno;
  ::close(dir);
  if (status != 0)
    throw Error(path + ": cannot sync: " + std::strerror(error));
}

void *mapReadOnly(const RegularFile &file, const std::string &path) {
  void *mapping =
      ::mmap(nullptr, static_cast<std::size_t>(file.size()), PROT_READ,
             MAP_PRIVATE, file.descriptor(), 0);
  if (mapping == MAP_FAILED)
    throw Error(path + ": cannot map: " + std::strerror(errno));
  return mapping;
}

} // namespace cleave::rt
