//===- Passes.td - applying a partition plan ---------------*- tablegen -*-===//
//
// The passes that turn planned cleave IR (the plan attributes of
// docs/partitioning.md on `@main`) into one SPMD function per pipeline stage
// with explicit communication, and that prove the result fits and cannot
// deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_PARTITION_PASSES_TD
#define CLEAVE_TRANSFORMS_PARTITION_PASSES_TD

include "mlir/Pass/PassBase.td"

def SplitProjectionsPass : Pass<"cleave-split-projections", "mlir::ModuleOp"> {
  let summary = "Split fused projections whose output is split into pieces";
  let description = [{
    A fused projection (`x @ W + b` followed by a `cleave.split` of the
    output features, as in a fused QKV projection) cannot be split over
    tensor-parallel devices as one matmul: device r's contiguous block of
    the fused output holds parts of the wrong pieces. This canonical form
    gives each piece its own projection, on a `cleave.weight_slice` window
    of `W` (and `b`), so that each piece can be column-parallel on its own.
    The new matmuls and adds inherit `cleave.stage` and `cleave.tp_loop`
    from the fused ones. Run it before planning (it changes what the
    planner costs) and again inside `cleave-partition`; it is idempotent.

    Before:

    ```mlir
    %y = cleave.matmul %x, %w : (tensor<2x8x64xf32>, tensor<64x192xf32>) -> tensor<2x8x192xf32>
    %z = cleave.add %y, %b : (tensor<2x8x192xf32>, tensor<192xf32>) -> tensor<2x8x192xf32>
    %q, %k, %v = cleave.split %z {axis = 2 : i64, sizes = array<i64: 64, 64, 64>} : ...
    ```

    After:

    ```mlir
    %wq = cleave.weight_slice "qkv.weight" {..., shape = array<i64: 64, 192>, starts = array<i64: 0, 0>} : tensor<64x64xf32>
    %bq = cleave.weight_slice "qkv.bias" {..., shape = array<i64: 192>, starts = array<i64: 0>} : tensor<64xf32>
    %yq = cleave.matmul %x, %wq : (tensor<2x8x64xf32>, tensor<64x64xf32>) -> tensor<2x8x64xf32>
    %q = cleave.add %yq, %bq : (tensor<2x8x64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    // ... the same for %k (starts at column 64) and %v (column 128)
    ```
  }];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def ShardPlanPass : Pass<"cleave-shard-plan", "mlir::ModuleOp"> {
  let summary = "Turn the plan's tensor-parallel choices into shard annotations";
  let description = [{
    Reads the plan contract (docs/partitioning.md): the module's
    `cleave.mesh = {pp, tp, dp}` and, on the ops of the entry function,
    `cleave.tp_loop = L` (the op's `ShardingInterface` loop L is split over
    the tp axis; absent: the op runs replicated). Creates the grid
    `shard.grid @tp(shape = T)` and annotates every tensor of the entry
    function with `shard.shard`: the sharding each op's chosen loop gives
    its results, and for every use the sharding the user needs, so that
    upstream `shard-partition` can rewrite the function into SPMD form.

    Parameters (`cleave.weight`, `cleave.weight_slice`, `cleave.constant`,
    `cleave.state`) without `cleave.tp_loop` follow their users: a weight is
    stored split when all its users need the same split, and whole otherwise
    (a constant is always whole). A tensor that ops write in place (a
    trained parameter, a gradient sum, optimizer state) is stored the way
    its writers need it; writers that disagree, or an op that would write
    in place a tensor held in another layout (it would write a resharded
    copy), are errors naming the op. Function arguments and results are
    whole.

    A training step (a function that accumulates its loss) is one microbatch
    of one replica: its batch is never cut, and with `tp = 1` the pass
    leaves it as it is.

    Before:

    ```mlir
    module attributes {cleave.mesh = {pp = 1 : i64, tp = 2 : i64, dp = 1 : i64}} {
      func.func @main(%x: tensor<4x16xf32>) -> tensor<4x64xf32> {
        %w = cleave.weight "w" {...} : tensor<16x64xf32>
        %y = cleave.matmul %x, %w {cleave.stage = 0 : i64, cleave.tp_loop = 1 : i64} : ...
        return %y : tensor<4x64xf32>
      }
    }
    ```

    After:

    ```mlir
    shard.grid @tp(shape = 2)
    func.func @main(%x: tensor<4x16xf32>) -> tensor<4x64xf32> {
      %rep = shard.sharding @tp split_axes = [[]] : !shard.sharding
      %col = shard.sharding @tp split_axes = [[], [0]] : !shard.sharding
      %0 = shard.shard %x to %rep : tensor<4x16xf32>
      %w = cleave.weight "w" {...} : tensor<16x64xf32>
      %1 = shard.shard %w to %col : tensor<16x64xf32>
      %2 = shard.shard %0 to %rep annotate_for_users : tensor<4x16xf32>
      %3 = shard.shard %1 to %col annotate_for_users : tensor<16x64xf32>
      %y = cleave.matmul %2, %3 {...} : ...
      ...
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function that carries the plan">,
  ];
  let dependentDialects = ["mlir::shard::ShardDialect"];
}

def ShardStepPass : Pass<"cleave-shard-step", "mlir::ModuleOp"> {
  let summary = "Split a training step's backward and update as its forward is split";
  let description = [{
    The plan chooses `cleave.tp_loop` for the ops of a training step's
    forward (what the accumulated loss depends on). This pass chooses it
    for every other op of the entry function (the backward and the update
    that `cleave-autodiff` and `cleave-optimizer-update` built), in program
    order: each op takes the split of one of its loops, or none, that moves
    the fewest bytes given the layouts in which its operands arrive. A whole
    operand is sliced for free; a split one is gathered (its bytes) or moved
    to another split dimension (its bytes over the group); a split reduction
    loop costs the all-reduce of its results (twice their bytes). On equal
    cost the op stays whole.

    Megatron's pairs of collectives follow without rules per model: the
    gradient of a column-parallel matmul's input contracts over the split
    features (an all-reduce in the backward where the forward had none),
    the gradient of a row-parallel matmul's input is split like its weight
    (none in the backward where the forward had an all-reduce), and every
    weight's gradient comes out split like the weight. Weights and optimizer
    state (`cleave.state`) take the layout of the first decided op that
    reads them, so that a split parameter's gradient is accumulated, clipped,
    applied and cleared on each device's block; `cleave-shard-plan` then
    stores them that way. An op that writes a tensor in place takes that
    tensor's layout. The all-reduce along `pp` of a parameter that several
    stages hold stays whole, since the stages may split their copies
    differently.

    Does nothing when the plan's `tp` is 1; fails on a function that is not
    a training step.

    Before (the backward of `%y = %x @ %w` with `%w` split by columns):

    ```mlir
    %y = cleave.matmul %x, %w {cleave.tp_loop = 1 : i64} : ...
    ...
    %wt = cleave.transpose %w {perm = array<i64: 1, 0>} : ...
    %dx = cleave.matmul %dy, %wt : ...
    ```

    After:

    ```mlir
    %wt = cleave.transpose %w {cleave.tp_loop = 0 : i64, perm = array<i64: 1, 0>} : ...
    %dx = cleave.matmul %dy, %wt {cleave.tp_loop = 2 : i64} : ...
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The training step's function">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def LowerShardCommPass : Pass<"cleave-lower-shard-comm", "mlir::ModuleOp"> {
  let summary = "Replace upstream shard collectives with cleave communication ops";
  let description = [{
    Once `shard-partition` has made the IR SPMD, its collectives become the
    cleave ops codegen knows: `shard.all_reduce` becomes `cleave.all_reduce`
    (or, when its only user keeps one block along the same axis,
    `cleave.reduce_scatter`), `shard.all_gather` becomes
    `cleave.all_gather`, `shard.all_slice` becomes `cleave.all_slice` and
    `shard.all_to_all` becomes `cleave.all_to_all`. Grid axes become mesh
    axis names (the `cleave.axes` of the grid, `"tp"` for the grid of
    `cleave-shard-plan`). The no-op `tensor.cast`s of resharding fold away,
    and the grids are erased: no `shard` op remains.

    Each collective is one conversion pattern; the conversion target makes
    every `shard` op but `shard.grid` illegal. A collective that cannot be
    lowered (over several grid axes, over an axis that is no mesh axis, over
    the batch axis when it would move data, with a reduction cleave does not
    support, or with no cleave counterpart at all) is an error naming the op
    and the axis.

    Before:

    ```mlir
    %r = shard.all_reduce %y on @tp grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
    ```

    After:

    ```mlir
    %r = cleave.all_reduce %y {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x16xf32>
    ```
  }];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def OutlineStagesPass : Pass<"cleave-outline-stages", "mlir::ModuleOp"> {
  let summary = "Outline each pipeline stage into a function with explicit send/recv";
  let description = [{
    Moves the ops of the entry function, by their `cleave.stage`, into one
    function per stage, `@stage_<s>` (attribute `cleave.stage = s`), and
    erases the entry function. Ops that partitioning created take the stage
    of the op that defines their first operand (or, without one, of their
    first user). A value used by a later stage is sent at the end of its
    stage (`cleave.send`, ordered by destination stage, then by definition)
    and received at the start of each stage that uses it (`cleave.recv`,
    ordered by source stage, then by definition), one tag per value and
    destination. Parameters are not sent: every stage that uses one holds
    its own copy. Entry arguments become arguments of the stages that use
    them (`cleave.input = i`), returned values results of the stages that
    define them (`cleave.output = j`).

    Before:

    ```mlir
    func.func @main(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
      %a = cleave.relu %x {cleave.stage = 0 : i64} : tensor<4x16xf32>
      %b = cleave.tanh %a {cleave.stage = 1 : i64} : tensor<4x16xf32>
      return %b : tensor<4x16xf32>
    }
    ```

    After:

    ```mlir
    func.func @stage_0(%x: tensor<4x16xf32> {cleave.input = 0 : i64}) attributes {cleave.stage = 0 : i64} {
      %a = cleave.relu %x : tensor<4x16xf32>
      cleave.send %a to 1 tag 0 : tensor<4x16xf32>
      return
    }
    func.func @stage_1() -> (tensor<4x16xf32> {cleave.output = 0 : i64}) attributes {cleave.stage = 1 : i64} {
      %a = cleave.recv from 0 tag 0 : tensor<4x16xf32>
      %b = cleave.tanh %a : tensor<4x16xf32>
      return %b : tensor<4x16xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function to outline">,
  ];
  let dependentDialects = ["cleave::CleaveDialect", "mlir::func::FuncDialect"];
}

def GroupChunksPass : Pass<"cleave-group-chunks", "mlir::ModuleOp"> {
  let summary = "Merge the model chunks each device runs under the interleaved schedule into one device function";
  let description = [{
    Under the interleaved schedule (`cleave.schedule = "interleaved:V"`)
    the stage functions are virtual stages: device `d` of a pipeline of
    `pp` stages runs virtual stages `d`, `d + pp`, ..., `d + (V - 1) pp`,
    its model chunks 0 to V - 1. This pass replaces each device's chunk
    functions by one function, `@stage_<d>` (`cleave.stage = d`), whose
    arguments and results are the union of the chunks' graph ports (by
    `cleave.input` / `cleave.output`) and whose body holds the chunks'
    ops in chunk order, each marked with its chunk (`cleave.chunk = c`)
    and its virtual stage (`cleave.stage = v`). Transfers keep their
    virtual stages as peers (the runtime sends to the device of stage
    `v mod pp`). The device program gives every chunk its own forward and
    backward entries and one update for all of them.

    A device takes part in each reduction along pp of the update once:
    every chunk builds its part of each (the k-th all-reduce along pp of
    one chunk's update is its part of the k-th of every other: clipping's
    sum of squares, the loss scale's overflow flag, the gradient of a
    parameter that chunks of several devices read), and the merged
    function adds a device's parts and all-reduces the sum once, on its
    last chunk, for every chunk to read. The update's ops run each chunk
    as far as it can, in chunk order, a merged reduction as soon as every
    chunk has built its part, and after the last one each chunk to its end
    in chunk order. Chunks whose updates reduce different numbers of
    values along pp are an error.

    Without chunks (any other schedule, or no plan) the module is left as
    it is. A pipeline of one stage cannot run chunks: that is an error.
  }];
  let dependentDialects = ["cleave::CleaveDialect", "mlir::func::FuncDialect"];
}

def VerifyPartitionPass : Pass<"cleave-verify-partition", "mlir::ModuleOp"> {
  let summary = "Prove that every device fits in memory and that communication cannot deadlock";
  let description = [{
    Checks the stage functions (`cleave.stage`) of a partitioned module:

    - memory: the peak memory of each stage's devices (the cost model's
      parameters + peak live activations + the largest message a stage
      stages through a communication buffer) must fit the device capacity
      of the target (`target` option, else the module's `cleave.target`
      attribute; without either the memory check is skipped). Otherwise:
      an error on the op at the peak naming the stage, the tp ranks, the
      bytes needed and by how much they exceed the capacity;
    - deadlock: the stages' sends and receives, repeated for
      `cleave.microbatches` microbatches, are simulated with blocking
      (rendezvous) semantics; a send and the receive it meets must agree on
      peer, tag and type. A mismatch is an error on both ops; a state where
      no stage can move is reported as the cycle of stages waiting on each
      other, with every blocked op. Collectives must be at the top level of
      their stage and name a mesh axis of `cleave.mesh` with its size.

    The pass changes nothing. Example error:

    ```
    error: stage 1 (tp ranks 0-1) needs 73.73 kB (73728 bytes), 9.73 kB (9728 bytes) more than
    the 64.00 kB (64000 bytes) of a '64 kB test device' (weights ..., activations ...,
    communication buffers ...); the live activations peak at this op
    ```
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Target preset name or path to a target file">,
    Option<"targetsDirectory", "targets-dir", "std::string",
           /*default=*/"\"\"",
           "Directory of target presets (default: the install location)">,
  ];
}

def PrintLoopShardingsPass : Pass<"cleave-print-loop-shardings"> {
  let summary = "Report, as remarks, the loops of each op that tp may split";
  let description = [{
    For every op with a `ShardingInterface`, emits a remark listing the
    loops `cleave::getShardableLoops` accepts for `num-shards` devices and,
    for each, the layout of every operand and result
    (`cleave::getLoopSharding`): `split(d)`, `replicated`, or
    `partial(<reduction>)`. It shows what the planner chooses from, and
    tests the interface models. Changes nothing.

    ```
    remark: loop 0 (parallel, 4): operands [split(0), replicated] results [split(0)]; loop 2 (reduction, 16): operands [split(1), split(0)] results [partial(sum)]
    ```
  }];
  let options = [
    Option<"numShards", "num-shards", "int64_t", /*default=*/"2",
           "The number of tensor-parallel devices">,
  ];
}

def PartitionPass : Pass<"cleave-partition", "mlir::ModuleOp"> {
  let summary = "Apply a partition plan: SPMD rewrite, stage outlining, communication, checks";
  let description = [{
    The whole of applying a plan, as one pipeline built in C++
    (`cleave::buildPartitionPipeline`, for the `cleave` CLI and Python).

    The plan contract it reads (docs/partitioning.md): module attributes
    `cleave.mesh = {pp = P : i64, tp = T : i64, dp = D : i64}` and
    `cleave.microbatches = M : i64`; on every op of the entry function
    `cleave.stage = S : i64` (stages are contiguous in program order) and,
    optionally, `cleave.tp_loop = L : i64` (loop L of the op's
    `ShardingInterface` is split over tp; absent: replicated). The passes:

    1. `cleave-split-projections`;
    2. `cleave-shard-plan`: tensor-parallel choices become `shard.shard`
       annotations on a `shard.grid @tp`;
    3. upstream `shard-partition` on the entry function: the SPMD rewrite
       (local shapes, `shard.all_reduce` after split reductions,
       resharding where a value's layout and its user's disagree);
    4. `cleave-lower-shard-comm`: `shard` collectives become cleave ones;
    5. `cleave-outline-stages`: one function per stage with send/recv;
    6. `cleave-verify-partition` (unless `verify=false`).

    Data parallelism is not applied here: the stage functions compute one
    microbatch of one data-parallel replica, and the runtime runs `dp`
    replicas of every stage and `cleave.microbatches` microbatches through
    them.

    Before: a planned `@main` (docs/partitioning.md). After: the stage
    functions of `cleave-outline-stages`, for example

    ```mlir
    func.func @stage_0(%x: tensor<4x16xf32> {cleave.input = 0 : i64}) -> (tensor<4x16xf32> {cleave.output = 0 : i64}) attributes {cleave.stage = 0 : i64} {
      %w1 = cleave.weight_slice "fc1.weight" {..., split_dim = 1 : i64, axis = "tp", group_size = 2 : i64} : tensor<16x32xf32>
      %h = cleave.matmul %x, %w1 : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
      %g = cleave.gelu %h : tensor<4x32xf32>
      %w2 = cleave.weight_slice "fc2.weight" {..., split_dim = 0 : i64, axis = "tp", group_size = 2 : i64} : tensor<32x16xf32>
      %y = cleave.matmul %g, %w2 : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
      %r = cleave.all_reduce %y {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<4x16xf32>
      return %r : tensor<4x16xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function that carries the plan">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Target preset name or path, for the memory check">,
    Option<"targetsDirectory", "targets-dir", "std::string",
           /*default=*/"\"\"",
           "Directory of target presets (default: the install location)">,
    Option<"verify", "verify", "bool", /*default=*/"true",
           "Run cleave-verify-partition at the end">,
  ];
  let dependentDialects = [
    "cleave::CleaveDialect", "mlir::func::FuncDialect",
    "mlir::shard::ShardDialect", "mlir::tensor::TensorDialect"
  ];
}

#endif // CLEAVE_TRANSFORMS_PARTITION_PASSES_TD
