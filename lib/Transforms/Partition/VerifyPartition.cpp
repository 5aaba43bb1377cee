//===- VerifyPartition.cpp - memory and deadlock checks ---------*- C++ -*-===//
//
// `cleave-verify-partition`: before anything is emitted, prove that every
// device's peak memory fits and that the stages' communication cannot
// deadlock; otherwise say which device, which op, and by how much.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Analysis/Cost/CostInterface.h"
#include "cleave/Analysis/Cost/CostModel.h"
#include "cleave/Analysis/Cost/Target.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"
#include "cleave/Dialect/Cleave/IR/TrainingPhases.h"
#include "cleave/Transforms/Partition/Contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <deque>
#include <map>
#include <set>

namespace cleave {
#define GEN_PASS_DEF_VERIFYPARTITIONPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

/// `1.20 GB (1200000000 bytes)`: readable, and exact for tests and scripts.
std::string formatBytes(int64_t bytes) {
  double value = static_cast<double>(bytes);
  const char *unit = "bytes";
  std::string readable;
  if (bytes >= 1000000000)
    readable = llvm::formatv("{0:F2} GB", value / 1e9).str();
  else if (bytes >= 1000000)
    readable = llvm::formatv("{0:F2} MB", value / 1e6).str();
  else if (bytes >= 1000)
    readable = llvm::formatv("{0:F2} kB", value / 1e3).str();
  else
    return llvm::formatv("{0} {1}", bytes, unit).str();
  return llvm::formatv("{0} ({1} bytes)", readable, bytes).str();
}

bool isCommunication(Operation *op) {
  return isa<SendOp, RecvOp, AllReduceOp, AllGatherOp, ReduceScatterOp,
             AllToAllOp, ReduceStartOp>(op);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// The op of `func`'s body at which the most activation bytes are live, by
/// the same liveness rules as `cleave::peakActivationBytes` (which gives the
/// number; this finds where).
Operation *findPeakOp(func::FuncOp func) {
  Block &body = func.getBody().front();
  auto bytesOf = [](Value v) { return getTensorBytes(v.getType()); };
  auto isParamOrView = [](Operation *op) {
    auto cost = dyn_cast<CostInterface>(op);
    return cost && (cost.isParameter() || cost.isView());
  };

  llvm::MapVector<Value, std::pair<int64_t, int64_t>> ranges;
  SmallVector<int64_t> bytes;
  for (BlockArgument arg : body.getArguments())
    ranges[arg] = {0, 0};
  SmallVector<Operation *> steps;
  int64_t step = 0;
  for (Operation &op : body) {
    op.walk([&](Operation *user) {
      for (Value operand : user->getOperands()) {
        auto it = ranges.find(getBufferRoot(operand));
        if (it != ranges.end())
          it->second.second = std::max(it->second.second, step);
      }
    });
    if (!isParamOrView(&op))
      for (Value result : op.getResults())
        ranges[result] = {step, step};
    steps.push_back(&op);
    ++step;
  }
  SmallVector<int64_t> delta(step + 1, 0);
  for (auto &[value, range] : ranges) {
    delta[range.first] += bytesOf(value);
    delta[range.second + 1] -= bytesOf(value);
  }
  int64_t live = 0, peak = -1;
  Operation *peakOp = steps.empty() ? func.getOperation() : steps.front();
  for (int64_t i = 0; i < step; ++i) {
    live += delta[i];
    if (live > peak) {
      peak = live;
      peakOp = steps[i];
    }
  }
  return peakOp;
}

/// The largest message a stage sends, receives or reduces: the staging
/// buffer its communication needs on top of the tensors themselves.
int64_t communicationBufferBytes(func::FuncOp func) {
  int64_t largest = 0;
  func.walk([&](Operation *op) {
    if (!isCommunication(op))
      return;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults()))
      largest = std::max(largest, getTensorBytes(v.getType()));
  });
  return largest;
}

