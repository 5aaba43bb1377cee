# The fused ops that cleave-simplify makes of the checked-in torch 2
# exports (test/e2e/exports): scaled dot-product attention, RMSNorm, RoPE,
# GELU and LayerNorm decompositions each become one op, so that the cost
# model, the planner, sharding and the kernels see them whole. Counted per
# export; a softmax or IsNaN guard left over from an attention fails the
# check (the two softmaxes of Mixtral are its routers').
#
# RUN: for e in llama-dynamo llama-torchscript qwen3-dynamo phi3-dynamo gemma-dynamo mixtral-dynamo t5-encoder-dynamo gpt2-dynamo gpt2-torchscript bert-torchscript vit-torchscript whisper-dynamo; do \
# RUN:   cleave-translate --import-onnx %S/exports/$e/model.onnx | cleave-opt --cleave-simplify | %python %s $e; done | FileCheck %s
# CHECK:      llama-dynamo: 2 attention, 5 rms_norm, 4 rotary_embedding
# CHECK-NEXT: llama-torchscript: 2 attention, 5 rms_norm, 4 rotary_embedding
# CHECK-NEXT: qwen3-dynamo: 2 attention, 9 rms_norm, 4 rotary_embedding
# CHECK-NEXT: phi3-dynamo: 2 attention, 5 rms_norm, 4 rotary_embedding
# CHECK-NEXT: gemma-dynamo: 2 attention, 2 gelu, 5 rms_norm, 4 rotary_embedding
# CHECK-NEXT: mixtral-dynamo: 2 attention, 5 rms_norm, 4 rotary_embedding, 2 softmax
# CHECK-NEXT: t5-encoder-dynamo: 2 attention, 5 rms_norm
# CHECK-NEXT: gpt2-dynamo: 2 attention, 2 gelu, 5 layer_norm
# CHECK-NEXT: gpt2-torchscript: 2 attention, 2 gelu, 5 layer_norm
# CHECK-NEXT: bert-torchscript: 2 attention, 2 gelu, 5 layer_norm
# CHECK-NEXT: vit-torchscript: 2 attention, 2 gelu, 5 layer_norm
# CHECK-NEXT: whisper-dynamo: 3 attention, 4 gelu, 7 layer_norm

import collections
import re
import sys

KINDS = ("attention", "gelu", "is_nan", "layer_norm", "rms_norm",
         "rotary_embedding", "softmax")
counts = collections.Counter(
    match for match in re.findall(r"= cleave\.([a-z_]+)", sys.stdin.read())
    if match in KINDS)
print(f"{sys.argv[1]}: " + ", ".join(f"{counts[k]} {k}" for k in sorted(counts)))
