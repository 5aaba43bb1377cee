//===- OptionBinder.h - declare an options struct once ----------*- C++ -*-===//
//
// An options struct that users set from several front ends (a subcommand's
// `--flag value`, a pass's or a pass pipeline's `flag=value`) declares each
// of its options once, in a `bindOptions(OptionBinder &)` method: the flag,
// the field that holds the value, its kind and its help. Each front end is
// an `OptionBinder` that turns those declarations into its own options and,
// after parsing, writes the values back into the struct; `OptionChecker`
// walks the same declarations to validate a struct however it was filled.
//
// The kinds carry their checks: a pin is a positive count or unset, a
// fraction lies in (0, 1], a choice is one of its names. Flags and help are
// string literals: the options keep them by reference.
//
//   struct PlanOptions {
//     std::optional<int64_t> pipelineStages;
//     void bindOptions(OptionBinder &binder) {
//       binder.pin("pp", pipelineStages, "Pipeline stages");
//     }
//   };
//   BoundOptions<PlanOptions, CommandLineOptionGroup> plan{subcommand};
//   llvm::Expected<PlanOptions> options = plan.get(); // --pp 2
//
//===----------------------------------------------------------------------===//

#ifndef CLEAVE_SUPPORT_OPTIONBINDER_H
#define CLEAVE_SUPPORT_OPTIONBINDER_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/PointerUnion.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cleave {

/// Receives the declarations of an options struct's options.
class OptionBinder {
public:
  virtual ~OptionBinder();

  /// A count the user may fix; unset, the library chooses it. Set, it must
  /// be positive.
  virtual void pin(llvm::StringRef flag, std::optional<int64_t> &value,
                   llvm::StringRef help) = 0;
  /// An on/off switch; the field's value unless given.
  virtual void flag(llvm::StringRef flag, bool &value,
                    llvm::StringRef help) = 0;
  /// A share in (0, 1].
  virtual void fraction(llvm::StringRef flag, double &value,
                        llvm::StringRef help) = 0;
  /// One of `values`, named by `name`.
  template <typename Enum>
  void choice(llvm::StringRef flag, Enum &value, llvm::ArrayRef<Enum> values,
              llvm::StringRef (*name)(Enum), llvm::StringRef help) {
    llvm::SmallVector<llvm::StringRef> names;
    for (Enum candidate : values)
      names.push_back(name(candidate));
    std::vector<Enum> copy(values.begin(), values.end());
    bindChoice(
        flag, names,
        [&value, copy] {
          return static_cast<size_t>(llvm::find(copy, value) - copy.begin());
        },
        [&value, copy](size_t index) { value = copy[index]; }, help);
  }

  /// One of `values`, or unset (spelled `unsetName`, the default): the
  /// library chooses.
  template <typename Enum>
  void choice(llvm::StringRef flag, std::optional<Enum> &value,
              llvm::ArrayRef<Enum> values, llvm::StringRef (*name)(Enum),
              llvm::StringRef unsetName, llvm::StringRef help) {
    llvm::SmallVector<llvm::StringRef> names = {unsetName};
    for (Enum candidate : values)
      names.push_back(name(candidate));
    std::vector<Enum> copy(values.begin(), values.end());
    bindChoice(
        flag, names,
        [&value, copy] {
          return value ? static_cast<size_t>(llvm::find(copy, *value) -
                                             copy.begin()) +
                             1
                       : 0;
        },
        [&value, copy](size_t index) {
          value =
              index == 0 ? std::nullopt : std::optional<Enum>(copy[index - 1]);
        },
        help);
  }

  /// A value with a spelling of its own (`interleaved:2`): `T` has
  /// `std::string str() const`, and `parse` fails saying what it accepts.
  template <typename T>
  void text(llvm::StringRef flag, T &value,
            llvm::Expected<T> (*parse)(llvm::StringRef), llvm::StringRef help) {
    bindText(
        flag, [&value] { return value.str(); },
        [&value, parse](llvm::StringRef given) -> llvm::Error {
          llvm::Expected<T> parsed = parse(given);
          if (!parsed)
            return parsed.takeError();
          value = *parsed;
          return llvm::Error::success();
        },
        help);
  }

  /// The same, or unset (spelled `unsetName`, the default): the library
  /// chooses.
  template <typename T>
  void text(llvm::StringRef flag, std::optional<T> &value,
            llvm::Expected<T> (*parse)(llvm::StringRef),
            llvm::StringRef unsetName, llvm::StringRef help) {
    std::string unset = unsetName.str();
    bindText(
        flag, [&value, unset] { return value ? value->str() : unset; },
        [&value, parse, unset](llvm::StringRef given) -> llvm::Error {
          if (given == unset) {
            value.reset();
            return llvm::Error::success();
          }
          llvm::Expected<T> parsed = parse(given);
          if (!parsed)
            return parsed.takeError();
          value = *parsed;
          return llvm::Error::success();
        },
        help);
  }

protected:
  /// A value spelled as text: `get` prints the field's value (the default,
  /// until one is given), `set` parses the given spelling into it.
  virtual void bindText(llvm::StringRef flag, std::function<std::string()> get,
                        std::function<llvm::Error(llvm::StringRef)> set,
                        llvm::StringRef help) = 0;
  /// A choice among `names`: `get` gives the index of the field's value
  /// (the default, until one is given), `select` stores the given one's.
  virtual void bindChoice(llvm::StringRef flag,
                          llvm::ArrayRef<llvm::StringRef> names,
                          std::function<size_t()> get,
                          std::function<void(size_t)> select,
                          llvm::StringRef help) = 0;
};

