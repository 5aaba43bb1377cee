# The gradients of the speech and recurrent families of families-torch.py
# (the same script and tolerances, described there) against torch
# autograd: wav2vec2, deepspeech, lstm and gru.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/families-torch.py %t wav2vec2 deepspeech lstm gru | FileCheck %s

# CHECK-LABEL: == wav2vec2
# CHECK-NOT: MISMATCH
# CHECK: wav2vec2: ok 47 gradients, 47 parameters, 47 outputs
# CHECK-LABEL: == deepspeech
# CHECK-NOT: MISMATCH
# CHECK: deepspeech: ok 18 gradients, 18 parameters, 18 outputs
# CHECK-LABEL: == lstm
# CHECK-NOT: MISMATCH
# CHECK: lstm: ok 18 gradients, 18 parameters, 18 outputs
# CHECK-LABEL: == gru
# CHECK-NOT: MISMATCH
# CHECK: gru: ok 6 gradients, 6 parameters, 6 outputs
# CHECK-NOT: MISMATCH