/// Checks each device's memory: the sum of its stage functions' (one, or
/// under the interleaved schedule one per model chunk), `devices` of them
/// (`stages` indexed by virtual stage, which runs on device `v mod
/// devices`).
LogicalResult checkMemory(const std::map<int64_t, func::FuncOp> &stages,
                          int64_t devices, const TargetDescription &target,
                          int64_t tp) {
  std::map<int64_t, DeviceMemory> perDevice;
  std::map<int64_t, std::pair<int64_t, func::FuncOp>> largest;
  for (auto [stage, func] : stages) {
    FailureOr<DeviceMemory> memory =
        estimateDeviceMemory(func, communicationBufferBytes(func));
    if (failed(memory))
      return failure();
    int64_t device = stage % devices;
    DeviceMemory &sum = perDevice[device];
    sum.weights += memory->weights;
    sum.activations += memory->activations;
    sum.communication = std::max(sum.communication, memory->communication);
    sum.gradients += memory->gradients;
    sum.optimizerState += memory->optimizerState;
    auto &[bytes, peak] = largest[device];
    if (!peak || memory->total() > bytes)
      largest[device] = {memory->total(), func};
  }
  bool ok = true;
  int64_t capacity = target.device.memoryBytes;
  for (auto &[device, memory] : perDevice) {
    if (memory.total() <= capacity)
      continue;
    std::string ranks = tp > 1 ? llvm::formatv("tp ranks 0-{0}", tp - 1).str()
                               : std::string("tp rank 0");
    findPeakOp(largest[device].second)->emitError()
        << "stage " << device << " (" << ranks << ") needs "
        << formatBytes(memory.total()) << ", "
        << formatBytes(memory.total() - capacity) << " more than the "
        << formatBytes(capacity) << " of a '" << target.device.name
        << "' (weights " << formatBytes(memory.weights) << ", activations "
        << formatBytes(memory.activations) << ", communication buffers "
        << formatBytes(memory.communication)
        << "); the live activations peak at this op";
    ok = false;
  }
  return success(ok);
}

//===----------------------------------------------------------------------===//
// Deadlock
//===----------------------------------------------------------------------===//

/// Collectives run at the top level of their stage (every device of the
/// group reaches them in the same order) over a mesh axis of the plan.
/// The mesh axis and group size of a collective.
std::pair<StringRef, int64_t> getGroup(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::pair<StringRef, int64_t>>(op)
      .Case<AllReduceOp, AllGatherOp, ReduceScatterOp, AllToAllOp,
            ReduceStartOp>([](auto collective) {
        return std::make_pair(collective.getAxis(),
                              static_cast<int64_t>(collective.getGroupSize()));
      })
      .Default([](Operation *) { return std::make_pair(StringRef(), 0); });
}

/// The phase of every op of each stage's function (TrainingPhases.h), by
/// stage; empty for a stage that is not part of a training step.
using StagePhases = std::map<int64_t, llvm::DenseMap<Operation *, StepPhase>>;

/// One send, receive or collective along the pipeline stages of a stage in
/// one step of its schedule: `stage` and `peer` are (virtual) stages, whose
/// devices are `stage mod pp`. A collective has no peer or tag: every
/// device takes part.
struct Transfer {
  enum class Kind { Send, Recv, Collective };
  Operation *op;
  Kind kind;
  int64_t stage;
  int64_t peer;
  int64_t tag;
  Type type;
  PipelineStep step;

  bool isSend() const { return kind == Kind::Send; }
  bool isCollective() const { return kind == Kind::Collective; }
};

std::string describe(const Transfer &t, int64_t microbatches, bool training) {
  int64_t stage = t.stage;
  std::string text;
  if (t.isCollective())
    text = llvm::formatv("stage {0} runs {1} along pp", stage,
                         t.op->getName().getStringRef())
               .str();
  else if (t.isSend())
    text = llvm::formatv("stage {0} sends to stage {1}", stage, t.peer).str();
  else
    text =
        llvm::formatv("stage {0} receives from stage {1}", stage, t.peer).str();
  if (t.isCollective()) {
    if (!training)
      return text;
    return text + llvm::formatv(" ({0} of microbatch {1})",
                                stringifyPipelinePhase(t.step.phase),
                                t.step.microbatch)
                      .str();
  }
  text += llvm::formatv(" (tag {0}", t.tag).str();
  if (training)
    text +=
        llvm::formatv(", {0} of microbatch {1}",
                      stringifyPipelinePhase(t.step.phase), t.step.microbatch)
            .str();
  else if (microbatches > 1)
    text += llvm::formatv(", microbatch {0}", t.step.microbatch).str();
  return text + ")";
}

