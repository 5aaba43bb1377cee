//===- CleaveCommOps.td - communication and partitioned data -*- tablegen -*-=//
//
// The ops that partitioned cleave IR communicates with: point-to-point
// transfers between pipeline stages and collectives within a group of
// devices, plus the per-device slice of a weight. `cleave-partition` creates
// them (docs/partitioning.md); codegen lowers each to a runtime call.
//
// Groups are named by a mesh axis (`"pp"`, `"dp"` or `"tp"`, the axes of
// runtime/include/cleave/rt/Mesh.h): the group of a device is the set of
// devices that differ from it only in their index along that axis. A
// group's devices run the same collectives in the same order, which is what
// the deadlock check of `cleave-verify-partition` relies on; for that reason
// none of these ops is `Pure`, so later passes keep them in program order.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_IR_CLEAVECOMMOPS_TD
#define CLEAVE_DIALECT_CLEAVE_IR_CLEAVECOMMOPS_TD

include "cleave/Dialect/Cleave/IR/CleaveBase.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Point to point
//===----------------------------------------------------------------------===//

def Cleave_SendOp : Cleave_Op<"send"> {
  let summary = "send a tensor to the same device position in another stage";
  let description = [{
    Sends `input` to pipeline stage `peer`: the device of that stage with the
    same tensor-parallel and data-parallel indices as the sender. `tag`
    names the channel; the receiver posts a `cleave.recv` with this stage as
    its peer and the same tag and type. Per microbatch, a stage's sends and
    receives happen in program order.

    Lifecycle: created by `cleave-partition` (stage outlining) at the end of
    the producing stage for every value a later stage uses; checked by
    `cleave-verify-partition`; lowered by codegen to a runtime send. No
    `cleave.send` may remain once the stage program is emitted.

    Verifier labels: `send_c1` (`peer` and `tag` are non-negative),
    `send_c2` (`peer` is not the stage of the enclosing function).

    ```mlir
    cleave.send %x to 1 tag 0 : tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins Cleave_Tensor:$input, I64Attr:$peer, I64Attr:$tag);
  let assemblyFormat = [{
    $input `to` $peer `tag` $tag attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

def Cleave_RecvOp : Cleave_Op<"recv"> {
  let summary = "receive a tensor from the same device position in another stage";
  let description = [{
    Receives the tensor that stage `peer` sends with `tag`; the result type
    is the sent type. The counterpart of `cleave.send`.

    Lifecycle: created by `cleave-partition` (stage outlining) at the start
    of the consuming stage; checked by `cleave-verify-partition`; lowered by
    codegen to a runtime receive into a buffer of the result type. No
    `cleave.recv` may remain once the stage program is emitted.

    Verifier labels: `recv_c1` (`peer` and `tag` are non-negative),
    `recv_c2` (`peer` is not the stage of the enclosing function).

    ```mlir
    %x = cleave.recv from 0 tag 0 : tensor<2x16x64xf32>
    ```
  }];
  let arguments = (ins I64Attr:$peer, I64Attr:$tag);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = [{
    `from` $peer `tag` $tag attr-dict `:` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// A collective over the group of devices along mesh axis `axis`, which
/// holds `group_size` devices. Codegen passes the axis's code (rt/Mesh.h)
/// and the size to the runtime call.
class Cleave_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Cleave_Op<mnemonic, traits> {
  dag groupArgs = (ins Cleave_Tensor:$input, StrAttr:$axis,
                   I64Attr:$group_size);
  let results = (outs Cleave_Tensor:$output);
  let hasVerifier = 1;
}

def Cleave_AllReduceOp
    : Cleave_CollectiveOp<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "reduce a tensor over a group; every device gets the result";
  let description = [{
    Every device of the group along `axis` holds a tensor of the same type;
    each ends with their elementwise reduction by `reduction` (`sum`,
    `product`, `max`, `min` or `average`).

    Lifecycle: created by `cleave-partition` from the `shard.all_reduce`
    that `shard-partition` places after an op whose reduction loop is split
    (the row-parallel matmul of a Megatron MLP); checked by
    `cleave-verify-partition`; lowered by codegen to a runtime all-reduce
    (NCCL or MPI). None may remain once the stage program is emitted.

    Verifier labels: `collective_c1` (`group_size` is positive and `axis`
    is a mesh axis: `pp`, `dp` or `tp`), `collective_c2` (`reduction` is a
    known reduction).

    ```mlir
    %y = cleave.all_reduce %x {axis = "tp", group_size = 2 : i64, reduction = "sum"} : tensor<2x16x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins StrAttr:$reduction));
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Cleave_ReduceStartOp : Cleave_Op<"reduce_start",
    [DestinationStyleOpInterface, MemoryEffects<[MemWrite]>,
     AllTypesMatch<["accumulator", "new_accumulator"]>]> {
  let summary = "add a gradient sum to a bucket reduced over a group";
  let description = [{
    Adds a persistent accumulator (a `cleave.state` that `cleave.accumulate`
    sums a gradient into) to the bucket `id`, whose accumulators are
    all-reduced over the group along `axis`, in place, as one message. The
    bucket's reduction starts at its `last` accumulator, in the step's last
    backward call, after which the sums are final; in the other backward
    calls the op does nothing. The reduction may still be running when the
    op returns, so that it overlaps the rest of the backward: the
    accumulator's only reader is the `cleave.reduce_wait` that ends it, in
    the update. `id` tells the buckets of a program apart. The result is
    the accumulator (destination style).

    Lifecycle: created by `cleave-optimizer-update` (`overlap-reduction`)
    right after the accumulation of a gradient that data-parallel replicas
    sum, the gradients gathered into buckets of about `bucket-bytes` in the
    order the backward makes them; lowered by codegen to a runtime call
    that adds the accumulator to its bucket and, at the last, starts a
    non-blocking all-reduce (MPI, the bucket packed into one message) or
    queues one NCCL group on a stream of its own.

    Verifier labels: `collective_c1`, `collective_c2`, `reduce_start_c1`
    (the only cleave op that uses the result is one `cleave.reduce_wait`;
    the sharding passes' annotations may hold it meanwhile),
    `reduce_start_c2` (in its block, the starts of one bucket share the
    group, the reduction and the element type, and exactly the last of
    them is marked `last`).

    ```mlir
    %g3 = cleave.reduce_start %g2 {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64} : tensor<4x8xf32>
    %h3 = cleave.reduce_start %h2 {axis = "dp", group_size = 2 : i64, reduction = "sum", id = 0 : i64, last} : tensor<8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$accumulator, StrAttr:$axis,
                   I64Attr:$group_size, StrAttr:$reduction, I64Attr:$id,
                   UnitAttr:$last);
  let results = (outs Cleave_FloatTensor:$new_accumulator);
  let assemblyFormat = "$accumulator attr-dict `:` type($accumulator)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    mlir::MutableOperandRange getDpsInitsMutable() {
      return getAccumulatorMutable();
    }
  }];
}

def Cleave_ReduceWaitOp : Cleave_Op<"reduce_wait",
    [DestinationStyleOpInterface, MemoryEffects<[MemWrite]>,
     AllTypesMatch<["accumulator", "new_accumulator"]>]> {
  let summary = "wait for the reduction a reduce_start began";
  let description = [{
    Waits until the reduction of the bucket `id` that the
    `cleave.reduce_start` of its operand added it to has finished; the
    result is the accumulator reduced over the group (destination style).
    It belongs to the update.

    Verifier labels: `reduce_wait_c1` (the operand is the result of the
    `cleave.reduce_start` with the same `id`, or of an annotation of the
    sharding passes that holds it).

    ```mlir
    %g4 = cleave.reduce_wait %g3 {id = 0 : i64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Cleave_FloatTensor:$accumulator, I64Attr:$id);
  let results = (outs Cleave_FloatTensor:$new_accumulator);
  let assemblyFormat = "$accumulator attr-dict `:` type($accumulator)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    mlir::MutableOperandRange getDpsInitsMutable() {
      return getAccumulatorMutable();
    }
  }];
}

def Cleave_AllGatherOp : Cleave_CollectiveOp<"all_gather"> {
  let summary = "concatenate the blocks of a group along one dimension";
  let description = [{
    Device `r` of the group along `axis` holds block `r` of a tensor split
    into `group_size` equal blocks along `dim`; every device ends with the
    whole tensor.

    Lifecycle: created by `cleave-partition` from the `shard.all_gather`
    that `shard-partition` inserts where a split value meets a user that
    needs it whole; checked by `cleave-verify-partition`; lowered by codegen
    to a runtime all-gather. None may remain once the stage program is
    emitted.

    Verifier labels: `collective_c1`, `collective_c3` (`dim` is a dimension
    of the operand), `all_gather_c1` (the result is the operand with `dim`
    multiplied by `group_size`).

    ```mlir
    %y = cleave.all_gather %x {axis = "tp", group_size = 2 : i64, dim = 2 : i64} : tensor<2x16x32xf32> -> tensor<2x16x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins I64Attr:$dim));
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Cleave_ReduceScatterOp : Cleave_CollectiveOp<"reduce_scatter"> {
  let summary = "reduce a tensor over a group; each device keeps one block";
  let description = [{
    Every device of the group along `axis` holds a tensor of the same type;
    device `r` ends with block `r` (of `group_size` equal blocks along
    `dim`) of their reduction by `reduction`. The same result as an
    all-reduce followed by keeping one block, with a `group_size`-th of the
    traffic.

    Lifecycle: created by `cleave-partition` where an all-reduce feeds only
    a `shard.all_slice` of its result along the same axis; checked by
    `cleave-verify-partition`; lowered by codegen to a runtime
    reduce-scatter. None may remain once the stage program is emitted.

    Verifier labels: `collective_c1`, `collective_c2`, `collective_c3`,
    `collective_c4` (the result is the operand with `dim` divided by
    `group_size`, which divides it).

    ```mlir
    %y = cleave.reduce_scatter %x {axis = "tp", group_size = 2 : i64, dim = 1 : i64, reduction = "sum"} : tensor<2x16x64xf32> -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins I64Attr:$dim, StrAttr:$reduction));
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Cleave_AllSliceOp : Cleave_CollectiveOp<"all_slice"> {
  let summary = "keep this device's block of a tensor the group holds whole";
  let description = [{
    Every device of the group along `axis` holds the same tensor; device `r`
    keeps block `r` of `group_size` equal blocks along `dim`. No data moves
    between devices: the op is a local slice at an offset given by the
    device's index along `axis`, which SPMD code knows only at run time.

    Lifecycle: created by `cleave-partition` from the `shard.all_slice` that
    `shard-partition` inserts where a whole value meets a user that needs it
    split; lowered by codegen to a strided copy (or a view). None may remain
    once the stage program is emitted.

    The one collective that may also name `axis = "batch"`: the blocks of
    the batch that the data-parallel replicas and microbatches compute,
    which exchange nothing; the slice takes the block the program computes.

    Verifier labels: `collective_c1`, `collective_c3`, `collective_c4`.

    ```mlir
    %y = cleave.all_slice %x {axis = "tp", group_size = 2 : i64, dim = 2 : i64} : tensor<2x16x64xf32> -> tensor<2x16x32xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins I64Attr:$dim));
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Cleave_AllToAllOp : Cleave_CollectiveOp<"all_to_all"> {
  let summary = "move the split of a tensor from one dimension to another";
  let description = [{
    Device `r` of the group along `axis` holds block `r` of a tensor split
    along `concat_dim`; it ends with block `r` of the same tensor split along
    `split_dim`.

    Lifecycle: created by `cleave-partition` from the `shard.all_to_all`
    that `shard-partition` inserts where a value split along one dimension
    meets a user that needs it split along another; checked by
    `cleave-verify-partition`; lowered by codegen to a runtime all-to-all.
    None may remain once the stage program is emitted.

    Verifier labels: `collective_c1`, `all_to_all_c1` (both dimensions exist
    and differ), `all_to_all_c2` (the result multiplies `concat_dim` and
    divides `split_dim` by `group_size`).

    ```mlir
    %y = cleave.all_to_all %x {axis = "tp", group_size = 2 : i64, split_dim = 1 : i64, concat_dim = 2 : i64} : tensor<2x16x32xf32> -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = !con(groupArgs, (ins I64Attr:$split_dim,
                                       I64Attr:$concat_dim));
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

//===----------------------------------------------------------------------===//
// Partitioned data
//===----------------------------------------------------------------------===//

def Cleave_WeightSliceOp : Cleave_Op<"weight_slice", [Pure]> {
  let summary = "the part of a weight that one device holds";
  let description = [{
    A window of the weight `name` (whose bytes are those of `cleave.weight`:
    `length` bytes at `offset` of `file`, a row-major tensor of shape
    `shape` and the result's element type), starting at `starts`. Without
    `split_dim` the window is the result. With `split_dim`, `axis` and
    `group_size`, the window is `group_size` times the result along
    `split_dim` and device `r` of the group along `axis` holds its block
    `r`. Only the bundle writer reads the bytes; it cuts each device's slice.

    Lifecycle: created by `cleave-partition` for weights that a device holds
    in part (the split of a column- or row-parallel matrix, the pieces of a
    fused projection); lowered by the bundle writer and codegen to a buffer
    of the device's weight shard. A parameter for the cost model.

    Verifier labels: `weight_slice_c1` (`length` is the byte size of
    `shape`), `weight_slice_c2` (`shape` and `starts` have the result's
    rank), `weight_slice_c3` (the window lies inside `shape`),
    `weight_slice_c4` (`split_dim`, `axis` and `group_size` come together,
    with a dimension of the result and a positive size).

    ```mlir
    %w = cleave.weight_slice "fc1.weight" {file = "/models/gpt.onnx.data", offset = 0 : i64, length = 65536 : i64, shape = array<i64: 64, 256>, starts = array<i64: 0, 0>, split_dim = 1 : i64, axis = "tp", group_size = 2 : i64} : tensor<64x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$file, I64Attr:$offset,
                   I64Attr:$length, DenseI64ArrayAttr:$shape,
                   DenseI64ArrayAttr:$starts,
                   OptionalAttr<I64Attr>:$split_dim,
                   OptionalAttr<StrAttr>:$axis,
                   OptionalAttr<I64Attr>:$group_size);
  let results = (outs Cleave_Tensor:$output);
  let assemblyFormat = "$name attr-dict `:` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The window's extent along each dimension.
    ::llvm::SmallVector<int64_t> getWindowShape();
  }];
}

#endif // CLEAVE_DIALECT_CLEAVE_IR_CLEAVECOMMOPS_TD
