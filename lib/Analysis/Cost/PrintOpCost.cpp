//===- PrintOpCost.cpp - report per-op cost as remarks ----------*- C++ -*-===//
//
// `--cleave-print-op-cost`: the cost model's view of a module, one remark
// per op, for people inspecting a model and for tests of the model.
//
//===----------------------------------------------------------------------===//

#include "cleave/Analysis/Cost/CostModel.h"
#include "cleave/Analysis/Cost/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

namespace cleave {
#define GEN_PASS_DEF_PRINTOPCOST
#include "cleave/Analysis/Cost/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

struct PrintOpCostPass : cleave::impl::PrintOpCostBase<PrintOpCostPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    Location loc = UnknownLoc::get(context);
    if (target.empty())
      return emitError(loc) << "cleave-print-op-cost: no target; pass "
                               "target=NAME (a preset) or target=PATH";
    TargetLoadOptions options;
    options.targetsDirectory =
        targetsDir.empty() ? defaultTargetsDirectory() : targetsDir.getValue();
    llvm::Expected<TargetDescription> loaded = loadTarget(target, options);
    if (!loaded)
      return emitError(loc) << llvm::toString(loaded.takeError());
    targetDescription = std::move(*loaded);
    return success();
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(report(func)))
        return signalPassFailure();
  }

private:
  LogicalResult report(func::FuncOp func) {
    CostOptions options;
    options.allowTF32 = allowTF32;
    int64_t flops = 0, bytesRead = 0, bytesWritten = 0;
    double time = 0, missTime = 0;
    WalkResult walk = func.walk([&](CostInterface op) {
      FailureOr<OpCost> cost = getOpCost(op, *targetDescription, options);
      if (failed(cost))
        return WalkResult::interrupt();
      flops += cost->flops;
      bytesRead += cost->bytesRead;
      bytesWritten += cost->bytesWritten;
      time += cost->time();
      missTime += cost->roofline.missTime;
      // Parameters and views cost nothing to run; a remark on each would
      // only bury the ones that do.
      if (op.isParameter() || op.isView())
        return WalkResult::advance();
      InFlightDiagnostic remark = op->emitRemark();
      remark << "flops=" << cost->flops << " read=" << cost->bytesRead
             << " written=" << cost->bytesWritten
             << " params=" << cost->parameterBytes << " "
             << stringifyPrecision(cost->precision)
             << " time=" << formatSeconds(cost->time()) << " "
             << (cost->roofline.isComputeBound() ? "compute-bound"
                                                 : "memory-bound");
      // On a calibrated target, the table the time came from, what the
      // call takes longer with its data out of the caches, and a
      // convolution's share of the channel blocks and its reorders.
      if (targetDescription->device.calibration)
        remark << " class=" << stringifyKernelClass(cost->kernelClass);
      if (cost->roofline.missTime > 0)
        remark << " miss=" << formatSeconds(cost->roofline.missTime);
      if (cost->blocking.efficiency < 1)
        remark << " blocks="
               << llvm::formatv("{0:f3}", cost->blocking.efficiency).str();
      if (cost->roofline.reorderTime > 0)
        remark << " reorder=" << formatSeconds(cost->roofline.reorderTime);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    FailureOr<DeviceMemory> memory = estimateDeviceMemory(func);
    if (failed(memory))
      return failure();
    // The function runs as one stage: the share of its data that its
    // footprint keeps out of the caches takes the streamed rates.
    double missFraction = 0;
    if (const std::optional<DeviceCalibration> &calibration =
            targetDescription->device.calibration)
      missFraction = calibration->missFraction(
          static_cast<double>(memory->weights + memory->activations));
    InFlightDiagnostic total = func.emitRemark();
    total << "total on " << targetDescription->name << ": flops=" << flops
          << " read=" << bytesRead << " written=" << bytesWritten
          << " time=" << formatSeconds(time + missFraction * missTime)
          << " params=" << memory->weights
          << " peak-activations=" << memory->activations;
    if (missTime > 0)
      total << " miss-fraction=" << llvm::formatv("{0:f3}", missFraction).str();
    return success();
  }

  static std::string formatSeconds(double seconds) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::format("%.3e", seconds) << "s";
    return text;
  }

  std::optional<TargetDescription> targetDescription;
};

} // namespace
