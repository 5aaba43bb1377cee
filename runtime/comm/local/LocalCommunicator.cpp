//===- LocalCommunicator.cpp - ranks joined inside one process
//-------------===//
//
// See InProcessJob.h. Every wait of a rank is on the job's one condition
// variable, woken by any change; the job is small (a few ranks) and its
// messages few per step, so one lock serves it.
//
//===----------------------------------------------------------------------===//

#include "InProcessJob.h"

#include "../Groups.h"

#include "cleave/rt/Context.h"
#include "cleave/rt/LocalTransport.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <tuple>

namespace cleave::rt {

namespace {

using Clock = std::chrono::steady_clock;

/// Program bytes (send/recv) and the runtime's host bytes travel apart.
enum Channel { ProgramChannel = 0, RuntimeChannel = 1 };

/// One point-to-point message.
struct Message {
  /// Program bytes, staged in the sender's memory once `ready` is reached.
  void *staged = nullptr;
  std::size_t bytes = 0;
  QueueMark ready;
  /// Set by the receiver: it took the message, and its copy is done once
  /// `consumed` is reached (then the sender reuses the staging buffer).
  bool taken = false;
  QueueMark consumed;
  /// The runtime's host bytes.
  std::vector<char> host;
};
using MessagePtr = std::shared_ptr<Message>;

/// What a rank brings to a rendezvous.
struct Slot {
  const void *in = nullptr;
  /// The bytes a member brings to a collective: every member's must agree.
  std::size_t bytes = 0;
  QueueMark mark;
  int value = 0;
  std::vector<double> values;
};

std::string placeText(const DevicePlace &place) {
  return "rank " + std::to_string(place.rank) + " (stage " +
         std::to_string(place.stage) + ", tp " + std::to_string(place.tp) + ")";
}

} // namespace

class LocalJobState {
public:
  LocalJobState(const MeshShape &mesh, double timeoutSeconds)
      : mesh(mesh), timeoutSeconds(timeoutSeconds) {
    for (int r = 0; r < mesh.size(); ++r)
      places.push_back(DevicePlace::of(mesh, r));
  }

  const MeshShape mesh;
  /// Indexed by rank.
  std::vector<DevicePlace> places;

