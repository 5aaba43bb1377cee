//===- PassRegistration.cpp -------------------------------------*- C++ -*-===//

#include "cleave/Dialect/Cleave/Transforms/Passes.h"
