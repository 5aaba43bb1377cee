//===- PrintLoopShardings.cpp - the planner's choices as remarks -*- C++
//-*-===//
//
// `cleave-print-loop-shardings`: `getShardableLoops` and `getLoopSharding`
// made visible, for people reading a plan and for the tests of the
// ShardingInterface models.
//
//===----------------------------------------------------------------------===//

#include "cleave/Transforms/Partition/Passes.h"

#include "cleave/Transforms/Partition/Sharding.h"

#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"

#include "llvm/Support/raw_ostream.h"

namespace cleave {
#define GEN_PASS_DEF_PRINTLOOPSHARDINGSPASS
#include "cleave/Transforms/Partition/Passes.h.inc"
} // namespace cleave

using namespace mlir;
using namespace cleave;

namespace {

void print(llvm::raw_ostream &os, const ValueSharding &layout) {
  switch (layout.kind) {
  case ValueSharding::Kind::Replicated:
    os << "replicated";
    return;
  case ValueSharding::Kind::Split:
    os << "split(" << layout.dim << ")";
    return;
  case ValueSharding::Kind::Partial:
    os << "partial(" << shard::stringifyReductionKind(layout.reduction) << ")";
    return;
  }
}

void print(llvm::raw_ostream &os, ArrayRef<ValueSharding> layouts) {
  os << "[";
  llvm::interleaveComma(layouts, os,
                        [&](const ValueSharding &l) { print(os, l); });
  os << "]";
}

struct PrintLoopShardingsPass
    : public cleave::impl::PrintLoopShardingsPassBase<PrintLoopShardingsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](shard::ShardingInterface op) {
      std::string text;
      llvm::raw_string_ostream os(text);
      SmallVector<OpLoopSharding> loops = getShardableLoops(op, numShards);
      if (loops.empty())
        os << "no loop splits " << numShards << " ways";
      llvm::interleave(
          loops, os,
          [&](const OpLoopSharding &loop) {
            os << "loop " << loop.loop << " ("
               << utils::stringifyIteratorType(loop.iteratorType) << ", "
               << loop.extent << "): operands ";
            print(os, loop.operands);
            os << " results ";
            print(os, loop.results);
          },
          "; ");
      op->emitRemark() << text;
    });
  }
};

} // namespace