  void post(int from, int to, Channel channel, int tag, MessagePtr message) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      mailboxes[{from, to, channel, tag}].push_back(std::move(message));
    }
    changed.notify_all();
  }

  /// The oldest message from `from` to `self` with `tag`, waiting for it.
  MessagePtr take(int from, int self, Channel channel, int tag,
                  const char *op) {
    std::unique_lock<std::mutex> lock(mutex);
    std::deque<MessagePtr> &box = mailboxes[{from, self, channel, tag}];
    waitUntil(
        lock, [&] { return !box.empty(); }, boundFor(channel), op,
        /*pastFailure=*/false,
        [&] {
          return "a message from " + placeText(places[from]) + " (tag " +
                 std::to_string(tag) + ")";
        });
    MessagePtr message = std::move(box.front());
    box.pop_front();
    return message;
  }

  /// The receiver's copy of `message` is queued and done at `consumed`.
  void consume(const MessagePtr &message, QueueMark consumed) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      message->taken = true;
      message->consumed = std::move(consumed);
    }
    changed.notify_all();
  }

  /// Whether the receiver took `message`, and its copy's mark.
  bool taken(const MessagePtr &message, QueueMark &consumed) {
    std::lock_guard<std::mutex> lock(mutex);
    consumed = message->consumed;
    return message->taken;
  }

  /// Every member's slot of rendezvous `key`, once all `members` brought
  /// theirs; `index` is this rank's place among them. With `pastFailure`
  /// it waits for the members even after another rank failed: the members
  /// of a collective's closing rendezvous are copying from each other's
  /// buffers and will arrive, and none may free its buffers before.
  std::vector<Slot> exchange(int key, int index, int members, Slot slot,
                             const char *op, bool pastFailure = false) {
    std::unique_lock<std::mutex> lock(mutex);
    Rendezvous &round = rendezvous[key];
    if (round.slots.empty()) {
      round.slots.resize(members);
      round.present.assign(members, false);
    }
    uint64_t generation = round.generation;
    round.slots[index] = std::move(slot);
    round.present[index] = true;
    if (++round.arrived == members) {
      round.published = std::move(round.slots);
      round.slots.assign(members, Slot());
      round.present.assign(members, false);
      round.arrived = 0;
      ++round.generation;
      lock.unlock();
      changed.notify_all();
      lock.lock();
      return round.published;
    }
    try {
      waitUntil(
          lock, [&] { return round.generation != generation; },
          key == worldKey ? 2 * timeoutSeconds : timeoutSeconds, op,
          pastFailure,
          [&] {
            std::string missing;
            for (std::size_t r = 0, m = 0; r < places.size(); ++r) {
              if (!memberOf(key, static_cast<int>(r)))
                continue;
              if (!round.present[m++])
                missing += (missing.empty() ? "" : ", ") + placeText(places[r]);
            }
            return missing;
          });
    } catch (...) {
      // Leaving before the others came: take the slot back, so that no
      // member that comes later reads this rank's buffers once they are
      // freed (the round never completes; every member fails).
      round.slots[index] = Slot();
      round.present[index] = false;
      --round.arrived;
      throw;
    }
    return round.published;
  }

  /// The rendezvous of the group along `axis` that holds `rank`, and of
  /// all.
  int groupKey(MeshAxis axis, int rank) const {
    return static_cast<int>(static_cast<int64_t>(axis) * mesh.size() +
                            mesh.groupId(axis, rank));
  }
  static constexpr int worldKey = -1;

  bool fail(int rank, const std::string &reason) {
    bool first;
    {
      std::lock_guard<std::mutex> lock(mutex);
      first = failure.empty();
      if (first)
        failure = placeText(places[rank]) + " failed: " + reason;
    }
    changed.notify_all();
    return first;
  }

  bool failed() {
    std::lock_guard<std::mutex> lock(mutex);
    return !failure.empty();
  }

private:
  struct Rendezvous {
    uint64_t generation = 0;
    int arrived = 0;
    std::vector<Slot> slots;
    std::vector<bool> present;
    std::vector<Slot> published;
  };

  bool memberOf(int key, int rank) const {
    if (key == worldKey)
      return true;
    auto axis = static_cast<MeshAxis>(key / mesh.size());
    return groupKey(axis, rank) == key;
  }

  /// The runtime's own waits (barriers, host messages) span the others'
  /// whole steps, which their watchdogs bound: they get twice as long, so
  /// that the rank at fault is the one that reports first.
  double boundFor(Channel channel) const {
    return channel == RuntimeChannel ? 2 * timeoutSeconds : timeoutSeconds;
  }

  /// Waits for `ready`; throws when another rank failed (unless
  /// `pastFailure`) or, after `seconds` (0: never), naming `op` and what it
  /// waited for.
  template <typename Ready, typename Awaited>
  void waitUntil(std::unique_lock<std::mutex> &lock, Ready ready,
                 double seconds, const char *op, bool pastFailure,
                 Awaited awaited) {
    Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(seconds));
    while (!ready()) {
      if (!failure.empty() && !pastFailure)
        throw Error(std::string(op) + " stopped: " + failure);
      if (seconds <= 0) {
        changed.wait(lock);
        continue;
      }
      if (changed.wait_until(lock, deadline) == std::cv_status::timeout &&
          !ready() && (failure.empty() || pastFailure)) {
        char elapsed[32];
        std::snprintf(elapsed, sizeof elapsed, "%gs", seconds);
        throw Error("timed out after " + std::string(elapsed) + " in " + op +
                    " waiting for " + awaited());
      }
    }
  }

  double timeoutSeconds;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::tuple<int, int, int, int>, std::deque<MessagePtr>> mailboxes;
  std::map<int, Rendezvous> rendezvous;
  std::string failure;
};

