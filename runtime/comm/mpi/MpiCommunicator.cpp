//===- MpiCommunicator.cpp - devices joined over MPI
//-----------------------===//
//
// One MPI process per device. MPI_COMM_WORLD ranks are the manifest's ranks;
// every group of every mesh axis (Mesh.h) is a communicator split off by its
// first member, ordered by the index along the axis, so a group's
// collectives never involve devices outside it.
// Errors are returned rather than fatal (MPI_ERRORS_RETURN), so that a
// failed call becomes an Error naming it.
//
// MPI counts are ints: messages above 1 GiB go in pieces.
//
//===----------------------------------------------------------------------===//

#include "../Elements.h"
#include "../Groups.h"
#include "cleave/rt/Communicator.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace cleave::rt {

namespace {

using namespace elements;

constexpr std::size_t pieceBytes = std::size_t(1) << 30;

void check(int code, const char *call) {
  if (code == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed: " + std::string(text, length));
}

MPI_Datatype mpiType(CleaveDType dtype) {
  switch (dtype) {
  case CLEAVE_F32:
    return MPI_FLOAT;
  case CLEAVE_F64:
    return MPI_DOUBLE;
  case CLEAVE_I64:
    return MPI_INT64_T;
  case CLEAVE_I32:
    return MPI_INT32_T;
  case CLEAVE_I16:
    return MPI_INT16_T;
  case CLEAVE_I8:
    return MPI_INT8_T;
  case CLEAVE_U8:
  case CLEAVE_BOOL:
    return MPI_UINT8_T;
  case CLEAVE_U16:
    return MPI_UINT16_T;
  case CLEAVE_U32:
    return MPI_UINT32_T;
  case CLEAVE_U64:
    return MPI_UINT64_T;
  default:
    throw Error(std::string("no MPI type for ") + dtypeName(dtype));
  }
}

MPI_Op mpiOp(Reduction reduction, CleaveDType dtype) {
  // Booleans: a sum is "any", a product "all".
  bool boolean = dtype == CLEAVE_BOOL;
  switch (reduction) {
  case Reduction::Sum:
  case Reduction::Average:
    return boolean ? MPI_LOR : MPI_SUM;
  case Reduction::Product:
    return boolean ? MPI_LAND : MPI_PROD;
  case Reduction::Max:
    return MPI_MAX;
  case Reduction::Min:
    return MPI_MIN;
  }
  throw Error("unknown reduction");
}

/// A datatype of `bytes` contiguous bytes whose extent is `stride`: with it,
/// one call moves the same piece of every block of a blocked buffer.
class PieceType {
public:
  PieceType(std::size_t bytes, std::size_t stride) {
    MPI_Datatype contiguous;
    check(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &contiguous),
          "MPI_Type_contiguous");
    check(MPI_Type_create_resized(contiguous, 0, static_cast<MPI_Aint>(stride),
                                  &type),
          "MPI_Type_create_resized");
    MPI_Type_free(&contiguous);
    check(MPI_Type_commit(&type), "MPI_Type_commit");
  }
  ~PieceType() { MPI_Type_free(&type); }
  MPI_Datatype get() const { return type; }

private:
  MPI_Datatype type;
};

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(const MeshShape &mesh) : mesh_(mesh) {
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
      int provided = 0;
      // The watchdog thread calls MPI_Abort while the main thread may be
      // inside MPI.
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
            "MPI_Init_thread");
      ownsMpi = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (size_ != mesh.size())
      throw Error("the MPI job has " + std::to_string(size_) +
                  " ranks, but the bundle is for " +
                  std::to_string(mesh.size()) + " devices");
    // Every rank splits along every axis, in the same order.
    for (MeshAxis axis : kMeshAxes) {
      MPI_Comm &group = groups[static_cast<int>(axis)];
      check(MPI_Comm_split(MPI_COMM_WORLD,
                           static_cast<int>(mesh.groupId(axis, rank_)),
                           groupIndex(axis), &group),
            "MPI_Comm_split");
      MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
    }
    check(MPI_Comm_dup(MPI_COMM_WORLD, &runtimeComm), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(runtimeComm, MPI_ERRORS_RETURN);
  }

