//===- Arguments.h - the runtime commands' argument scanner -----*- C++ -*-===//
//
// `cleave run` and `cleave train` (and `cleave-worker`) read their
// arguments alike: an optional command word, then options as `--name value`
// or `--name=value` and positional arguments, in any order.
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_RT_SRC_ARGUMENTS_H
#define CLEAVE_RT_SRC_ARGUMENTS_H

#include "cleave/rt/Runtime.h"

#include <cstring>
#include <optional>
#include <string>
#include <utility>

namespace cleave::rt {

class ArgumentScanner {
public:
  /// Scans `argv[1..argc)`, skipping a first argument equal to `command`.
  ArgumentScanner(int argc, char **argv, const char *command)
      : argc(argc), argv(argv) {
    if (next < argc && std::strcmp(argv[next], command) == 0)
      ++next;
  }

  /// Moves to the next argument; false after the last.
  bool advance() {
    if (next >= argc)
      return false;
    current = argv[next++];
    inlineValue.reset();
    // --option=value
    if (current.rfind("--", 0) == 0)
      if (std::size_t equals = current.find('='); equals != std::string::npos) {
        inlineValue = current.substr(equals + 1);
        current.resize(equals);
      }
    return true;
  }

  /// The argument, an option without its `=value`.
  const std::string &arg() const { return current; }
  bool isOption() const { return current.size() > 1 && current[0] == '-'; }

  /// The option's value: what follows `=`, or the next argument; an error
  /// naming the option when there is none.
  std::string value() {
    if (inlineValue)
      return *std::exchange(inlineValue, std::nullopt);
    if (next >= argc)
      throw Error(current + " needs a value");
    return argv[next++];
  }

private:
  int argc;
  char **argv;
  int next = 1;
  std::string current;
  std::optional<std::string> inlineValue;
};

} // namespace cleave::rt

#endif // CLEAVE_RT_SRC_ARGUMENTS_H
