//===- Passes.td - cleave dialect passes -------------------*- tablegen -*-===//
//
// The passes that clean up and normalise imported cleave IR before analysis.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_TD
#define CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FusePatternsPass : Pass<"cleave-fuse-patterns"> {
  let summary = "Fuse exported decompositions of GELU, LayerNorm, RMSNorm, RoPE and attention into cleave ops";
  let description = [{
    Exporters that target opsets without a `Gelu`, `LayerNormalization`,
    `RMSNormalization`, `RotaryEmbedding` or `Attention` op (torch.onnx up to opset 17
    writes them as chains of elementwise ops, slices and reductions) leave compositions that the cost model and the code
    generator would otherwise see as a dozen memory-bound ops. This pass
    recognises them and replaces each with the one fused op:

    - `x * 0.5 * (1 + erf(x / sqrt(2)))`, in any association and operand
      order, with `x * (1 / sqrt(2))` accepted for the division, becomes
      `cleave.gelu {approximate = "none"}`;
    - `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`, with the
      cube written as `pow(x, 3)` or `x * x * x`, becomes
      `cleave.gelu {approximate = "tanh"}`;
    - `(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * gamma + beta`,
      where both means reduce the same trailing dimensions with `keepdims`,
      becomes `cleave.layer_norm` with `axis` the first reduced dimension,
      `epsilon` taken from the constant, `scale` gamma and `bias` beta (a
      splat 1.0 scale when there is no multiplication, no bias when there is
      no addition). gamma and beta must broadcast to the normalised shape;
    - `x * reciprocal(sqrt(mean(x^2) + eps)) * w`, with the reciprocal
      written `1 / d` or the product written `x / sqrt(...)`, the square
      `pow(x, 2)` or `x * x`, and the mean over trailing dimensions with
      `keepdims`, becomes `cleave.rms_norm` (Hugging Face's Llama-style
      RMSNorm). A cast of `x` to a wider float type whose result is cast
      back before the multiplication by `w` is absorbed: the fused op keeps
      its statistics in at least float32;
    - `x * cos + rotate_half(x) * sin`, with `rotate_half(x)` written
      `concat(-x[..., d/2:], x[..., :d/2])` (Slice, Neg, Concat), becomes
      `cleave.rotary_embedding` when `x` is `batch x heads x sequence x d`
      and `cos` and `sin` broadcast as `batch x 1 x sequence x d` with
      provably equal halves (`cos(concat(f, f))`, as Hugging Face builds
      them); the tables are reshaped to `batch x sequence x d`;
    - `softmax(scale * q k^T + mask) v` over float32 `batch x heads x
      sequence x head_size` tensors becomes `cleave.attention`: the scale
      is the product of the splat factors on `q`, on `k^T` and on the
      scores (multiplications or a division; torch scales `q` and `k^T` by
      the square root of the scale each), `k^T` is a transpose (of the keys
      or of the key projection) or the batched reshape/transpose/reshape
      that dynamo writes, the mask is the sum of the additive terms that
      broadcast to the scores (a padding mask, T5's position bias; none
      when there is none), and the softmax's `nan_to_zero` carries over.
      Grouped-query keys and values stay expanded to the query's heads, as
      the model computes them, so that the fused op splits by heads as the
      matrix products did. Products of rank 3, `batch*heads x sequence x
      head_size` (torch's nn.MultiheadAttention, `k^T` a transpose), are
      fused as `batch*heads` batches of one head, reshaped to rank 4 and
      back, so that their first dimension stays the one a batch split
      cuts.

    The constants must be `cleave.constant` splats (within float rounding of
    the element type); a chain whose intermediate values are used outside it
    is left alone, since fusing it would compute them twice.

    Before:

    ```mlir
    %c = cleave.constant dense<1.41421354> : tensor<f32>
    %one = cleave.constant dense<1.0> : tensor<f32>
    %half = cleave.constant dense<5.0e-01> : tensor<f32>
    %0 = cleave.div %x, %c : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
    %1 = cleave.erf %0 : tensor<2x64xf32>
    %2 = cleave.add %1, %one : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
    %3 = cleave.mul %x, %2 : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
    %4 = cleave.mul %3, %half : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
    ```

    After:

    ```mlir
    %4 = cleave.gelu %x {approximate = "none"} : tensor<2x64xf32>
    ```
  }];
  let dependentDialects = ["cleave::CleaveDialect"];
}

#endif // CLEAVE_DIALECT_CLEAVE_TRANSFORMS_PASSES_TD
