// Returns the loss sum itself, which the function then clears in place:
// persistent memory would hand back the cleared bytes.
func.func @main(%x: tensor<2x4xf32> {cleave.name = "x"}) -> (tensor<f32> {cleave.name = "loss"}) {
  %l = cleave.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  %ls = cleave.state "loss.sum:loss" : tensor<f32>
  %la = cleave.accumulate %l, %ls {loss} : tensor<f32>
  %c = cleave.clear %la : tensor<f32>
  return %la : tensor<f32>
}
