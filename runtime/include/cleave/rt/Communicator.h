//===- Communicator.h - how the devices of a bundle talk ---------*- C++
//-*-===//
//
// A bundle for several devices runs as one process per device (rank). The
// communication calls of its programs (CommList.def) go through the
// Communicator the runtime gives the device's context. It moves bytes and
// reduces elements; cutting tensors along a dimension is the caller's
// (runtime/src/CommKernels.cpp), so every implementation shares it.
//
// The MPI implementation (runtime/comm/mpi) serves CPU ranks on any number
// of nodes; the NCCL one (runtime/comm/nccl) GPU ranks, bootstrapped over
// MPI; the in-process one (runtime/comm/local) the ranks of a bundle run as
// threads of one process (`cleave run --single-process`).
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_COMMUNICATOR_H
#define CLEAVE_RT_COMMUNICATOR_H

#include "cleave/rt/Mesh.h"
#include "cleave/rt/Runtime.h"
#include "cleave/rt/Scalar.h"

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cleave::rt {

/// The reductions of all_reduce and reduce_scatter; the values are the
/// CommList.def attribute's (CleaveReduction, KernelEnums.def).
enum class Reduction {
  Sum = CLEAVE_REDUCTION_SUM,
  Product = CLEAVE_REDUCTION_PRODUCT,
  Max = CLEAVE_REDUCTION_MAX,
  Min = CLEAVE_REDUCTION_MIN,
  Average = CLEAVE_REDUCTION_AVERAGE,
};

/// `acc` combined with `x` by `reduction`, as the host's and the CUDA
/// device's reductions over blocks both do: booleans (`boolean`) sum as
/// "any" and multiply as "all"; an average adds (its division comes last).
template <typename T>
CLEAVE_HD T combine(Reduction reduction, T acc, T x, bool boolean) {
  switch (reduction) {
  case Reduction::Sum:
  case Reduction::Average:
    return boolean ? T(acc || x) : T(acc + x);
  case Reduction::Product:
    return boolean ? T(acc && x) : T(acc * x);
  case Reduction::Max:
    return x > acc ? x : acc;
  case Reduction::Min:
    return x < acc ? x : acc;
  }
  return acc;
}

/// "sum", "product", ...; null for a value outside the enum.
const char *reductionName(int64_t reduction);

/// One device's link to the others. Calls block until this device's part
/// is done; every failure throws Error saying what failed.
///
/// Collectives run within one group of the mesh (Mesh.h): the devices that
/// differ from this one only along `axis`, ordered by their index along it
/// (this device's is groupIndex(axis)). Every member of a group makes the
/// same collectives over it in the same order.
class Communicator {
public:
  virtual ~Communicator() = default;

  /// The mesh of the job's devices and this device's rank in it.
  virtual const MeshShape &mesh() const = 0;
  virtual int rank() const = 0;
  int size() const { return static_cast<int>(mesh().size()); }
  /// Where this device sits in the mesh.
  DevicePlace place() const { return DevicePlace::of(mesh(), rank()); }
  /// The devices in this device's group along `axis`, and its index there.
  int groupSize(MeshAxis axis) const {
    return static_cast<int>(mesh().extent(axis));
  }
  int groupIndex(MeshAxis axis) const {
    return static_cast<int>(mesh().coordsOf(rank()).along(axis));
  }

  /// Bytes to and from the device of `stage` with this device's tp and dp
  /// index. `tag` tells apart the messages between one pair; messages with
  /// the same peer and tag arrive in the order they were sent. send() never
  /// waits for the peer's receive (the buffer may be reused at once): a
  /// pipeline whose stages send both ways (a training step's activations
  /// and gradients) relies on it, and cleave-verify-partition checks
  /// schedules under it. flush() waits for every send still in flight, so
  /// that the next microbatch's compute overlaps the previous one's
  /// transfer.
  virtual void send(const void *data, std::size_t bytes, int stage,
                    int tag) = 0;
  virtual void recv(void *data, std::size_t bytes, int stage, int tag) = 0;
  virtual void flush() = 0;

  /// Host bytes to and from any device by rank: the runtime's own traffic
  /// (the data-parallel replicas' outputs to the device that writes them),
  /// not the programs'.
  virtual void sendToRank(const void *data, std::size_t bytes, int rank,
                          int tag) = 0;
  virtual void recvFromRank(void *data, std::size_t bytes, int rank,
                            int tag) = 0;

  /// Within the group along `axis`. Elements are `count` of `dtype`.
  virtual void allReduce(MeshAxis axis, const void *in, void *out,
                         std::size_t count, CleaveDType dtype,
                         Reduction reduction) = 0;
  /// `out` holds groupSize(axis) blocks of `bytes`; block j is group index
  /// j's `in`.
  virtual void allGather(MeshAxis axis, const void *in, void *out,
                         std::size_t bytes) = 0;
  /// `in` holds groupSize(axis) blocks of `count` elements; `out` gets the
  /// group's reduction of block groupIndex(axis).
  virtual void reduceScatter(MeshAxis axis, const void *in, void *out,
                             std::size_t count, CleaveDType dtype,
                             Reduction reduction) = 0;
  /// `in` holds groupSize(axis) blocks of `bytes`, block j for group index
  /// j; `out` gets the blocks sent to this device, in group order.
  virtual void allToAll(MeshAxis axis, const void *in, void *out,
                        std::size_t bytes) = 0;

  /// Adds `data` (`count` elements) to the all-reduce `id`, in place,
  /// within the group along `axis`: one buffer of a bucket of data-parallel
  /// gradients, added as soon as the backward has made it. The bucket's
  /// reduction begins when its `last` buffer is added, as one message, and
  /// may still be running when the call returns, overlapping the rest of
  /// the backward. Nothing may read or write a buffer until
  /// waitAllReduce(id) for it returns. Every member adds the same buffers
  /// in the same order among its other collectives.
  void startAllReduce(MeshAxis axis, void *data, std::size_t count,
                      CleaveDType dtype, Reduction reduction, int id,
                      bool last) {
    StartedReduction &started = reductionsInFlight[id];
    if (started.begun)
      throw Error("reduction " + std::to_string(id) +
                  " started again before its wait");
    if (!started.parts.empty() &&
        (started.axis != axis || started.dtype != dtype ||
         started.reduction != reduction))
      throw Error("reduction " + std::to_string(id) +
                  ": a buffer of another group, element type or reduction "
                  "than the bucket's first");
    started.axis = axis;
    started.dtype = dtype;
    started.reduction = reduction;
    started.parts.push_back({data, count});
    if (!last)
      return;
    started.begun = true;
    started.waitsLeft = started.parts.size();
    beginAllReduce(id, started);
  }
  /// Waits until the reduction `id` has finished (on a GPU: queues the
  /// wait, so that the work queued after it runs after it). Each buffer
  /// added has its wait; the first finishes the whole bucket.
  void waitAllReduce(int id) {
    auto found = reductionsInFlight.find(id);
    if (found == reductionsInFlight.end())
      throw Error("a wait for reduction " + std::to_string(id) +
                  ", which was not started");
    StartedReduction &started = found->second;
    if (!started.begun)
      throw Error("a wait for reduction " + std::to_string(id) +
                  " before its last buffer was added");
    if (!started.finished) {
      started.finished = true;
      finishAllReduce(id, started);
    }
    if (--started.waitsLeft == 0)
      reductionsInFlight.erase(found);
  }

  /// Waits for every device.
  virtual void barrier() = 0;
  /// The largest `value` over every device (a job's exit status).
  virtual int maxOverDevices(int value) = 0;
  /// Every device's `values` (the same count on each), rank after rank, on
  /// rank 0; empty on the others. For reports, not for programs.
  virtual std::vector<double>
  gatherToFirst(const std::vector<double> &values) = 0;
  /// Ends every device's process with `status`; does not return.
  [[noreturn]] virtual void abort(int status) = 0;

  /// The context of the device the calls that follow run on: their buffers
  /// are in its memory and their device work joins its queue (the CUDA
  /// stream, so a call may return before its transfer has run; flush()
  /// waits for it). The communication calls set it before each call; a
  /// communicator of host memory ignores it.
  virtual void useContext(CleaveContext *ctx) { (void)ctx; }
  /// The device behind `ctx` is closing (its session ends, and its queue
  /// goes with it): wait for what was queued there and queue nothing more
  /// on it. Buffers peers may still read stay until the communicator goes.
  virtual void releaseContext(CleaveContext *ctx) noexcept { (void)ctx; }

protected:
  /// One buffer of a started all-reduce.
  struct ReductionPart {
    void *data;
    std::size_t count;
  };
  /// A bucket of buffers reduced as one (startAllReduce).
  struct StartedReduction {
    MeshAxis axis = MeshAxis::Data;
    CleaveDType dtype = CLEAVE_F32;
    Reduction reduction = Reduction::Sum;
    std::vector<ReductionPart> parts;
    bool begun = false;
    bool finished = false;
    std::size_t waitsLeft = 0;
  };
  /// Begins the reduction of `started`, whose buffers are all added. This
  /// default reduces each buffer at once.
  virtual void beginAllReduce(int id, StartedReduction &started) {
    (void)id;
    for (const ReductionPart &part : started.parts)
      allReduce(started.axis, part.data, part.data, part.count, started.dtype,
                started.reduction);
  }
  /// Finishes it, at its first wait. This default has nothing left to do.
  virtual void finishAllReduce(int id, StartedReduction &started) {
    (void)id;
    (void)started;
  }

private:
  std::map<int, StartedReduction> reductionsInFlight;
};

/// True when this process was started by an MPI launcher (mpirun, srun)
/// and so can join the job's other processes.
bool inMpiJob();

/// Joins the MPI job this process belongs to (initialising MPI) as the
/// device of its MPI rank in `mesh`. Throws when the job's size is not the
/// mesh's.
std::unique_ptr<Communicator> createMpiCommunicator(const MeshShape &mesh);

/// GPU ranks: NCCL between the devices, its unique id sent over `host` (the
/// MPI communicator, which keeps carrying the runtime's host traffic).
/// `cudaDevice` is the GPU to use, or -1 for the rank's local rank (its
/// place among the job's ranks on its host) modulo the host's GPU count; it
/// returns the GPU chosen. Takes `host` when it succeeds; throws, leaving
/// `host` to the caller (to end the job), when NCCL is missing
/// (libcleave_comm_nccl.so), a host has more ranks than GPUs, or NCCL fails.
std::unique_ptr<Communicator>
createNcclCommunicator(std::unique_ptr<Communicator> &host, int &cudaDevice);

/// The number of CUDA GPUs this process sees; 0 without CUDA or a driver.
int visibleCudaDevices();

} // namespace cleave::rt

#endif // CLEAVE_RT_COMMUNICATOR_H
