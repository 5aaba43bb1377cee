// RUN: cleave-opt %s --cleave-plan="target=h100-sxm devices=2 pp=2 plan-json=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=JSON
// RUN: cleave-opt %s --pass-pipeline='builtin.module(cleave-plan{target=h100-sxm devices=2 pp=2},cleave-partition{target=h100-sxm})' | FileCheck %s --check-prefix=SEND
// RUN: cleave-opt %s --cleave-plan="target=h100-sxm devices=2 plan-json=%t.auto.json" | FileCheck %s --check-prefix=AUTO
// RUN: FileCheck %s --input-file=%t.auto.json --check-prefix=AUTO-JSON
// RUN: not cleave-opt %s --cleave-plan="target=h100-sxm devices=8 pp=8" 2>&1 | FileCheck %s --check-prefix=TOOMANY

// An encoder-decoder in miniature: the decoder's embedding of %tgt, an
// encoder block on %src, then two decoder blocks, each reading the decoder's
// hidden state and the encoder's output, and a head. The embedding is live
// through the encoder, and the encoder's output through the decoder, so no
// point has exactly one activation live. Asked for two stages, the planner
// cuts where the fewest (two) are live: after the embedding, the encoder
// block and each decoder block, five segments. The batch of 4 runs as 4
// microbatches, and the stages split the work evenly: the embedding and the
// encoder, then the decoder.

// CHECK: module attributes {cleave.mesh = {dp = 1 : i64, pp = 2 : i64, tp = 1 : i64}, cleave.microbatches = 4 : i64
// CHECK:      cleave.matmul %arg1, {{.*}}cleave.stage = 0 : i64
// CHECK:      cleave.layer_norm %arg0, {{.*}}cleave.stage = 0 : i64
// CHECK:      cleave.add %arg0, {{.*}}cleave.stage = 0 : i64
// CHECK:      cleave.weight "dec0.fc.w" {cleave.stage = 1 : i64
// CHECK:      cleave.add {{.*}}cleave.stage = 1 : i64
// CHECK-NOT:  cleave.stage = 0
// CHECK:      return

// The send between the stages carries both values: 2 x 512 x 1024 floats.
// JSON:      "segments": 5,
// JSON:      "communications": [
// JSON-NEXT:   {
// JSON-NEXT:     "kind": "send_recv",
// JSON-NEXT:     "stage": 0,
// JSON:          "bytes": 4194304,

// Both live values cross from stage 0 to stage 1, each as its own
// send/recv pair, in the order of their definitions; stage 1 reads no
// argument.
// SEND-LABEL: func.func @stage_0(
// SEND-NOT:   cleave.recv
// SEND:       %[[EMB:.*]] = cleave.matmul %arg1,
// SEND:       %[[ENC:.*]] = cleave.add %arg0,
// SEND-NEXT:  cleave.send %[[EMB]] to 1 tag 0 : tensor<1x512x1024xf32>
// SEND-NEXT:  cleave.send %[[ENC]] to 1 tag 1 : tensor<1x512x1024xf32>
// SEND-NEXT:  return
// SEND-LABEL: func.func @stage_1()
// SEND-NEXT:  %[[REMB:.*]] = cleave.recv from 0 tag 0 : tensor<1x512x1024xf32>
// SEND-NEXT:  %[[RENC:.*]] = cleave.recv from 0 tag 1 : tensor<1x512x1024xf32>
// SEND-NOT:   cleave.send
// SEND:       cleave.add %[[REMB]], %[[RENC]]
// SEND-NOT:   cleave.send
// SEND:       return

// Without stages asked for, the model stays one segment, as before.
// AUTO: cleave.mesh = {dp = {{[0-9]+}} : i64, pp = 1 : i64
// AUTO-JSON: "segments": 1,

// TOOMANY: error: --pp=8 exceeds the 5 segments the model cuts into

func.func @main(%src: tensor<4x512x1024xf32>, %tgt: tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32> {
  %tw = cleave.weight "dec.embed.w" {file = "w.bin", offset = 0 : i64, length = 4194304 : i64} : tensor<1024x1024xf32>
  %emb = cleave.matmul %tgt, %tw : (tensor<4x512x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x512x1024xf32>

  %eg = cleave.weight "enc.ln.g" {file = "w.bin", offset = 4194304 : i64, length = 4096 : i64} : tensor<1024xf32>
  %eb = cleave.weight "enc.ln.b" {file = "w.bin", offset = 4198400 : i64, length = 4096 : i64} : tensor<1024xf32>
  %ew = cleave.weight "enc.fc.w" {file = "w.bin", offset = 4202496 : i64, length = 4194304 : i64} : tensor<1024x1024xf32>
  %eln = cleave.layer_norm %src, %eg, %eb {axis = 2 : i64} : (tensor<4x512x1024xf32>, tensor<1024xf32>, tensor<1024xf32>) -> tensor<4x512x1024xf32>
  %efc = cleave.matmul %eln, %ew : (tensor<4x512x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x512x1024xf32>
  %enc = cleave.add %src, %efc : (tensor<4x512x1024xf32>, tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32>

  %dw0 = cleave.weight "dec0.fc.w" {file = "w.bin", offset = 8396800 : i64, length = 4194304 : i64} : tensor<1024x1024xf32>
  %dx0 = cleave.add %emb, %enc : (tensor<4x512x1024xf32>, tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32>
  %dfc0 = cleave.matmul %dx0, %dw0 : (tensor<4x512x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x512x1024xf32>
  %h0 = cleave.add %emb, %dfc0 : (tensor<4x512x1024xf32>, tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32>

  %dw1 = cleave.weight "dec1.fc.w" {file = "w.bin", offset = 12591104 : i64, length = 4194304 : i64} : tensor<1024x1024xf32>
  %dx1 = cleave.add %h0, %enc : (tensor<4x512x1024xf32>, tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32>
  %dfc1 = cleave.matmul %dx1, %dw1 : (tensor<4x512x1024xf32>, tensor<1024x1024xf32>) -> tensor<4x512x1024xf32>
  %h1 = cleave.add %h0, %dfc1 : (tensor<4x512x1024xf32>, tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32>
  %out = cleave.add %h1, %enc : (tensor<4x512x1024xf32>, tensor<4x512x1024xf32>) -> tensor<4x512x1024xf32>
  return %out : tensor<4x512x1024xf32>
}
