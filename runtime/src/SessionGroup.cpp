//===- SessionGroup.cpp - every device of a bundle in this process --------===//
//
// The ranks of a bundle as threads of one process, kept open across runs:
// each run starts one thread per rank on the same feeds, and the first
// failure stops the others (the in-process job wakes every waiting rank)
// and is reported with the failing rank's place.
//
//===----------------------------------------------------------------------===//

#include "cleave/rt/Runtime.h"

#include "Bundle.h"
#include "local/InProcessJob.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace cleave::rt {

struct SessionGroup::Impl {
  std::unique_ptr<InProcessJob> job;
  std::vector<std::unique_ptr<Session>> sessions;
  /// The first failure of a rank, with its place; set, the group is dead.
  std::string failure;
  std::mutex failing;

  /// Runs `work(rank)` on a thread per rank; throws the first failure.
  void onEveryRank(const std::function<void(int rank)> &work);
};

void SessionGroup::Impl::onEveryRank(const std::function<void(int)> &work) {
  if (!failure.empty())
    throw Error("the ranks of this bundle stopped at an earlier failure: " +
                failure);
  std::vector<std::thread> threads;
  int ranks = job->size();
  for (int rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank] {
      std::string reason;
      try {
        work(rank);
        return;
      } catch (const std::exception &e) {
        reason = e.what();
      } catch (...) {
        reason = "unknown failure";
      }
      // A rank stopped by another's failure says nothing new.
      if (!job->fail(rank, reason))
        return;
      std::lock_guard<std::mutex> lock(failing);
      DevicePlace place = sessions.empty() || !sessions[rank]
                              ? DevicePlace{rank, 0, 0, 0}
                              : sessions[rank]->place();
      failure = "rank " + std::to_string(rank) + " (stage " +
                std::to_string(place.stage) + ", dp " +
                std::to_string(place.dp) + ", tp " + std::to_string(place.tp) +
                "): " + reason;
    });
  for (std::thread &thread : threads)
    thread.join();
  if (!failure.empty())
    throw Error(failure);
}

SessionGroup::SessionGroup(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
SessionGroup::~SessionGroup() = default;

std::unique_ptr<SessionGroup>
SessionGroup::open(const std::string &bundleDir,
                   const SessionOptions &options) {
  if (options.communicator)
    throw Error("a session group joins its own ranks; it takes no "
                "communicator");
  auto impl = std::make_unique<Impl>();
  Manifest manifest = readManifest(bundleDir);
  if (manifest.devices == 1) {
    impl->sessions.push_back(Session::open(bundleDir, options));
    return std::unique_ptr<SessionGroup>(new SessionGroup(std::move(impl)));
  }
  impl->job =
      std::make_unique<InProcessJob>(manifest.mesh(), options.timeoutSeconds);
  impl->sessions.resize(static_cast<std::size_t>(manifest.devices));
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  int threads = options.numThreads > 0
                    ? options.numThreads
                    : static_cast<int>(std::max(
                          1u, cores / static_cast<unsigned>(manifest.devices)));
  impl->onEveryRank([&](int rank) {
    SessionOptions own = options;
    own.numThreads = threads;
    own.communicator = &impl->job->communicator(rank);
    impl->sessions[rank] = Session::open(bundleDir, own);
  });
  return std::unique_ptr<SessionGroup>(new SessionGroup(std::move(impl)));
}

int SessionGroup::size() const {
  return static_cast<int>(impl->sessions.size());
}

Session &SessionGroup::rank(int rank) { return *impl->sessions.at(rank); }

const Session &SessionGroup::rank(int rank) const {
  return *impl->sessions.at(rank);
}

std::vector<Tensor>
SessionGroup::run(const std::map<std::string, Tensor> &feeds) {
  if (!impl->job)
    return impl->sessions.front()->run(feeds);
  std::vector<std::vector<Tensor>> results(impl->sessions.size());
  impl->onEveryRank(
      [&](int rank) { results[rank] = impl->sessions[rank]->run(feeds); });
  std::vector<Tensor> outputs(primary().outputs().size());
  for (std::size_t index = 0; index < outputs.size(); ++index)
    for (std::size_t rank = 0; rank < impl->sessions.size(); ++rank) {
      const Session &session = *impl->sessions[rank];
      if (session.place().dp == 0 && session.writesOutput(index)) {
        outputs[index] = std::move(results[rank][index]);
        break;
      }
    }
  return outputs;
}

std::vector<int> SessionGroup::stateRanks() const {
  std::vector<int> ranks;
  for (std::size_t rank = 0; rank < impl->sessions.size(); ++rank)
    if (impl->sessions[rank]->place().dp == 0)
      ranks.push_back(static_cast<int>(rank));
  return ranks;
}

std::map<std::string, Tensor> SessionGroup::trainedParameters() const {
  // By stage: the blocks of each parameter from the stage's tp devices of
  // the first replica, in tp order.
  std::map<std::pair<int, std::string>, std::vector<Tensor>> blocks;
  std::map<std::pair<int, std::string>, int> splitDims;
  for (int rank : stateRanks()) {
    const Session &session = *impl->sessions[rank];
    for (const PersistentRegion &region : session.persistentLayout().regions)
      splitDims[{session.place().stage, region.name}] = region.splitDim;
    std::map<std::string, Tensor> held = session.trainedParameters();
    for (auto &[name, tensor] : held) {
      std::vector<Tensor> &parts = blocks[{session.place().stage, name}];
      std::size_t tp = static_cast<std::size_t>(session.place().tp);
      if (parts.size() <= tp)
        parts.resize(tp + 1);
      parts[tp] = std::move(tensor);
    }
  }
  std::map<std::string, Tensor> parameters;
  for (auto &[key, parts] : blocks) {
    const std::string &name = key.second;
    // A parameter several stages hold (a shared embedding) is equal on
    // each after the update: the first stage's stands for all.
    if (parameters.count(name))
      continue;
    int dim = splitDims[key];
    parameters.emplace(name, dim < 0 ? std::move(parts.front())
                                     : concatenate(parts, dim));
  }
  return parameters;
}

} // namespace cleave::rt