namespace {

class LocalCommunicator final : public Communicator {
public:
  LocalCommunicator(std::shared_ptr<LocalJobState> job, int rank)
      : job(std::move(job)), rank_(rank) {}

  ~LocalCommunicator() override {
    // The job's threads have ended: every queued copy has run. A failed
    // job is reported where it failed; nothing here may throw.
    if (!transport_)
      return;
    transport_->detach();
    for (const MessagePtr &message : sent)
      releaseQuietly(message->staged);
    for (auto &[bytes, pointer] : pool)
      releaseQuietly(pointer);
    releaseQuietly(blocks);
  }

  const MeshShape &mesh() const override { return job->mesh; }
  int rank() const override { return rank_; }

  void releaseContext(CleaveContext *ctx) noexcept override {
    // Peers may still read the messages this rank sent: their buffers stay
    // until the communicator goes; only the queue closes.
    if (!ctx || ctx != context || !transport_)
      return;
    transport_->detach();
    // A later session's context may reuse the address: it starts afresh.
    context = nullptr;
  }

  void useContext(CleaveContext *ctx) override {
    if (!ctx || ctx == context)
      return;
    // A new device (a new session): what the old one holds goes with it.
    if (transport_) {
      flush();
      releaseBuffers();
    }
    context = ctx;
    transport_ =
        ctx->cudaStream ? createCudaTransport(ctx) : createHostTransport();
  }

  void send(const void *data, std::size_t bytes, int stage, int tag) override {
    int peer = peerOf(stage);
    reclaim();
    auto message = std::make_shared<Message>();
    message->staged = stagingBuffer(bytes);
    message->bytes = bytes;
    transport().copy(message->staged, data, bytes);
    message->ready = transport().mark();
    sent.push_back(message);
    job->post(rank_, peer, ProgramChannel, tag, message);
  }

  void recv(void *data, std::size_t bytes, int stage, int tag) override {
    int peer = peerOf(stage);
    MessagePtr message = job->take(peer, rank_, ProgramChannel, tag, "recv");
    if (message->bytes != bytes) {
      job->consume(message, nullptr);
      throw Error("received " + std::to_string(message->bytes) +
                  " bytes from rank " + std::to_string(peer) + " (tag " +
                  std::to_string(tag) + "), expected " + std::to_string(bytes));
    }
    transport().waitFor(message->ready);
    transport().copy(data, message->staged, bytes);
    job->consume(message, transport().mark());
  }

  void flush() override {
    transport().synchronize();
    reclaim();
  }

  void sendToRank(const void *data, std::size_t bytes, int rank,
                  int tag) override {
    checkRank(rank);
    auto message = std::make_shared<Message>();
    message->host.assign(static_cast<const char *>(data),
                         static_cast<const char *>(data) + bytes);
    message->bytes = bytes;
    job->post(rank_, rank, RuntimeChannel, tag, std::move(message));
  }

  void recvFromRank(void *data, std::size_t bytes, int rank, int tag) override {
    checkRank(rank);
    MessagePtr message =
        job->take(rank, rank_, RuntimeChannel, tag, "recvFromRank");
    if (message->bytes != bytes)
      throw Error("received " + std::to_string(message->bytes) +
                  " bytes from rank " + std::to_string(rank) + " (tag " +
                  std::to_string(tag) + "), expected " + std::to_string(bytes));
    if (bytes)
      std::memcpy(data, message->host.data(), bytes);
  }

