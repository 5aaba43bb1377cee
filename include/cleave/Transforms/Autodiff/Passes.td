//===- Passes.td - automatic differentiation ---------------*- tablegen -*-===//
//
// The passes that turn a model's forward function into the phases of a
// training step.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_TRANSFORMS_AUTODIFF_PASSES_TD
#define CLEAVE_TRANSFORMS_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttachLossPass : Pass<"cleave-attach-loss", "mlir::ModuleOp"> {
  let summary = "Add a loss result computed from a model output and new labels";
  let description = [{
    Adds to the function `entry` a graph input for the labels and a result
    named `loss`, computed from the result named `logits`:

    - `kind=cross-entropy`: `logits` is a float tensor `[..., C]` and the
      labels are int64 class indices of shape `[...]`; the loss is the mean,
      over the labels that are not `ignore-index`, of
      `-log_softmax(logits)[label]` (PyTorch's `cross_entropy` with
      `reduction='mean'`). A label outside `[0, C)` that is not ignored adds
      nothing to the sum but counts in the mean.
    - `kind=mse`: the labels have the type of `logits` and the loss is the
      mean of `(logits - labels)^2` over every element.

    The labels input is named by `labels`; when the function already has an
    input of that name it is read instead, and its type must fit. The loss
    is built of ops that have gradient rules, so that `cleave-autodiff
    loss=loss` differentiates it.

    Errors name the option: `logits` that names no result (or a result that
    is not a float tensor), a `labels` input of the wrong type, an unknown
    `kind`, a result already named `loss`.

    Before (`cleave-attach-loss="kind=mse logits=y labels=t"`):

    ```mlir
    func.func @main(%x: tensor<4xf32> {cleave.name = "x"}) -> (tensor<4xf32> {cleave.name = "y"}) {
      ...
      return %y : tensor<4xf32>
    }
    ```

    After:

    ```mlir
    func.func @main(%x: tensor<4xf32> {cleave.name = "x"}, %t: tensor<4xf32> {cleave.name = "t"})
        -> (tensor<4xf32> {cleave.name = "y"}, tensor<f32> {cleave.name = "loss"}) {
      ...
      %d = cleave.sub %y, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %s = cleave.mul %d, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %l = cleave.reduce_mean %s {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
      return %y, %l : tensor<4xf32>, tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function that holds the model">,
    Option<"kind", "kind", "std::string", /*default=*/"\"cross-entropy\"",
           "The loss: cross-entropy or mse">,
    Option<"logits", "logits", "std::string", /*default=*/"",
           "The name (cleave.name) of the result the loss reads">,
    Option<"labels", "labels", "std::string", /*default=*/"",
           "The name of the labels input">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "cross-entropy: the label whose targets do not count">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def BatchNormTrainingPass : Pass<"cleave-batch-norm-training", "mlir::ModuleOp"> {
  let summary = "Normalise by batch statistics and update the running statistics";
  let description = [{
    Rewrites the `cleave.batch_norm` ops of the function `entry` as a
    training step computes them (PyTorch's `BatchNorm*d.train()`): the
    output is normalised by the batch's statistics (mean and biased
    variance over every dimension but the channels), built from reductions
    and arithmetic, so that `cleave-autodiff` differentiates through them.

    With `step` (a training step, `cleave compile --train` or
    `--gradients`) every batch_norm is rewritten, and each running statistic
    that is a float32 weight becomes writable and is updated in place, as
    PyTorch updates it: `r = (1 - m) r + m s`, where `m` is one minus the
    op's (ONNX's) momentum and `s` is the batch mean, or the unbiased batch
    variance. The update is a `cleave.sgd_update` of rate `m` by the
    gradient `r - s` (no momentum, so no momentum buffer, and no weight
    decay), with its step count as a `cleave.state` named
    `running_statistic.step:<weight>`. `cleave-autodiff` leaves
    writable weights out of the trainable parameters. A running statistic
    that is not a weight (a constant) is left as it is. Without `step` only
    the ops with `training_mode` (ONNX's `training_mode = 1`) are rewritten,
    and nothing is updated, as ONNX computes them.

    With `sync-replicas=D` (synchronised batch normalisation, PyTorch's
    `SyncBatchNorm`) the statistics are over the batches of all D
    data-parallel replicas: each replica's per-channel sums of the input and
    of the squared deviations are summed over the replicas
    (`cleave.all_reduce` along `dp`, whose gradient is the same all-reduce of
    the cotangent), and the running variance is unbiased over all of them.

    Errors: a batch_norm whose input has no static shape, and (with `step`)
    a running statistic that is a weight of another type than float32.

    Before (`cleave-batch-norm-training`):

    ```mlir
    %m = cleave.weight "bn.running_mean" {...} : tensor<4xf32>
    %v = cleave.weight "bn.running_var" {...} : tensor<4xf32>
    %y = cleave.batch_norm %x, %s, %b, %m, %v : (tensor<2x4x8xf32>, ...) -> tensor<2x4x8xf32>
    ```

    After:

    ```mlir
    %m = cleave.weight "bn.running_mean" {..., cleave.writable} : tensor<4xf32>
    %v = cleave.weight "bn.running_var" {..., cleave.writable} : tensor<4xf32>
    %mean = cleave.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = true} : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
    %c = cleave.sub %x, %mean : (tensor<2x4x8xf32>, tensor<1x4x1xf32>) -> tensor<2x4x8xf32>
    %var = cleave.reduce_mean %c2 {axes = array<i64: 0, 2>, keepdims = true} : ...
    ... (cleave.sgd_update %dm, %one, %m, ... {learning_rate = 1.0e-01 ...})
    %y = cleave.add %scaled, %bias : (tensor<2x4x8xf32>, tensor<4x1xf32>) -> tensor<2x4x8xf32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function whose batch normalisations are rewritten">,
    Option<"step", "step", "bool", /*default=*/"true",
           "A training step: rewrite every batch_norm and update the running "
           "statistics (otherwise only training_mode ones, without update)">,
    Option<"syncReplicas", "sync-replicas", "int64_t", /*default=*/"1",
           "Data-parallel replicas whose batches one batch's statistics are "
           "over (synchronised batch normalisation); 1: each replica's own">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def AutodiffPass : Pass<"cleave-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the gradient of a scalar loss with respect to every trainable parameter";
  let description = [{
    Differentiates the function `entry` in reverse mode. The loss is the
    result whose `cleave.name` is `loss`: a float tensor of one element (a
    0-d scalar, or `tensor<1xf32>` as a ReduceMean with keepdims leaves it).
    The trainable parameters are the float `cleave.weight`s, one per weight
    name (a weight read twice, as tied embeddings are, has one gradient: the
    sum of its uses'), except those whose name `freeze` matches (an LLVM
    regular expression, matched anywhere in the name: anchor it with `^` and
    `$` to match whole names) and the writable ones, which the step already
    updates itself (the running statistics of `cleave-batch-norm-training`).

    The backward ops are built after the forward ones, walking the ops on
    the path from the parameters to the loss in reverse order; each op's
    `cleave::GradientInterface` turns the cotangents of its results into
    those of its operands, and the cotangents of a value used several times
    are summed. The function then returns the loss followed by one gradient
    per parameter, in the order the parameters first appear; its other
    results are dropped, with the ops only they needed. Each gradient result
    is named `grad:<weight name>` (`cleave.name`) and carries
    `cleave.gradient_of = "<weight name>"`, through which later passes find
    the parameter it belongs to. A parameter the loss does not depend on has
    a zero gradient.

    With `loss-scale`, the backward is seeded with the loss scale rather
    than 1 (dynamic loss scaling, for float16 steps): the persistent
    `cleave.state "loss_scale"`, or `loss-scale` while that state is still
    0 (before a step has written it), so that the gradients are the scaled
    loss's; `cleave-optimizer-update` divides them by the same scale.

    Errors: a `loss` that names no result, or one that is not a float scalar;
    a negative `loss-scale`; a function without trainable parameters; a value on the path from the
    parameters to the loss without a static shape; and ops on that path
    without a gradient rule, listed in one error by op and node name.

    Before (`cleave-autodiff="loss=loss"`):

    ```mlir
    func.func @main(%x: tensor<4x8xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
      %w = cleave.weight "w" {...} : tensor<8x16xf32>
      %y = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
      return %l : tensor<f32>
    }
    ```

    After:

    ```mlir
    func.func @main(%x: tensor<4x8xf32> {cleave.name = "x"})
        -> (tensor<f32> {cleave.name = "loss"},
            tensor<8x16xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}) {
      %w = cleave.weight "w" {...} : tensor<8x16xf32>
      %y = cleave.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      %l = cleave.reduce_sum %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x16xf32>) -> tensor<f32>
      %dy = cleave.constant dense<1.000000e+00> : tensor<4x16xf32>
      %xt = cleave.transpose %x {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
      %dw = cleave.matmul %xt, %dy : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
      return %l, %dw : tensor<f32>, tensor<8x16xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function to differentiate">,
    Option<"loss", "loss", "std::string", /*default=*/"",
           "The name (cleave.name) of the result to differentiate">,
    Option<"freeze", "freeze", "std::string", /*default=*/"",
           "Regular expression of the weight names that are not trained">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"0",
           "Dynamic loss scaling: seed the backward with the persistent "
           "loss scale (`cleave.state \"loss_scale\"`), this value before "
           "the first step writes it (0: seed with 1)">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def MixedPrecisionPass : Pass<"cleave-mixed-precision", "mlir::ModuleOp"> {
  let summary = "Compute the matrix products, convolutions and attention on "
                "values rounded to bfloat16 or float16";
  let description = [{
    Automatic mixed precision (PyTorch's `autocast`) for the function
    `entry`: every `cleave.matmul`, `cleave.gemm`, `cleave.conv` and
    `cleave.conv_transpose` reads each operand, and `cleave.attention` its
    query, key and value, rounded to `precision` (`bf16` or `fp16`, to
    nearest, ties to even), and its result is rounded the same way, as a
    low-precision product's result is stored. The rounding is a
    `cleave.cast` to the low precision and one back to float32: the product
    itself accumulates in float32, which is what a low-precision library
    call with float32 accumulation computes.

    Everything else stays float32: the parameters (the master weights, read
    rounded by the products only), softmax and log-softmax (attention's
    mask and softmax too), losses, the statistics of normalisations,
    reductions and elementwise ops. Run before `cleave-autodiff`, the casts'
    gradient rules round the backward's products' operands in the same
    way, and the gradients, their accumulators, the optimizer state and the
    update stay float32.

    Errors: an unknown `precision`, no function `entry`, and a product
    whose operand is not a float32 tensor (float64 products keep their
    precision).

    Before (`cleave-mixed-precision="precision=bf16"`):

    ```mlir
    %y = cleave.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %s = cleave.softmax %y {axis = -1 : i64} : tensor<2x4xf32>
    ```

    After:

    ```mlir
    %xl = cleave.cast %x : tensor<2x3xf32> to tensor<2x3xbf16>
    %xr = cleave.cast %xl : tensor<2x3xbf16> to tensor<2x3xf32>
    %wl = cleave.cast %w : tensor<3x4xf32> to tensor<3x4xbf16>
    %wr = cleave.cast %wl : tensor<3x4xbf16> to tensor<3x4xf32>
    %y = cleave.matmul %xr, %wr : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %yl = cleave.cast %y : tensor<2x4xf32> to tensor<2x4xbf16>
    %yr = cleave.cast %yl : tensor<2x4xbf16> to tensor<2x4xf32>
    %s = cleave.softmax %yr {axis = -1 : i64} : tensor<2x4xf32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function whose products compute in the low precision">,
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "The low precision: bf16 or fp16">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def OptimizerUpdatePass : Pass<"cleave-optimizer-update", "mlir::ModuleOp"> {
  let summary = "Update every parameter by its gradient: a whole training step";
  let description = [{
    Turns the function `entry` as `cleave-autodiff` left it (the loss, then
    one gradient per parameter, each marked `cleave.gradient_of`) into a
    training step over `microbatches` microbatches: after the backward ops,
    the loss and each gradient are added into persistent accumulators
    (`cleave.accumulate` into `cleave.state`s named `loss.sum:<loss>` and
    `grad:<parameter>`); then each parameter is updated in place by
    `optimizer` (`sgd`, `adam` or `adamw`, PyTorch's algorithms) from the
    mean of its accumulated gradients, the accumulators are cleared
    (`cleave.clear`), and the function returns the mean loss alone.

    The device program runs this as three entries: the forward (what the
    loss depends on, and its accumulation) and the backward (the rest of
    the gradients' computation) once per microbatch, and the update (what
    reads the accumulators) once per step. With one microbatch the step
    computes what the whole function did before accumulation.

    The parameter's `cleave.weight` becomes writable (`cleave.writable`: it
    lives in persistent memory, initialised from the weight file), and its
    optimizer state (SGD's momentum buffer when `momentum` is not 0, Adam's
    two moments, a step count) are `cleave.state`s named
    `<optimizer>.<state>:<parameter>`. With
    `clip-grad-norm` the gradients are first scaled by
    `min(1, clip-grad-norm / (norm + 1e-6))`, `norm` the 2-norm of all of
    the mean gradients together (PyTorch's `clip_grad_norm_` after
    accumulating `loss / microbatches`). With `replicas` data-parallel
    replicas (each running the step on its own microbatches), the update
    first sums each accumulator over the replicas (`cleave.all_reduce` along
    `dp`), and the mean is over `microbatches * replicas`: every replica
    then applies the same update and the weights stay equal. With `zero=1`
    (ZeRO stage 1) each replica keeps the optimizer state of one block of
    every parameter (the parameter flattened and cut into `replicas`
    blocks, the last padded with zeros): the update reduce-scatters the
    gradient sums (`cleave.reduce_scatter`), updates its block of a copy of
    the parameter (`cleave.all_slice`), all-gathers the updated blocks and
    writes the whole parameter back (`cleave.assign`); clipping adds the
    blocks' squares over the replicas. With `zero=2` (stage 2) the gradient
    sums are sharded too: each microbatch's gradient is reduce-scattered in
    the backward and a replica accumulates only its block. The learning
    rate is
    `lr`, optionally warmed up linearly over `warmup-steps` and decayed by a
    cosine to `min-lr-ratio * lr` at `decay-steps`.

    With `loss-scale` (dynamic loss scaling; the backward was seeded with
    the scale by `cleave-autodiff`), the update reads the scale from
    `cleave.state "loss_scale"` (`loss-scale` while it is 0) and multiplies
    each gradient scale by its reciprocal, before the clipping norm too.
    An overflow flag, the sum of every reduced gradient times 0 (0, or NaN
    when an element is inf or NaN), is added to the gradient scales: on an
    overflow they are NaN and the updates skip the step, writing neither
    parameters, nor optimizer state, nor step counts. Under ZeRO the flag
    is summed over the replicas, in a pipeline over the stages, so that
    every rank decides alike. After the updates, `cleave.assign`s write the
    next scale (halved on an overflow, doubled after
    `loss-scale-growth-interval` good steps in a row) and the counts of
    good steps since the last change (`loss_scale.good_steps`) and of
    skipped steps (`loss_scale.skipped_steps`).

    Errors: a gradient result whose parameter the function does not read,
    a parameter that is not float32 (the update kernels' type), a negative
    `loss-scale`, and with one a `loss-scale-growth-interval` below 1.

    Before (`cleave-optimizer-update="optimizer=sgd lr=0.1 momentum=0.9"`):

    ```mlir
    func.func @main(%x: tensor<4x8xf32>) -> (tensor<f32> {cleave.name = "loss"},
        tensor<8xf32> {cleave.gradient_of = "w", cleave.name = "grad:w"}) {
      %w = cleave.weight "w" {...} : tensor<8xf32>
      ...
      return %l, %dw : tensor<f32>, tensor<8xf32>
    }
    ```

    After:

    ```mlir
    func.func @main(%x: tensor<4x8xf32>) -> (tensor<f32> {cleave.name = "loss"}) {
      %w = cleave.weight "w" {..., cleave.writable} : tensor<8xf32>
      ...
      %gs = cleave.state "grad:w" : tensor<8xf32>
      %g = cleave.accumulate %dw, %gs : tensor<8xf32>
      %ls = cleave.state "loss.sum:loss" : tensor<f32>
      %lsum = cleave.accumulate %l, %ls {loss} : tensor<f32>
      %one = cleave.constant dense<1.0> : tensor<f32>
      %b = cleave.state "sgd.momentum_buffer:w" : tensor<8xf32>
      %s = cleave.state "sgd.step:w" : tensor<f32>
      %w2, %b2, %s2 = cleave.sgd_update %g, %one, %w, %b, %s {learning_rate = 1.0e-01 : f64, ...} : tensor<8xf32>, tensor<f32>
      %mean = cleave.mul %lsum, %one : ...
      %g3 = cleave.clear %g : tensor<8xf32>
      %l3 = cleave.clear %lsum : tensor<f32>
      return %mean : tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The function to turn into a training step">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd, adam or adamw">,
    Option<"learningRate", "lr", "double", /*default=*/"1e-3",
           "The learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0",
           "sgd: the momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "sgd: Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0",
           "The weight decay (adamw: decoupled from the gradient)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "adam, adamw: the decay of the first moment">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "adam, adamw: the decay of the second moment">,
    Option<"epsilon", "eps", "double", /*default=*/"1e-8",
           "adam, adamw: added to the root of the second moment">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0",
           "Scale the gradients down to this global 2-norm (0: do not clip)">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Steps of linear learning-rate warm-up">,
    Option<"decaySteps", "decay-steps", "int64_t", /*default=*/"0",
           "The step at which the cosine decay ends (0: no decay)">,
    Option<"minLrRatio", "min-lr-ratio", "double", /*default=*/"0",
           "The learning rate at the end of the decay, as a share of lr">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches whose gradients accumulate into one update">,
    Option<"replicas", "replicas", "int64_t", /*default=*/"1",
           "Data-parallel replicas whose sums are all-reduced before the "
           "update">,
    Option<"fromPlan", "from-plan", "bool", /*default=*/"false",
           "Take the microbatches and the replicas from the module's plan "
           "(`cleave.microbatches`, the dp of `cleave.mesh`), which chose "
           "them, instead of the options">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "ZeRO stage: 1 shards the optimizer state over the replicas, 2 "
           "the gradient sums too">,
    Option<"zeroFromPlan", "zero-from-plan", "bool", /*default=*/"false",
           "Take the ZeRO stage from the module's plan (`cleave.zero`, the "
           "stage the plan chose or was pinned to) where it has one, "
           "instead of `zero`">,
    Option<"overlapReduction", "overlap-reduction", "bool",
           /*default=*/"false",
           "With replicas and no ZeRO: start each gradient sum's all-reduce "
           "(cleave.reduce_start) right after the last microbatch's "
           "backward makes the gradient, overlapping the rest of the "
           "backward, and wait for it in the update (cleave.reduce_wait), "
           "instead of all-reducing the sums in the update">,
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"26214400",
           "With overlap-reduction: the bytes of gradient sums gathered "
           "into one bucket, in the order the backward makes them, whose "
           "reduction starts with its last (the first bucket at most "
           "1 MiB; 0: every sum its own bucket)">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"0",
           "Dynamic loss scaling: the initial scale the backward was "
           "seeded with (cleave-autodiff's loss-scale; 0: none)">,
    Option<"lossScaleGrowthInterval", "loss-scale-growth-interval",
           "int64_t", /*default=*/"2000",
           "Dynamic loss scaling: the good steps in a row after which the "
           "scale doubles">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

def RecomputePass : Pass<"cleave-recompute", "mlir::ModuleOp"> {
  let summary = "Recompute the forward activations of a training step in "
                "its backward, segment by segment";
  let description = [{
    Activation recomputation (PyTorch's `checkpoint` per segment): in the
    training step `entry` (as `cleave-optimizer-update` left it), the
    backward reads only the forward's segment boundaries and recomputes
    everything else it reads from them, so that the device program stashes
    the boundaries alone from the forward to the backward.

    The forward is cut where exactly one activation that the forward carries
    is live (the residual stream between two transformer blocks), as the
    planner's segments are; values computed only from the graph inputs and
    the weights (masks, position tables) do not count and are kept. Each
    forward op whose result the backward reads, and that is not a boundary,
    is cloned before its first backward reader, with the clones of its own
    operands; the clones carry `cleave.recomputed` (so that they are told
    apart, and not merged back into the forward by CSE). Ops that write
    memory are never cloned. The result computes the same values: only
    where they are computed, and what the step holds, change.

    With `from-plan`, only the results of forward ops marked
    `cleave.recompute` (the ops of the segments the plan chose to
    recompute, per segment) are recomputed; the others are stashed as
    without the pass. A boundary computed by an op that also carries
    `cleave.recompute_joined` is no boundary: the segments on either side
    of it recompute from the boundary before them (a transformer layer's
    input, rather than its input and the residual stream between its
    attention and its MLP).

    Errors: a function that is not a training step (no `cleave.accumulate`).
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"main\"",
           "The training step to recompute in">,
    Option<"fromPlan", "from-plan", "bool", /*default=*/"false",
           "Recompute only the results of the forward ops the plan marked "
           "(`cleave.recompute`: the segments it chose to recompute); "
           "without a mark nothing is recomputed">,
  ];
  let dependentDialects = ["cleave::CleaveDialect"];
}

#endif // CLEAVE_TRANSFORMS_AUTODIFF_PASSES_TD
