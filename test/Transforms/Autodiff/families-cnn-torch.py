# The gradients of the mobile CNNs of families-torch.py (the same script and
# tolerances, described there) against torch autograd: mobilenet_v3_small,
# mobilenet_v2 and efficientnet_b0.
#
# REQUIRES: torch
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %S/families-torch.py %t mobilenet_v3_small mobilenet_v2 efficientnet_b0 | FileCheck %s

# CHECK-LABEL: == mobilenet_v3_small
# CHECK-NOT: MISMATCH
# CHECK: mobilenet_v3_small: ok 142 gradients, 142 parameters, 142 outputs
# CHECK-LABEL: == mobilenet_v2
# CHECK-NEXT: floor {{.*}}
# CHECK-NEXT: ReLU6 inputs within twice float32's forward error of 0 or 6: {{[0-9]+}}
# CHECK-NEXT: float64 of the moved images and inputs: {{.*}} away
# CHECK-NOT: MISMATCH
# CHECK: mobilenet_v2: ok 158 gradients, 158 parameters, 158 outputs
# CHECK-LABEL: == efficientnet_b0
# CHECK-NEXT: floor {{.*}}
# CHECK-NOT: MISMATCH
# CHECK: efficientnet_b0: ok 213 gradients, 213 parameters, 213 outputs
# CHECK-NOT: MISMATCH