  void allReduce(MeshAxis axis, const void *in, void *out, std::size_t count,
                 CleaveDType dtype, Reduction reduction) override {
    std::size_t bytes = count * elementSize(dtype);
    int members = groupSize(axis);
    std::vector<Slot> slots = gather(axis, in, bytes, "all_reduce");
    auto *staged = static_cast<uint8_t *>(blockBuffer(bytes * members));
    for (int j = 0; j < members; ++j)
      transport().copy(staged + j * bytes, slots[j].in, bytes);
    release(axis, "all_reduce");
    transport().reduceBlocks(out, staged, members, count, dtype, reduction);
  }

  void allGather(MeshAxis axis, const void *in, void *out,
                 std::size_t bytes) override {
    std::vector<Slot> slots = gather(axis, in, bytes, "all_gather");
    for (int j = 0; j < groupSize(axis); ++j)
      transport().copy(static_cast<uint8_t *>(out) + j * bytes, slots[j].in,
                       bytes);
    release(axis, "all_gather");
  }

  void reduceScatter(MeshAxis axis, const void *in, void *out,
                     std::size_t count, CleaveDType dtype,
                     Reduction reduction) override {
    std::size_t bytes = count * elementSize(dtype);
    std::size_t offset = groupIndex(axis) * bytes;
    int members = groupSize(axis);
    std::vector<Slot> slots = gather(axis, in, bytes, "reduce_scatter");
    auto *staged = static_cast<uint8_t *>(blockBuffer(bytes * members));
    for (int j = 0; j < members; ++j)
      transport().copy(staged + j * bytes,
                       static_cast<const uint8_t *>(slots[j].in) + offset,
                       bytes);
    release(axis, "reduce_scatter");
    transport().reduceBlocks(out, staged, members, count, dtype, reduction);
  }

  void allToAll(MeshAxis axis, const void *in, void *out,
                std::size_t bytes) override {
    std::size_t offset = groupIndex(axis) * bytes;
    std::vector<Slot> slots = gather(axis, in, bytes, "all_to_all");
    for (int j = 0; j < groupSize(axis); ++j)
      transport().copy(static_cast<uint8_t *>(out) + j * bytes,
                       static_cast<const uint8_t *>(slots[j].in) + offset,
                       bytes);
    release(axis, "all_to_all");
  }

  void barrier() override {
    job->exchange(LocalJobState::worldKey, rank_, size(), Slot(), "barrier");
  }

  int maxOverDevices(int value) override {
    Slot slot;
    slot.value = value;
    int result = value;
    for (const Slot &each : job->exchange(LocalJobState::worldKey, rank_,
                                          size(), slot, "status exchange"))
      result = std::max(result, each.value);
    return result;
  }

  std::vector<double>
  gatherToFirst(const std::vector<double> &values) override {
    Slot slot;
    slot.values = values;
    std::vector<Slot> slots =
        job->exchange(LocalJobState::worldKey, rank_, size(), slot, "gather");
    std::vector<double> gathered;
    if (rank_ == 0)
      for (const Slot &each : slots)
        gathered.insert(gathered.end(), each.values.begin(), each.values.end());
    return gathered;
  }

  [[noreturn]] void abort(int status) override {
    // Every rank is a thread of this process: ending it ends them all.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status);
  }

private:
  LocalTransport &transport() {
    if (!transport_)
      transport_ = createHostTransport();
    return *transport_;
  }

  static std::size_t elementSize(CleaveDType dtype) {
    std::size_t size = cleave_dtype_size(dtype);
    if (!size)
      throw Error("unknown dtype " + std::to_string(dtype));
    return size;
  }