/// Replays the transfers of every device in the order its schedule runs
/// its stages' phases (a training step's entries: TrainingPhases.h;
/// otherwise the forward alone; under the interleaved schedule each step
/// names the model chunk, the virtual stage, it runs, and the update runs
/// every chunk's), and reports the first transfer that mismatches or the
/// cycle of waits that deadlocks.
///
/// The runtime's communicators never make a send wait for its receiver
/// (rt/Communicator.h): a send completes when it is posted, and a receive
/// when the sender has posted the message it takes. Messages between two
/// devices arrive in the order they were sent, whatever their tags (NCCL
/// has none) and whichever chunks sent them, so a receive that finds
/// another message first is a mismatch. A collective along the pipeline
/// stages (the sum of a parameter that several stages hold, the clipping
/// norm, the loss scale's overflow flag) completes when every device has
/// reached one, and they must be the same collective of the same type.
/// Collectives over the other axes join devices that run the same program
/// in the same order, and cannot deadlock against each other.
class CommunicationSimulator {
public:
  CommunicationSimulator(const std::map<int64_t, func::FuncOp> &stages,
                         const StagePhases &phases,
                         const PipelineSchedule &schedule, bool training)
      : microbatches(schedule.getNumMicrobatches()),
        devices(schedule.getNumStages()), training(training) {
    for (int64_t device = 0; device < devices; ++device) {
      std::vector<Transfer> &sequence = sequences[device];
      auto replay = [&](int64_t stage, const PipelineStep &step) {
        auto found = stages.find(stage);
        if (found == stages.end())
          return;
        const llvm::DenseMap<Operation *, StepPhase> &phaseOf =
            phases.at(stage);
        func::FuncOp func = found->second;
        for (Operation &op : func.getBody().front()) {
          if (training && toPipelinePhase(phaseOf.lookup(&op)) != step.phase)
            continue;
          if (auto send = dyn_cast<SendOp>(op))
            sequence.push_back(
                {&op, Transfer::Kind::Send, stage, send.getPeerAttr().getInt(),
                 send.getTagAttr().getInt(), send.getInput().getType(), step});
          else if (auto recv = dyn_cast<RecvOp>(op))
            sequence.push_back(
                {&op, Transfer::Kind::Recv, stage, recv.getPeerAttr().getInt(),
                 recv.getTagAttr().getInt(), recv.getOutput().getType(), step});
          else if (isCommunication(&op) && getGroup(&op).first == "pp")
            sequence.push_back({&op, Transfer::Kind::Collective, stage, -1, -1,
                                op.getOperand(0).getType(), step});
        }
      };
      for (const PipelineStep &step : schedule.getOrder(device)) {
        if (step.phase == PipelinePhase::Update) {
          for (int64_t chunk = 0; chunk < schedule.getNumChunks(); ++chunk)
            replay(schedule.getVirtualStage(device, chunk), step);
          continue;
        }
        replay(schedule.getVirtualStage(device, step.chunk), step);
      }
      position[device] = 0;
    }
    for (auto &[stage, func] : stages)
      existing.insert(stage);
  }

  LogicalResult run() {
    bool progress = true;
    while (progress) {
      progress = false;
      for (auto &[device, sequence] : sequences) {
        while (const Transfer *transfer = current(device)) {
          if (transfer->isCollective()) {
            if (collectiveBlocker(device))
              break;
            if (failed(checkCollective(device)))
              return failure();
            for (auto &[other, at] : position)
              ++at;
            progress = true;
            continue;
          }
          int64_t peer = deviceOf(transfer->peer);
          if (transfer->isSend()) {
            if (!stageExists(transfer->peer))
              return transfer->op->emitError()
                     << describe(*transfer, microbatches, training)
                     << ", but there is no stage " << transfer->peer;
            inFlight[{device, peer}].push_back(transfer);
          } else {
            std::deque<const Transfer *> &queue = inFlight[{peer, device}];
            if (queue.empty())
              break;
            const Transfer *send = queue.front();
            if (send->tag != transfer->tag || send->type != transfer->type ||
                send->peer != transfer->stage)
              return reportMismatch(*send, *transfer);
            queue.pop_front();
          }
          ++position[device];
          progress = true;
        }
      }
    }
    return reportBlocked();
  }

private:
  int64_t deviceOf(int64_t stage) const { return stage % devices; }

  /// The first device that `device`'s collective waits for: one not at a
  /// collective (waiting in a receive, or finished); none when every
  /// device is at one.
  std::optional<int64_t> collectiveBlocker(int64_t device) {
    for (int64_t other = 0; other < devices; ++other) {
      if (other == device)
        continue;
      const Transfer *at = current(other);
      if (!at || !at->isCollective())
        return other;
    }
    return std::nullopt;
  }

