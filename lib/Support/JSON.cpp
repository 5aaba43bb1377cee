//===- JSON.cpp - JSON from files that users hand in ----------------------===//

#include "cleave/Support/JSON.h"

using namespace cleave;

/// The deepest nesting of `[` and `{` in `text`, outside strings; stops
/// counting past `limit`.
static unsigned getNestingDepth(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0, e = text.size(); i < e && deepest <= limit; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if ((c == ']' || c == '}') && depth > 0)
      --depth;
  }
  return deepest;
}

llvm::Expected<llvm::json::Value>
cleave::parseBoundedJSON(llvm::StringRef text, unsigned maxDepth) {
  if (getNestingDepth(text, maxDepth) > maxDepth)
    return llvm::createStringError(
        "arrays and objects nest deeper than the " + llvm::Twine(maxDepth) +
        " levels cleave reads");
  return llvm::json::parse(text);
}
