//===- LocalTransport.h - moving bytes between ranks of one process -*- C++
//-*-===//
//
// When the ranks of a bundle run as threads of one process (runtime/comm/
// local), a rank reads its peers' buffers directly. What that takes of a
// rank's device is small: queued copies between any two buffers of the
// process, a reduction over blocks of its own memory, and marks in its
// queue that other ranks' queues can wait for. The host does each at once;
// a CUDA GPU queues them on its stream (libcleave_rt_cuda).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_LOCALTRANSPORT_H
#define CLEAVE_RT_LOCALTRANSPORT_H

#include "cleave/rt/Communicator.h"

#include <cstddef>
#include <memory>

namespace cleave::rt {

/// A point in one device's queue of work, reached once everything queued
/// before it has run. Null on the host, where work is done when queued.
using QueueMark = std::shared_ptr<void>;

class LocalTransport {
public:
  virtual ~LocalTransport() = default;

  /// `bytes` of this device's memory; release() may wait for queued work.
  virtual void *allocate(std::size_t bytes) = 0;
  virtual void release(void *pointer) = 0;
  /// Queues a copy of `bytes` between two buffers of any devices of the
  /// process.
  virtual void copy(void *dst, const void *src, std::size_t bytes) = 0;
  /// Queues `out` = the reduction of `numBlocks` blocks of `count` elements
  /// at `blocks` (this device's memory), as elements::reduceBlocks does.
  virtual void reduceBlocks(void *out, const void *blocks, int numBlocks,
                            std::size_t count, CleaveDType dtype,
                            Reduction reduction) = 0;
  /// A mark after the work queued so far.
  virtual QueueMark mark() = 0;
  /// Makes the work queued from now on wait for `mark`, which may be
  /// another device's.
  virtual void waitFor(const QueueMark &mark) = 0;
  /// Whether the work before `mark` has run.
  virtual bool reached(const QueueMark &mark) = 0;
  /// Waits until the work queued so far has run; throws saying what failed.
  virtual void synchronize() = 0;
  /// The device's queue is closing: waits for it (errors are the session's
  /// to report) and queues nothing more; synchronize() then returns at
  /// once, and what would queue work (copy, reduceBlocks, mark, waitFor)
  /// throws. allocate() and release() still work.
  virtual void detach() noexcept {}
};

/// The host's: memcpy and loops on the calling thread.
std::unique_ptr<LocalTransport> createHostTransport();

/// The CUDA device's behind `ctx` (libcleave_rt_cuda); throws when the
/// library cannot be loaded.
std::unique_ptr<LocalTransport> createCudaTransport(CleaveContext *ctx);

} // namespace cleave::rt

/// Exported by libcleave_rt_cuda.so: the transport of the CUDA device whose
/// context is `ctx`, or null after writing why into `error`.
extern "C" cleave::rt::LocalTransport *
cleave_rt_create_cuda_transport(CleaveContext *ctx, char *error,
                                int errorBytes);

#endif // CLEAVE_RT_LOCALTRANSPORT_H