  ~MpiCommunicator() override {
    try {
      flush();
    } catch (const std::exception &) {
      // A failed job is reported where it failed; the process is ending.
    }
    if (runtimeComm != MPI_COMM_NULL)
      MPI_Comm_free(&runtimeComm);
    for (MPI_Comm &group : groups)
      if (group != MPI_COMM_NULL)
        MPI_Comm_free(&group);
    int finalised = 0;
    MPI_Finalized(&finalised);
    if (ownsMpi && !finalised)
      MPI_Finalize();
  }

  const MeshShape &mesh() const override { return mesh_; }
  int rank() const override { return rank_; }

  void send(const void *data, std::size_t bytes, int stage, int tag) override {
    int peer = peerOf(stage);
    // The bytes are copied and sent in the background; flush() completes
    // them. Past a bound on the bytes in flight, the oldest sends complete
    // first.
    while (!inFlight.empty() && inFlightBytes + bytes > maxInFlightBytes)
      completeOldest();
    InFlight &pending = inFlight.emplace_back();
    pending.bytes.assign(static_cast<const char *>(data),
                         static_cast<const char *>(data) + bytes);
    inFlightBytes += bytes;
    const char *bytesIn = pending.bytes.data();
    for (std::size_t done = 0; done == 0 || done < bytes;) {
      std::size_t piece = std::min(pieceBytes, bytes - done);
      MPI_Request request;
      check(MPI_Isend(bytesIn + done, static_cast<int>(piece), MPI_BYTE, peer,
                      tag, MPI_COMM_WORLD, &request),
            "MPI_Isend");
      pending.requests.push_back(request);
      done += piece;
      if (piece == 0)
        break;
    }
  }

  void flush() override {
    while (!inFlight.empty())
      completeOldest();
  }

  void sendToRank(const void *data, std::size_t bytes, int rank,
                  int tag) override {
    const char *bytesIn = static_cast<const char *>(data);
    for (std::size_t done = 0; done == 0 || done < bytes;) {
      std::size_t piece = std::min(pieceBytes, bytes - done);
      check(MPI_Send(bytesIn + done, static_cast<int>(piece), MPI_BYTE, rank,
                     tag, runtimeComm),
            "MPI_Send");
      done += piece;
      if (piece == 0)
        break;
    }
  }

  void recvFromRank(void *data, std::size_t bytes, int rank, int tag) override {
    receive(data, bytes, rank, tag, runtimeComm);
  }

  void recv(void *data, std::size_t bytes, int stage, int tag) override {
    receive(data, bytes, peerOf(stage), tag, MPI_COMM_WORLD);
  }

  void allReduce(MeshAxis axis, const void *in, void *out, std::size_t count,
                 CleaveDType dtype, Reduction reduction) override {
    if (isHalf(dtype)) {
      std::vector<float> wide = widen(in, count, dtype);
      allReduce(axis, wide.data(), wide.data(), count, CLEAVE_F32, reduction);
      narrow(wide, out, dtype);
      return;
    }
    MPI_Datatype type = mpiType(dtype);
    MPI_Op op = mpiOp(reduction, dtype);
    std::size_t size = cleave_dtype_size(dtype);
    std::size_t perPiece = pieceBytes / size;
    const char *from = static_cast<const char *>(in);
    char *to = static_cast<char *>(out);
    for (std::size_t done = 0; done < count; done += perPiece) {
      std::size_t piece = std::min(perPiece, count - done);
      check(MPI_Allreduce(from == to ? MPI_IN_PLACE : from + done * size,
                          to + done * size, static_cast<int>(piece), type, op,
                          group(axis)),
            "MPI_Allreduce");
    }
    if (reduction == Reduction::Average)
      divide(out, count, dtype, groupSize(axis));
  }

