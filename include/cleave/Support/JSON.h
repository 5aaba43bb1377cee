//===- JSON.h - JSON from files that users hand in --------------*- C++ -*-===//
//
// Target files and bundle manifests come from outside. llvm::json's parser
// recurses once per level of nesting, so a file nested a hundred thousand
// deep would overflow the stack; `parseBoundedJSON` refuses such a file
// before parsing it.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_JSON_H
#define CLEAVE_SUPPORT_JSON_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace cleave {

/// The deepest nesting of arrays and objects cleave reads: far more than
/// any target file or manifest has.
inline constexpr unsigned kMaxJSONDepth = 64;

/// Parses `text`; fails as llvm::json::parse does, or, without parsing,
/// when arrays and objects nest deeper than `maxDepth`.
llvm::Expected<llvm::json::Value>
parseBoundedJSON(llvm::StringRef text, unsigned maxDepth = kMaxJSONDepth);

} // namespace cleave

#endif // CLEAVE_SUPPORT_JSON_H