  /// Every device is at a collective along pp: they must be the same.
  LogicalResult checkCollective(int64_t device) {
    const Transfer &first = *current(device);
    for (int64_t other = 0; other < devices; ++other) {
      const Transfer &at = *current(other);
      if (at.op->getName() == first.op->getName() && at.type == first.type)
        continue;
      InFlightDiagnostic diag = first.op->emitError()
                                << "mismatched collective: "
                                << describe(first, microbatches, training)
                                << " on a " << first.type << ", but "
                                << describe(at, microbatches, training)
                                << " on a " << at.type;
      diag.attachNote(at.op->getLoc()) << "the collective it meets";
      return failure();
    }
    return success();
  }

  /// The device that `device`, blocked, waits for.
  int64_t waitsFor(int64_t device) {
    const Transfer &waiting = *current(device);
    if (waiting.isCollective())
      return *collectiveBlocker(device);
    return deviceOf(waiting.peer);
  }
  bool stageExists(int64_t stage) const { return existing.count(stage); }

  const Transfer *current(int64_t device) {
    auto &sequence = sequences[device];
    size_t at = position[device];
    return at < sequence.size() ? &sequence[at] : nullptr;
  }

  LogicalResult reportMismatch(const Transfer &send, const Transfer &recv) {
    InFlightDiagnostic diag =
        send.op->emitError()
        << "mismatched transfer: " << describe(send, microbatches, training)
        << " a " << send.type << ", but stage " << recv.stage;
    if (send.peer != recv.stage)
      diag << ", which runs on the same device, receives first (tag "
           << recv.tag << ", a " << recv.type << ")";
    else
      diag << " expects tag " << recv.tag << " and a " << recv.type;
    diag.attachNote(recv.op->getLoc())
        << "the receive it meets: " << describe(recv, microbatches, training);
    return failure();
  }

  /// When no receive can complete: either every device is done, or the
  /// receives wait in a cycle, or one waits for a device that has finished
  /// (or a stage that does not exist). Every device left waits in a
  /// receive.
  LogicalResult reportBlocked() {
    std::optional<int64_t> first;
    for (auto &[device, sequence] : sequences)
      if (current(device)) {
        first = device;
        break;
      }
    if (!first)
      return success();

    SmallVector<int64_t> path;
    int64_t device = *first;
    while (true) {
      const Transfer &waiting = *current(device);
      int64_t peer = waitsFor(device);
      if (waiting.isCollective() && !current(peer))
        return waiting.op->emitError()
               << "communication cannot complete: "
               << describe(waiting, microbatches, training)
               << ", but the device of stage " << peer
               << " has no transfer left";
      if (!waiting.isCollective() &&
          (!stageExists(waiting.peer) || !current(peer)))
        return waiting.op->emitError()
               << "communication cannot complete: "
               << describe(waiting, microbatches, training) << ", but stage "
               << waiting.peer
               << (stageExists(waiting.peer) ? " has no transfer left"
                                             : " does not exist");
      path.push_back(device);
      if (!llvm::is_contained(path, peer)) {
        device = peer;
        continue;
      }
      ArrayRef<int64_t> cycle(llvm::find(path, peer), path.end());
      std::string chain;
      for (int64_t d : cycle)
        chain += llvm::formatv("{0}stage {1} waits for stage {2}",
                               chain.empty() ? "" : ", ", current(d)->stage,
                               current(d)->isCollective()
                                   ? current(waitsFor(d))->stage
                                   : current(d)->peer)
                     .str();
      const Transfer &head = *current(cycle.front());
      InFlightDiagnostic diag = head.op->emitError()
                                << "communication deadlock: " << chain << "; "
                                << describe(head, microbatches, training)
                                << " here";
      for (int64_t d : cycle.drop_front())
        diag.attachNote(current(d)->op->getLoc())
            << "blocked: " << describe(*current(d), microbatches, training);
      return failure();
    }
  }

  static PipelinePhase toPipelinePhase(StepPhase phase) {
    switch (phase) {
    case StepPhase::Forward:
      return PipelinePhase::Forward;
    case StepPhase::Backward:
      return PipelinePhase::Backward;
    case StepPhase::Update:
      return PipelinePhase::Update;
    }
    llvm_unreachable("every phase is handled");
  }