  /// The inputs of the group along `axis`, once each member's work
  /// producing its own is queued: this rank's later work waits for theirs.
  std::vector<Slot> gather(MeshAxis axis, const void *in, std::size_t bytes,
                           const char *op) {
    Slot slot;
    slot.in = in;
    slot.bytes = bytes;
    slot.mark = transport().mark();
    std::vector<Slot> slots =
        job->exchange(job->groupKey(axis, rank_), groupIndex(axis),
                      groupSize(axis), std::move(slot), op);
    // Every member sees the same slots, so all of them refuse together and
    // none copies from another's buffer.
    for (std::size_t j = 0; j < slots.size(); ++j)
      if (slots[j].bytes != bytes)
        throw Error(std::string(op) + " along " + meshAxisName(axis) +
                    ": member " + std::to_string(groupIndex(axis)) +
                    " brings " + std::to_string(bytes) + " bytes, member " +
                    std::to_string(j) + " " + std::to_string(slots[j].bytes) +
                    " (the programs disagree)");
    for (const Slot &each : slots)
      transport().waitFor(each.mark);
    return slots;
  }

  /// After this rank's copies from the group's inputs are queued: its later
  /// work (which may overwrite its input) waits for every member's copies.
  void release(MeshAxis axis, const char *op) {
    Slot slot;
    slot.mark = transport().mark();
    for (const Slot &each :
         job->exchange(job->groupKey(axis, rank_), groupIndex(axis),
                       groupSize(axis), std::move(slot), op,
                       /*pastFailure=*/true))
      transport().waitFor(each.mark);
  }

  /// Memory for the group's blocks, grown on demand.
  void *blockBuffer(std::size_t bytes) {
    if (bytes <= blockBytes)
      return blocks;
    if (blocks)
      transport().release(blocks);
    blocks = nullptr;
    blocks = transport().allocate(bytes);
    blockBytes = bytes;
    return blocks;
  }

  /// A staging buffer of `bytes`: one a reclaimed send left, or a new one.
  void *stagingBuffer(std::size_t bytes) {
    auto it = pool.find(bytes);
    if (it == pool.end())
      return transport().allocate(bytes);
    void *pointer = it->second;
    pool.erase(it);
    return pointer;
  }

  /// Returns the staging buffers of sends whose receiver's copy has run.
  void reclaim() {
    for (auto it = sent.begin(); it != sent.end();) {
      QueueMark consumed;
      if (job->taken(*it, consumed) && transport().reached(consumed)) {
        pool.emplace((*it)->bytes, (*it)->staged);
        it = sent.erase(it);
      } else {
        ++it;
      }
    }
  }

  void releaseQuietly(void *pointer) noexcept {
    try {
      transport_->release(pointer);
    } catch (const std::exception &) {
    }
  }

  void releaseBuffers() {
    if (!transport_)
      return;
    transport_->synchronize();
    for (auto &[bytes, pointer] : pool)
      transport_->release(pointer);
    pool.clear();
    if (blocks)
      transport_->release(blocks);
    blocks = nullptr;
    blockBytes = 0;
  }

  void checkRank(int rank) const {
    if (rank < 0 || rank >= size())
      throw Error("no rank " + std::to_string(rank) + " in a job of " +
                  std::to_string(size()));
  }

  int peerOf(int stage) const { return pipelinePeer(job->mesh, rank_, stage); }

  std::shared_ptr<LocalJobState> job;
  int rank_;
  CleaveContext *context = nullptr;
  std::unique_ptr<LocalTransport> transport_;
  std::deque<MessagePtr> sent;
  std::multimap<std::size_t, void *> pool;
  void *blocks = nullptr;
  std::size_t blockBytes = 0;
};

} // namespace

InProcessJob::InProcessJob(const MeshShape &mesh, double timeoutSeconds)
    : state(std::make_shared<LocalJobState>(mesh, timeoutSeconds)) {
  for (int r = 0; r < mesh.size(); ++r)
    ranks.push_back(std::make_unique<LocalCommunicator>(state, r));
}

InProcessJob::~InProcessJob() = default;

int InProcessJob::size() const { return static_cast<int>(ranks.size()); }

Communicator &InProcessJob::communicator(int rank) { return *ranks.at(rank); }

bool InProcessJob::fail(int rank, const std::string &reason) {
  return state->fail(rank, reason);
}

bool InProcessJob::failed() const { return state->failed(); }

} // namespace cleave::rt