  // A bucket of several buffers is packed into one message, reduced in
  // place there and copied back at its wait; a bucket of one is reduced
  // where it is.
  void beginAllReduce(int id, StartedReduction &started) override {
    PendingReduction &pending = reductions[id];
    pending = {};
    std::size_t size = cleave_dtype_size(started.dtype);
    std::size_t count = 0;
    for (const ReductionPart &part : started.parts)
      count += part.count;
    char *at = static_cast<char *>(started.parts.front().data);
    if (started.parts.size() > 1) {
      pending.packed.resize(count * size);
      at = pending.packed.data();
      std::size_t offset = 0;
      for (const ReductionPart &part : started.parts) {
        std::memcpy(at + offset, part.data, part.count * size);
        offset += part.count * size;
      }
    }
    MPI_Datatype type = mpiType(started.dtype);
    MPI_Op op = mpiOp(started.reduction, started.dtype);
    std::size_t perPiece = pieceBytes / size;
    for (std::size_t done = 0; done < count; done += perPiece) {
      std::size_t piece = std::min(perPiece, count - done);
      MPI_Request request;
      check(MPI_Iallreduce(MPI_IN_PLACE, at + done * size,
                           static_cast<int>(piece), type, op,
                           group(started.axis), &request),
            "MPI_Iallreduce");
      pending.requests.push_back(request);
    }
  }

