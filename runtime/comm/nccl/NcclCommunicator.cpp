//===- NcclCommunicator.cpp - GPU ranks joined over NCCL
//-------------------===//
//
// One process per GPU. The MPI communicator the job started with carries
// the bootstrap and every host message: rank 0 makes NCCL's unique id and
// sends it, with each rank's local rank (its place among the ranks on its
// host, by host name), to every rank. The world communicator serves the
// pipeline's sends and receives (peers are world ranks); every group of
// every mesh axis (Mesh.h) is split off it by its first member, ordered by
// the index along the axis, for the collectives.
//
// Everything is queued on the stream of the context the communication
// calls give (useContext); flush() waits for it. A send is staged and
// issued with the next receive, in one group (see send()). NCCL has no
// tags: the
// transfers between two ranks match in the order they are issued, which
// the partitioner guarantees (both ends order them by the value sent).
// A watchdog that expires calls abort(), which aborts the NCCL
// communicators first so that no rank stays stuck in a kernel.
//
//===----------------------------------------------------------------------===//

#include "CommDevice.h"

#include "../Groups.h"

#include "cleave/rt/Communicator.h"
#include "cleave/rt/Context.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace cleave::rt {
namespace {

/// The host messages of the bootstrap; above the runtime's own tags.
constexpr int bootstrapTag = 32000;

void check(ncclResult_t status, const char *call) {
  if (status != ncclSuccess)
    throw Error(std::string(call) + " failed: " + ncclGetErrorString(status));
}

void check(cudaError_t status, const char *call) {
  if (status != cudaSuccess)
    throw Error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

ncclDataType_t ncclType(CleaveDType dtype) {
  switch (dtype) {
  case CLEAVE_F32:
    return ncclFloat32;
  case CLEAVE_F16:
    return ncclFloat16;
  case CLEAVE_BF16:
    return ncclBfloat16;
  case CLEAVE_F64:
    return ncclFloat64;
  case CLEAVE_I64:
    return ncclInt64;
  case CLEAVE_I32:
    return ncclInt32;
  case CLEAVE_I8:
    return ncclInt8;
  case CLEAVE_U8:
  case CLEAVE_BOOL:
    return ncclUint8;
  case CLEAVE_U32:
    return ncclUint32;
  case CLEAVE_U64:
    return ncclUint64;
  default:
    throw Error(std::string("NCCL cannot reduce ") + dtypeName(dtype));
  }
}

ncclRedOp_t ncclOp(Reduction reduction, CleaveDType dtype) {
  // Booleans are 0 or 1: a sum is "any" (max), a product "all" (min).
  bool boolean = dtype == CLEAVE_BOOL;
  switch (reduction) {
  case Reduction::Sum:
  case Reduction::Average: // divided afterwards, in the element type
    return boolean ? ncclMax : ncclSum;
  case Reduction::Product:
    return boolean ? ncclMin : ncclProd;
  case Reduction::Max:
    return ncclMax;
  case Reduction::Min:
    return ncclMin;
  }
  throw Error("unknown reduction");
}

/// What rank 0 tells every rank in the bootstrap.
struct Bootstrap {
  ncclUniqueId id;
  int localRank;
  int localRanks;
};

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(Communicator *host, int &cudaDevice) : host(host) {
    Bootstrap boot = bootstrap();
    int gpus = 0;
    cudaError_t found = cudaGetDeviceCount(&gpus);
    if (found == cudaErrorInsufficientDriver || found == cudaErrorNoDevice)
      throw Error(std::string("no CUDA device: no usable NVIDIA driver or GPU "
                              "on this machine (") +
                  cudaGetErrorName(found) + ")");
    check(found, "cudaGetDeviceCount");
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    // A launcher that binds each rank to a GPU of its own (srun
    // --gpus-per-task, CUDA_VISIBLE_DEVICES per rank) shows every rank one
    // GPU; otherwise the ranks of a host share its GPUs in turn.
    if (cudaDevice < 0)
      cudaDevice = boot.localRank % gpus;
    if (cudaDevice >= gpus)
      throw Error("no CUDA device " + std::to_string(cudaDevice) + " (" +
                  std::to_string(gpus) + " present)");
    device = cudaDevice;
    check(cudaSetDevice(device), "cudaSetDevice");
    checkOneRankPerGpu(name, gpus);
    check(ncclCommInitRank(&world, host->size(), boot.id, host->rank()),
          "ncclCommInitRank");
    // Every rank splits along every axis, in the same order.
    for (MeshAxis axis : kMeshAxes)
      check(ncclCommSplit(world, static_cast<int>(mesh().groupId(axis, rank())),
                          groupIndex(axis), &groups[static_cast<int>(axis)],
                          nullptr),
            "ncclCommSplit");
  }

  ~NcclCommunicator() override {
    try {
      flush();
    } catch (const std::exception &) {
      // A failed job is reported where it failed; the process is ending.
    }
    for (auto &[id, started] : startedReductions)
      cudaEventDestroy(started.done);
    if (reductionStream) {
      cudaStreamSynchronize(reductionStream);
      cudaStreamDestroy(reductionStream);
    }
    for (ncclComm_t group : groups)
      if (group)
        ncclCommDestroy(group);
    if (world)
      ncclCommDestroy(world);
    delete host;
  }

  const MeshShape &mesh() const override { return host->mesh(); }
  int rank() const override { return host->rank(); }

  void useContext(CleaveContext *ctx) override {
    if (ctx && ctx->cudaStream)
      stream = static_cast<cudaStream_t>(ctx->cudaStream);
  }

  void releaseContext(CleaveContext *ctx) noexcept override {
    if (!ctx || static_cast<cudaStream_t>(ctx->cudaStream) != stream)
      return;
    try {
      flush();
    } catch (const std::exception &) {
      // The session reports its own failure.
    }
    stream = nullptr;
  }

  // An NCCL send waits for its receiver, and a 1F1B stage sends an
  // activation while its neighbour sends a gradient the other way. So a
  // send copies its bytes into a staging buffer of its own (the program may
  // overwrite the source at once) and is issued with this device's next
  // receive, in one NCCL group, or before its next collective or flush:
  // no send then waits for a receive that waits for it.
  void send(const void *data, std::size_t bytes, int stage, int tag) override {
    (void)tag;
    cudaStream_t s = queue();
    void *staging = nullptr;
    check(cudaMallocAsync(&staging, std::max<std::size_t>(bytes, 1), s),
          "cudaMallocAsync");
    pendingSends.push_back({staging, bytes, peerOf(stage)});
    check(cudaMemcpyAsync(staging, data, bytes, cudaMemcpyDeviceToDevice, s),
          "cudaMemcpyAsync");
  }

  void recv(void *data, std::size_t bytes, int stage, int tag) override {
    (void)tag;
    issueSends([&] {
      check(ncclRecv(data, bytes, ncclUint8, peerOf(stage), world, queue()),
            "ncclRecv");
    });
  }

  void flush() override {
    if (!stream)
      return;
    issueSends();
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    // Pipeline transfers run on `world`, collectives on `groups`.
    checkAsyncError(world);
    for (ncclComm_t group : groups)
      checkAsyncError(group);
  }

  void sendToRank(const void *data, std::size_t bytes, int rank,
                  int tag) override {
    host->sendToRank(data, bytes, rank, tag);
  }
  void recvFromRank(void *data, std::size_t bytes, int rank, int tag) override {
    host->recvFromRank(data, bytes, rank, tag);
  }

  // A started reduction runs on a stream of its own, after the work queued
  // before it, so that the kernels queued after it overlap it; a wait queues
  // the stream's event on the context's stream. The buffers of a bucket go
  // as one NCCL group. Another collective over the same group waits for it
  // first: a communicator's operations must not run at once.
  void beginAllReduce(int id, StartedReduction &started) override {
    issueSends();
    cudaStream_t s = queue();
    if (!reductionStream)
      check(cudaStreamCreateWithFlags(&reductionStream, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags");
    cudaEvent_t ready = nullptr, done = nullptr;
    check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
    check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
          "cudaEventCreateWithFlags");
    check(cudaEventRecord(ready, s), "cudaEventRecord");
    check(cudaStreamWaitEvent(reductionStream, ready, 0),
          "cudaStreamWaitEvent");
    check(cudaEventDestroy(ready), "cudaEventDestroy");
    check(ncclGroupStart(), "ncclGroupStart");
    for (const ReductionPart &part : started.parts)
      check(ncclAllReduce(part.data, part.data, part.count,
                          ncclType(started.dtype),
                          ncclOp(started.reduction, started.dtype),
                          group(started.axis), reductionStream),
            "ncclAllReduce");
    check(ncclGroupEnd(), "ncclGroupEnd");
    if (started.reduction == Reduction::Average)
      for (const ReductionPart &part : started.parts)
        cuda::divideOnDevice(part.data, part.count, started.dtype,
                             groupSize(started.axis), reductionStream);
    check(cudaEventRecord(done, reductionStream), "cudaEventRecord");
    startedReductions[id] = {started.axis, done};
  }

  void finishAllReduce(int id, StartedReduction &started) override {
    (void)started;
    auto found = startedReductions.find(id);
    cudaEvent_t done = found->second.done;
    startedReductions.erase(found);
    check(cudaStreamWaitEvent(queue(), done, 0), "cudaStreamWaitEvent");
    check(cudaEventDestroy(done), "cudaEventDestroy");
  }

  void allReduce(MeshAxis axis, const void *in, void *out, std::size_t count,
                 CleaveDType dtype, Reduction reduction) override {
    issueSends();
    afterStartedReductions(axis);
    check(ncclAllReduce(in, out, count, ncclType(dtype),
                        ncclOp(reduction, dtype), group(axis), queue()),
          "ncclAllReduce");
    average(axis, out, count, dtype, reduction);
  }

  void allGather(MeshAxis axis, const void *in, void *out,
                 std::size_t bytes) override {
    issueSends();
    afterStartedReductions(axis);
    check(ncclAllGather(in, out, bytes, ncclUint8, group(axis), queue()),
          "ncclAllGather");
  }

  void reduceScatter(MeshAxis axis, const void *in, void *out,
                     std::size_t count, CleaveDType dtype,
                     Reduction reduction) override {
    issueSends();
    afterStartedReductions(axis);
    check(ncclReduceScatter(in, out, count, ncclType(dtype),
                            ncclOp(reduction, dtype), group(axis), queue()),
          "ncclReduceScatter");
    average(axis, out, count, dtype, reduction);
  }

  void allToAll(MeshAxis axis, const void *in, void *out,
                std::size_t bytes) override {
    issueSends();
    afterStartedReductions(axis);
    cudaStream_t s = queue();
    ncclComm_t comm = group(axis);
    check(ncclGroupStart(), "ncclGroupStart");
    for (int j = 0; j < groupSize(axis); ++j) {
      check(ncclSend(static_cast<const char *>(in) + j * bytes, bytes,
                     ncclUint8, j, comm, s),
            "ncclSend");
      check(ncclRecv(static_cast<char *>(out) + j * bytes, bytes, ncclUint8, j,
                     comm, s),
            "ncclRecv");
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  void barrier() override { host->barrier(); }
  int maxOverDevices(int value) override { return host->maxOverDevices(value); }
  std::vector<double>
  gatherToFirst(const std::vector<double> &values) override {
    return host->gatherToFirst(values);
  }

  [[noreturn]] void abort(int status) override {
    // A rank stuck in an NCCL kernel (its peer died) is freed by aborting
    // the communicators; then MPI ends every process.
    for (ncclComm_t &group : groups) {
      if (group)
        ncclCommAbort(group);
      group = nullptr;
    }
    if (world)
      ncclCommAbort(world);
    world = nullptr;
    host->abort(status);
    std::_Exit(status); // abort() does not return
  }

private:
  /// Rank 0 makes the id and tells each rank its local rank.
  /// NCCL cannot put two ranks on one GPU. The ranks compare their GPUs'
  /// PCI addresses (the indices differ from rank to rank when each sees
  /// only its own), and every rank fails alike when two share one.
  void checkOneRankPerGpu(const char *hostName, int gpus) {
    struct Seat {
      char host[256];
      char bus[64];
      int gpus;
    };
    Seat seat{};
    seat.gpus = gpus;
    std::strncpy(seat.host, hostName, sizeof seat.host - 1);
    check(cudaDeviceGetPCIBusId(seat.bus, sizeof seat.bus, device),
          "cudaDeviceGetPCIBusId");
    char verdict[768] = {0};
    constexpr int tag = bootstrapTag + 1;
    if (host->rank() != 0) {
      host->sendToRank(&seat, sizeof seat, 0, tag);
      host->recvFromRank(verdict, sizeof verdict, 0, tag);
    } else {
      std::map<std::pair<std::string, std::string>, int> owners;
      std::string message;
      for (int r = 0; r < host->size(); ++r) {
        Seat other = seat;
        if (r != 0)
          host->recvFromRank(&other, sizeof other, r, tag);
        other.host[sizeof other.host - 1] = '\0';
        other.bus[sizeof other.bus - 1] = '\0';
        auto [owner, fresh] = owners.emplace(
            std::make_pair(std::string(other.host), std::string(other.bus)),
            r);
        if (!fresh && message.empty())
          message = "ranks " + std::to_string(owner->second) + " and " +
                    std::to_string(r) + " of host " + other.host +
                    " would share the GPU at " + other.bus + " (rank " +
                    std::to_string(r) + " sees " + std::to_string(other.gpus) +
                    "), and NCCL cannot put two ranks on one GPU: start at "
                    "most one rank per GPU of a host, or run the bundle with "
                    "`cleave run --single-process`";
      }
      std::strncpy(verdict, message.c_str(), sizeof verdict - 1);
      for (int r = 1; r < host->size(); ++r)
        host->sendToRank(verdict, sizeof verdict, r, tag);
    }
    if (verdict[0])
      throw Error(verdict);
  }

  Bootstrap bootstrap() {
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    Bootstrap boot{};
    if (host->rank() != 0) {
      host->sendToRank(name, sizeof name, 0, bootstrapTag);
      host->recvFromRank(&boot, sizeof boot, 0, bootstrapTag);
      return boot;
    }
    check(ncclGetUniqueId(&boot.id), "ncclGetUniqueId");
    std::vector<std::string> hosts = {name};
    for (int r = 1; r < host->size(); ++r) {
      char other[256] = {0};
      host->recvFromRank(other, sizeof other, r, bootstrapTag);
      other[sizeof other - 1] = '\0';
      hosts.push_back(other);
    }
    std::map<std::string, int> counts;
    std::vector<int> local;
    for (const std::string &each : hosts)
      local.push_back(counts[each]++);
    for (int r = host->size() - 1; r >= 0; --r) {
      boot.localRank = local[r];
      boot.localRanks = counts[hosts[r]];
      if (r != 0)
        host->sendToRank(&boot, sizeof boot, r, bootstrapTag);
    }
    return boot;
  }

  /// The sends posted and not yet issued: their staging buffers.
  struct PendingSend {
    void *staging;
    std::size_t bytes;
    int peer;
  };

  /// Issues the pending sends and what `alongside` issues (a receive) as one
  /// NCCL group, then frees the staging buffers in stream order.
  void issueSends(const std::function<void()> &alongside = {}) {
    if (pendingSends.empty() && !alongside)
      return;
    cudaStream_t s = queue();
    check(ncclGroupStart(), "ncclGroupStart");
    for (const PendingSend &pending : pendingSends)
      check(ncclSend(pending.staging, pending.bytes, ncclUint8, pending.peer,
                     world, s),
            "ncclSend");
    if (alongside)
      alongside();
    check(ncclGroupEnd(), "ncclGroupEnd");
    for (const PendingSend &pending : pendingSends)
      check(cudaFreeAsync(pending.staging, s), "cudaFreeAsync");
    pendingSends.clear();
  }

  /// Queues on the context's stream a wait for every reduction started
  /// over the group along `axis`.
  void afterStartedReductions(MeshAxis axis) {
    for (const auto &[id, started] : startedReductions)
      if (started.axis == axis)
        check(cudaStreamWaitEvent(queue(), started.done, 0),
              "cudaStreamWaitEvent");
  }

  cudaStream_t queue() {
    if (!stream)
      throw Error("the NCCL communicator runs on a CUDA device's stream, and "
                  "no CUDA context was given");
    check(cudaSetDevice(device), "cudaSetDevice");
    return stream;
  }

  void average(MeshAxis axis, void *out, std::size_t count, CleaveDType dtype,
               Reduction reduction) {
    if (reduction == Reduction::Average)
      cuda::divideOnDevice(out, count, dtype, groupSize(axis), stream);
  }

  static void checkAsyncError(ncclComm_t comm) {
    if (!comm)
      return;
    ncclResult_t asyncError = ncclSuccess;
    check(ncclCommGetAsyncError(comm, &asyncError), "ncclCommGetAsyncError");
    check(asyncError, "an NCCL operation");
  }

  /// World ranks are the bundle's ranks.
  int peerOf(int stage) const { return pipelinePeer(mesh(), rank(), stage); }

  ncclComm_t group(MeshAxis axis) const {
    return groups[static_cast<int>(axis)];
  }

  /// Owned once constructed (the destructor deletes it), so that a failed
  /// construction leaves it to the caller.
  Communicator *host;
  int device = 0;
  ncclComm_t world = nullptr;
  /// This device's group along each axis, by axis code.
  ncclComm_t groups[std::size(kMeshAxes)] = {nullptr, nullptr, nullptr};
  cudaStream_t stream = nullptr;
  std::vector<PendingSend> pendingSends;
  /// The stream started reductions run on (created on first use), and each
  /// one's group and the event of its end.
  struct RunningReduction {
    MeshAxis axis;
    cudaEvent_t done;
  };
  cudaStream_t reductionStream = nullptr;
  std::map<int, RunningReduction> startedReductions;
};

} // namespace
} // namespace cleave::rt

using namespace cleave::rt;

extern "C" Communicator *cleave_rt_create_nccl_communicator(Communicator *host,
                                                            int *cudaDevice,
                                                            char *error,
                                                            int errorBytes) {
  // Takes `host` only on success: on failure the caller still needs it to
  // end the job.
  NcclCommunicator *nccl = nullptr;
  try {
    nccl = new NcclCommunicator(host, *cudaDevice);
    return nccl;
  } catch (const std::exception &e) {
    if (error && errorBytes > 0) {
      std::strncpy(error, e.what(), errorBytes - 1);
      error[errorBytes - 1] = '\0';
    }
  }
  return nullptr;
}