  int64_t microbatches;
  int64_t devices;
  bool training;
  /// Per device: its transfers in the order its schedule runs them.
  std::map<int64_t, std::vector<Transfer>> sequences;
  std::map<int64_t, size_t> position;
  /// The stages that have a function.
  std::set<int64_t> existing;
  /// The messages sent and not yet received, per (sender, receiver).
  std::map<std::pair<int64_t, int64_t>, std::deque<const Transfer *>> inFlight;
};

LogicalResult checkCollectives(func::FuncOp func,
                               std::optional<PlanContract> contract) {
  WalkResult result = func.walk([&](Operation *op) {
    if (!isCommunication(op))
      return WalkResult::advance();
    if (op->getParentOp() != func.getOperation()) {
      op->emitError() << "communication must be at the top level of its "
                         "stage, where every device of the stage reaches it";
      return WalkResult::interrupt();
    }
    if (!contract || isa<SendOp, RecvOp>(op))
      return WalkResult::advance();
    auto [axis, size] = getGroup(op);
    std::optional<int64_t> expected = contract->axisSize(axis);
    if (!expected || *expected != size) {
      op->emitError() << "runs over mesh axis \"" << axis << "\" with " << size
                      << " devices, which the plan's mesh does not have";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct VerifyPartitionPass
    : public cleave::impl::VerifyPartitionPassBase<VerifyPartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<PlanContract> contract;
    if (getMesh(module)) {
      FailureOr<PlanContract> read = readPlanContract(module);
      if (failed(read))
        return signalPassFailure();
      contract = *read;
    }

    std::map<int64_t, func::FuncOp> stages;
    for (auto func : module.getOps<func::FuncOp>()) {
      std::optional<int64_t> stage = getStage(func);
      if (!stage || func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "a stage function must have one block";
        return signalPassFailure();
      }
      auto [it, inserted] = stages.emplace(*stage, func);
      if (!inserted) {
        func.emitError() << "stage " << *stage << " has two functions, @"
                         << it->second.getSymName() << " and @"
                         << func.getSymName();
        return signalPassFailure();
      }
    }

    bool ok = true;
    for (auto &[stage, func] : stages)
      ok &= succeeded(checkCollectives(func, contract));
    if (!ok)
      return signalPassFailure();

    // A training step runs its stages' phases; without a plan, each stage
    // runs once.
    // The phase of every op of a training step's stages (none otherwise).
    StagePhases phases;
    bool training = isTrainingStepModule(module);
    for (auto &[stage, func] : stages)
      phases[stage] = classifyStepPhases(func.getBody().front(), training);
    PipelineSchedule schedule;
    if (contract) {
      schedule = contract->getSchedule(training);
    } else if (!stages.empty()) {
      PipelineScheduleOptions options;
      options.numStages = stages.rbegin()->first + 1;
      if (training)
        options.phases = {PipelinePhase::Forward, PipelinePhase::Backward,
                          PipelinePhase::Update};
      schedule = llvm::cantFail(PipelineSchedule::create(options));
    }
    for (auto &[stage, func] : stages)
      if (stage < 0 || stage >= schedule.getNumVirtualStages()) {
        func.emitError() << "@" << func.getSymName() << " is stage " << stage
                         << ", but the plan's pipeline has "
                         << schedule.getNumVirtualStages()
                         << (schedule.getNumVirtualStages() == 1 ? " stage"
                                                                 : " stages");
        return signalPassFailure();
      }
    if (failed(
            CommunicationSimulator(stages, phases, schedule, training).run()))
      return signalPassFailure();

    std::string targetName = target;
    if (targetName.empty())
      if (StringAttr attr = getTarget(module))
        targetName = attr.str();
    if (targetName.empty())
      return;
    TargetLoadOptions options;
    options.targetsDirectory = targetsDirectory.empty()
                                   ? defaultTargetsDirectory()
                                   : std::string(targetsDirectory);
    llvm::Expected<TargetDescription> loaded = loadTarget(targetName, options);
    if (!loaded) {
      module.emitError() << "cannot load the target for the memory check: "
                         << llvm::toString(loaded.takeError());
      return signalPassFailure();
    }
    if (failed(checkMemory(stages, schedule.getNumStages(), *loaded,
                           contract ? contract->tp : 1)))
      signalPassFailure();
  }
};

} // namespace