  void finishAllReduce(int id, StartedReduction &started) override {
    auto found = reductions.find(id);
    PendingReduction pending = std::move(found->second);
    reductions.erase(found);
    check(MPI_Waitall(static_cast<int>(pending.requests.size()),
                      pending.requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    std::size_t size = cleave_dtype_size(started.dtype);
    std::size_t offset = 0;
    for (const ReductionPart &part : started.parts) {
      if (!pending.packed.empty())
        std::memcpy(part.data, pending.packed.data() + offset,
                    part.count * size);
      offset += part.count * size;
      if (started.reduction == Reduction::Average)
        divide(part.data, part.count, started.dtype, groupSize(started.axis));
    }
  }

  void allGather(MeshAxis axis, const void *in, void *out,
                 std::size_t bytes) override {
    const char *from = static_cast<const char *>(in);
    char *to = static_cast<char *>(out);
    if (bytes <= pieceBytes) {
      check(MPI_Allgather(from, static_cast<int>(bytes), MPI_BYTE, to,
                          static_cast<int>(bytes), MPI_BYTE, group(axis)),
            "MPI_Allgather");
      return;
    }
    for (std::size_t done = 0; done < bytes; done += pieceBytes) {
      std::size_t piece = std::min(pieceBytes, bytes - done);
      PieceType type(piece, bytes);
      check(MPI_Allgather(from + done, static_cast<int>(piece), MPI_BYTE,
                          to + done, 1, type.get(), group(axis)),
            "MPI_Allgather");
    }
  }

  void reduceScatter(MeshAxis axis, const void *in, void *out,
                     std::size_t count, CleaveDType dtype,
                     Reduction reduction) override {
    std::size_t size = cleave_dtype_size(dtype);
    std::size_t members = static_cast<std::size_t>(groupSize(axis));
    if (isHalf(dtype) || count * size > pieceBytes) {
      // Reduce everything, keep this device's block: twice the traffic, only
      // for types MPI lacks and for blocks above a piece.
      std::vector<uint8_t> whole(count * size * members);
      allReduce(axis, in, whole.data(), count * members, dtype, reduction);
      std::size_t index = static_cast<std::size_t>(groupIndex(axis));
      std::memcpy(out, whole.data() + index * count * size, count * size);
      return;
    }
    check(MPI_Reduce_scatter_block(in, out, static_cast<int>(count),
                                   mpiType(dtype), mpiOp(reduction, dtype),
                                   group(axis)),
          "MPI_Reduce_scatter_block");
    if (reduction == Reduction::Average)
      divide(out, count, dtype, groupSize(axis));
  }

  void allToAll(MeshAxis axis, const void *in, void *out,
                std::size_t bytes) override {
    const char *from = static_cast<const char *>(in);
    char *to = static_cast<char *>(out);
    if (bytes <= pieceBytes) {
      check(MPI_Alltoall(from, static_cast<int>(bytes), MPI_BYTE, to,
                         static_cast<int>(bytes), MPI_BYTE, group(axis)),
            "MPI_Alltoall");
      return;
    }
    for (std::size_t done = 0; done < bytes; done += pieceBytes) {
      std::size_t piece = std::min(pieceBytes, bytes - done);
      PieceType type(piece, bytes);
      check(MPI_Alltoall(from + done, 1, type.get(), to + done, 1, type.get(),
                         group(axis)),
            "MPI_Alltoall");
    }
  }

  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  int maxOverDevices(int value) override {
    int result = value;
    check(MPI_Allreduce(&value, &result, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD),
          "MPI_Allreduce");
    return result;
  }

  std::vector<double>
  gatherToFirst(const std::vector<double> &values) override {
    std::vector<double> gathered;
    if (rank_ == 0)
      gathered.resize(values.size() * static_cast<std::size_t>(size_));
    check(MPI_Gather(values.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                     gathered.data(), static_cast<int>(values.size()),
                     MPI_DOUBLE, 0, MPI_COMM_WORLD),
          "MPI_Gather");
    return gathered;
  }

  [[noreturn]] void abort(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status); // MPI_Abort should not return
  }

private:
  /// An all-reduce started and not yet waited for.
  struct PendingReduction {
    /// The bucket's buffers one after another (empty for a bucket of one).
    std::vector<char> packed;
    std::vector<MPI_Request> requests;
  };
  std::map<int, PendingReduction> reductions;

  /// A send in the background: its own copy of the bytes and its requests.
  struct InFlight {
    std::vector<char> bytes;
    std::vector<MPI_Request> requests;
  };

  void completeOldest() {
    InFlight &oldest = inFlight.front();
    check(MPI_Waitall(static_cast<int>(oldest.requests.size()),
                      oldest.requests.data(), MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    inFlightBytes -= oldest.bytes.size();
    inFlight.pop_front();
  }

  void receive(void *data, std::size_t bytes, int peer, int tag,
               MPI_Comm comm) {
    char *bytesOut = static_cast<char *>(data);
    for (std::size_t done = 0; done == 0 || done < bytes;) {
      std::size_t piece = std::min(pieceBytes, bytes - done);
      MPI_Status status;
      check(MPI_Recv(bytesOut + done, static_cast<int>(piece), MPI_BYTE, peer,
                     tag, comm, &status),
            "MPI_Recv");
      int got = 0;
      MPI_Get_count(&status, MPI_BYTE, &got);
      if (static_cast<std::size_t>(got) != piece)
        throw Error("received " + std::to_string(got) + " bytes from rank " +
                    std::to_string(peer) + ", expected " +
                    std::to_string(piece));
      done += piece;
      if (piece == 0)
        break;
    }
  }

  int peerOf(int stage) const { return pipelinePeer(mesh_, rank_, stage); }

  MPI_Comm group(MeshAxis axis) const { return groups[static_cast<int>(axis)]; }

  MeshShape mesh_;
  bool ownsMpi = false;
  int rank_ = 0;
  int size_ = 1;
  /// This device's group along each axis, by axis code.
  MPI_Comm groups[std::size(kMeshAxes)] = {MPI_COMM_NULL, MPI_COMM_NULL,
                                           MPI_COMM_NULL};
  /// The runtime's own traffic, apart from the programs'.
  MPI_Comm runtimeComm = MPI_COMM_NULL;
  std::deque<InFlight> inFlight;
  std::size_t inFlightBytes = 0;
  static constexpr std::size_t maxInFlightBytes = std::size_t(256) << 20;
};

} // namespace

bool inMpiJob() {
  // A launcher tells its processes who they are through the environment:
  // OpenMPI's mpirun, PMIx (srun --mpi=pmix, OpenMPI 4+), and PMI-1/2
  // (srun --mpi=pmi2, MPICH's hydra). A process started by hand has none.
  for (const char *name :
       {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(name))
      return true;
  return false;
}

std::unique_ptr<Communicator> createMpiCommunicator(const MeshShape &mesh) {
  return std::make_unique<MpiCommunicator>(mesh);
}

} // namespace cleave::rt
