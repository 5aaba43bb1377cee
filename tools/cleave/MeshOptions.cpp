//===- MeshOptions.cpp - the mesh pins of plan and compile -------*- C++
//-*-===//

#include "MeshOptions.h"

#include "llvm/Support/WithColor.h"

using namespace cleave;
namespace cl = llvm::cl;

std::optional<int64_t> cleave::getGiven(const cl::opt<int64_t> &option) {
  if (option.getNumOccurrences() == 0)
    return std::nullopt;
  return option.getValue();
}

MeshOptions::MeshOptions(cl::SubCommand &command)
    : pipelineStages("pp", cl::desc("Pin the pipeline stages"),
                     cl::value_desc("P"), cl::sub(command)),
      tensorParallel("tp", cl::desc("Pin the tensor-parallel degree"),
                     cl::value_desc("T"), cl::sub(command)),
      dataParallel("dp", cl::desc("Pin the data-parallel replicas"),
                   cl::value_desc("D"), cl::sub(command)),
      microbatches("microbatches", cl::desc("Pin the microbatches per step"),
                   cl::value_desc("M"), cl::sub(command)),
      schedule("schedule",
               cl::desc("Pipeline schedule: gpipe (default), 1f1b, "
                        "interleaved or interleaved:V (V model chunks per "
                        "device, 2 by default)"),
               cl::value_desc("name"), cl::init("gpipe"), cl::sub(command)) {}

bool MeshOptions::apply(PlanOptions &options, llvm::StringRef tool) const {
  struct Pin {
    const char *flag;
    const cl::opt<int64_t> &option;
    std::optional<int64_t> &slot;
  };
  for (const Pin &pin :
       {Pin{"pp", pipelineStages, options.pipelineStages},
        Pin{"tp", tensorParallel, options.tensorParallel},
        Pin{"dp", dataParallel, options.dataParallel},
        Pin{"microbatches", microbatches, options.microbatches}}) {
    std::optional<int64_t> value = getGiven(pin.option);
    if (value && *value < 1) {
      llvm::WithColor::error(llvm::errs(), tool)
          << "--" << pin.flag << " must be a positive integer, got " << *value
          << "\n";
      return false;
    }
    if (value)
      pin.slot = value;
  }
  llvm::Expected<ScheduleChoice> choice = ScheduleChoice::parse(schedule);
  if (!choice) {
    llvm::WithColor::error(llvm::errs(), tool)
        << "--schedule: " << llvm::toString(choice.takeError()) << "\n";
    return false;
  }
  options.schedule = *choice;
  return true;
}