/// Checks the values of an options struct against the kinds its options
/// are declared with. The first violation is kept, as an error that names
/// the option: `<prefix><flag> must be ...`.
class OptionChecker : public OptionBinder {
public:
  /// `prefix` spells the flags as the user wrote them: `--` on a command
  /// line, nothing in pass options.
  explicit OptionChecker(llvm::StringRef prefix) : prefix(prefix) {}

  void pin(llvm::StringRef flag, std::optional<int64_t> &value,
           llvm::StringRef help) override;
  void flag(llvm::StringRef flag, bool &value, llvm::StringRef help) override {}
  void fraction(llvm::StringRef flag, double &value,
                llvm::StringRef help) override;

  /// The first violation, or success.
  llvm::Error takeError();

protected:
  // A choice or a parsed value is checked when it is read.
  void bindChoice(llvm::StringRef flag, llvm::ArrayRef<llvm::StringRef> names,
                  std::function<size_t()> get,
                  std::function<void(size_t)> select,
                  llvm::StringRef help) override {}
  void bindText(llvm::StringRef flag, std::function<std::string()> get,
                std::function<llvm::Error(llvm::StringRef)> set,
                llvm::StringRef help) override {}

private:
  void fail(const llvm::Twine &message);

  std::string prefix;
  std::optional<std::string> violation;
};

/// The declarations as options of a `cleave` subcommand: `--flag value`.
/// A pin is unset unless given.
class CommandLineOptionGroup : public OptionBinder {
public:
  explicit CommandLineOptionGroup(llvm::cl::SubCommand &command)
      : command(command) {}
  ~CommandLineOptionGroup() override;

  void pin(llvm::StringRef flag, std::optional<int64_t> &value,
           llvm::StringRef help) override;
  void flag(llvm::StringRef flag, bool &value, llvm::StringRef help) override;
  void fraction(llvm::StringRef flag, double &value,
                llvm::StringRef help) override;

  /// Writes what the user gave into the bound fields; fails on a choice
  /// that is none of its names.
  llvm::Error read();
  /// Nothing to write back: a command line is parsed once.
  void write() {}

protected:
  void bindChoice(llvm::StringRef flag, llvm::ArrayRef<llvm::StringRef> names,
                  std::function<size_t()> get,
                  std::function<void(size_t)> select,
                  llvm::StringRef help) override;
  void bindText(llvm::StringRef flag, std::function<std::string()> get,
                std::function<llvm::Error(llvm::StringRef)> set,
                llvm::StringRef help) override;

private:
  llvm::cl::SubCommand &command;
  std::vector<std::unique_ptr<llvm::cl::Option>> options;
  std::vector<std::function<llvm::Error()>> readers;
  std::deque<std::string> strings;
};

/// The declarations as options of a pass or a pass pipeline: `flag=value`.
/// A pin is 0 unless given, and 0 leaves it unset.
class PassOptionGroup : public OptionBinder {
public:
  explicit PassOptionGroup(mlir::Pass &pass) : owner(&pass) {}
  explicit PassOptionGroup(mlir::detail::PassOptions &options)
      : owner(&options) {}
  ~PassOptionGroup() override;

  void pin(llvm::StringRef flag, std::optional<int64_t> &value,
           llvm::StringRef help) override;
  void flag(llvm::StringRef flag, bool &value, llvm::StringRef help) override;
  void fraction(llvm::StringRef flag, double &value,
                llvm::StringRef help) override;

  /// Writes the options' values into the bound fields; fails on a choice
  /// that is none of its names.
  llvm::Error read();
  /// Sets the options from the bound fields (so that the pass prints, and
  /// is cloned, with them).
  void write();

protected:
  void bindChoice(llvm::StringRef flag, llvm::ArrayRef<llvm::StringRef> names,
                  std::function<size_t()> get,
                  std::function<void(size_t)> select,
                  llvm::StringRef help) override;
  void bindText(llvm::StringRef flag, std::function<std::string()> get,
                std::function<llvm::Error(llvm::StringRef)> set,
                llvm::StringRef help) override;

private:
  template <typename T>
  mlir::detail::PassOptions::Option<T> &add(llvm::StringRef flag,
                                            llvm::StringRef help, T init);

  llvm::PointerUnion<mlir::Pass *, mlir::detail::PassOptions *> owner;
  std::vector<std::unique_ptr<llvm::cl::Option>> options;
  std::vector<std::function<llvm::Error()>> readers;
  std::vector<std::function<void()>> writers;
  std::deque<std::string> strings;
};

/// An options struct `Options` (with `bindOptions(OptionBinder &, Args...)`)
/// whose options a `Group` declares to a front end.
template <typename Options, typename Group> class BoundOptions {
public:
  template <typename Owner, typename... Args>
  explicit BoundOptions(Owner &owner, Args... bindArgs) : group(owner) {
    values.bindOptions(group, bindArgs...);
  }
  BoundOptions(const BoundOptions &) = delete;
  BoundOptions &operator=(const BoundOptions &) = delete;

  /// The options as given.
  llvm::Expected<Options> get() const {
    if (llvm::Error error = group.read())
      return std::move(error);
    return values;
  }
  /// Makes `options` the values of the front end's options.
  void set(const Options &options) {
    values = options;
    group.write();
  }

private:
  // The group's options write into the fields of `values` whenever they are
  // read, which does not change what this object holds.
  mutable Options values;
  mutable Group group;
};

} // namespace cleave

#endif // CLEAVE_SUPPORT_OPTIONBINDER_H
