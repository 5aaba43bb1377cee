//===- OptionBinder.cpp - declare an options struct once --------*- C++ -*-===//

#include "cleave/Support/OptionBinder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace cleave;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// OptionBinder
//===----------------------------------------------------------------------===//

OptionBinder::~OptionBinder() = default;

/// Selects `given` among `names`; fails, naming the option (`flagName`) and
/// the names it takes, when it is none of them.
static llvm::Error selectChoice(llvm::StringRef flagName,
                                llvm::ArrayRef<llvm::StringRef> names,
                                llvm::StringRef given,
                                const std::function<void(size_t)> &select) {
  const auto *found = llvm::find(names, given);
  if (found != names.end()) {
    select(found - names.begin());
    return llvm::Error::success();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << flagName << " must be ";
  for (auto [index, name] : llvm::enumerate(names)) {
    if (index > 0)
      os << (index + 1 == names.size() ? " or " : ", ");
    os << "'" << name << "'";
  }
  os << ", got '" << given << "'";
  return llvm::createStringError(text);
}

/// `error` with the option's name (`flagName`) in front.
static llvm::Error prefixError(llvm::StringRef flagName, llvm::Error error) {
  if (!error)
    return error;
  return llvm::createStringError(flagName + ": " +
                                 llvm::toString(std::move(error)));
}

//===----------------------------------------------------------------------===//
// OptionChecker
//===----------------------------------------------------------------------===//

void OptionChecker::fail(const llvm::Twine &message) {
  if (!violation)
    violation = message.str();
}

void OptionChecker::pin(llvm::StringRef flag, std::optional<int64_t> &value,
                        llvm::StringRef help) {
  if (value && *value < 1)
    fail(prefix + flag + " must be a positive integer, got " +
         llvm::Twine(*value));
}

void OptionChecker::fraction(llvm::StringRef flag, double &value,
                             llvm::StringRef help) {
  if (!(value > 0 && value <= 1)) {
    std::string text;
    llvm::raw_string_ostream(text) << llvm::format("%g", value);
    fail(prefix + flag + " must be in (0, 1], got " + text);
  }
}

llvm::Error OptionChecker::takeError() {
  if (!violation)
    return llvm::Error::success();
  llvm::Error error = llvm::createStringError(*violation);
  violation.reset();
  return error;
}

//===----------------------------------------------------------------------===//
// CommandLineOptionGroup
//===----------------------------------------------------------------------===//

CommandLineOptionGroup::~CommandLineOptionGroup() = default;

void CommandLineOptionGroup::pin(llvm::StringRef flag,
                                 std::optional<int64_t> &value,
                                 llvm::StringRef help) {
  auto option = std::make_unique<cl::opt<int64_t>>(
      flag, cl::desc(help), cl::value_desc("N"), cl::sub(command));
  cl::opt<int64_t> &given = *option;
  readers.push_back([&given, &value] {
    if (given.getNumOccurrences())
      value = given.getValue();
    return llvm::Error::success();
  });
  options.push_back(std::move(option));
}

void CommandLineOptionGroup::flag(llvm::StringRef flag, bool &value,
                                  llvm::StringRef help) {
  auto option = std::make_unique<cl::opt<bool>>(
      flag, cl::desc(help), cl::init(value), cl::sub(command));
  cl::opt<bool> &given = *option;
  readers.push_back([&given, &value] {
    value = given.getValue();
    return llvm::Error::success();
  });
  options.push_back(std::move(option));
}

void CommandLineOptionGroup::fraction(llvm::StringRef flag, double &value,
                                      llvm::StringRef help) {
  std::string text;
  llvm::raw_string_ostream(text)
      << help << " (default " << llvm::format("%g", value) << ")";
  auto option = std::make_unique<cl::opt<double>>(
      flag, cl::desc(strings.emplace_back(std::move(text))), cl::init(value),
      cl::value_desc("F"), cl::sub(command));
  cl::opt<double> &given = *option;
  readers.push_back([&given, &value] {
    value = given.getValue();
    return llvm::Error::success();
  });
  options.push_back(std::move(option));
}

void CommandLineOptionGroup::bindChoice(llvm::StringRef flag,
                                        llvm::ArrayRef<llvm::StringRef> names,
                                        std::function<size_t()> get,
                                        std::function<void(size_t)> select,
                                        llvm::StringRef help) {
  llvm::StringRef current = names[get()];
  std::string text =
      (help + ": " + llvm::join(names, ", ") + " (default " + current + ")")
          .str();
  auto option = std::make_unique<cl::opt<std::string>>(
      flag, cl::desc(strings.emplace_back(std::move(text))),
      cl::init(current.str()), cl::sub(command));
  cl::opt<std::string> &given = *option;
  std::vector<llvm::StringRef> choices(names.begin(), names.end());
  std::string flagName = ("--" + flag).str();
  readers.push_back([&given, choices, flagName, select] {
    return selectChoice(flagName, choices, given.getValue(), select);
  });
  options.push_back(std::move(option));
}

void CommandLineOptionGroup::bindText(
    llvm::StringRef flag, std::function<std::string()> get,
    std::function<llvm::Error(llvm::StringRef)> set, llvm::StringRef help) {
  std::string current = get();
  auto option = std::make_unique<cl::opt<std::string>>(
      flag,
      cl::desc(
          strings.emplace_back((help + " (default " + current + ")").str())),
      cl::init(current), cl::sub(command));
  cl::opt<std::string> &given = *option;
  std::string flagName = ("--" + flag).str();
  readers.push_back([&given, flagName, set] {
    return prefixError(flagName, set(given.getValue()));
  });
  options.push_back(std::move(option));
}

llvm::Error CommandLineOptionGroup::read() {
  for (const auto &reader : readers)
    if (llvm::Error error = reader())
      return error;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// PassOptionGroup
//===----------------------------------------------------------------------===//

PassOptionGroup::~PassOptionGroup() = default;

template <typename T>
mlir::detail::PassOptions::Option<T> &
PassOptionGroup::add(llvm::StringRef flag, llvm::StringRef help, T init) {
  std::unique_ptr<mlir::detail::PassOptions::Option<T>> option;
  if (auto *pass = llvm::dyn_cast<mlir::Pass *>(owner))
    option = std::make_unique<mlir::Pass::Option<T>>(
        *pass, flag, cl::desc(help), cl::init(init));
  else
    option = std::make_unique<mlir::detail::PassOptions::Option<T>>(
        *llvm::cast<mlir::detail::PassOptions *>(owner), flag, cl::desc(help),
        cl::init(init));
  auto &result = *option;
  options.push_back(std::move(option));
  return result;
}

void PassOptionGroup::pin(llvm::StringRef flag, std::optional<int64_t> &value,
                          llvm::StringRef help) {
  auto &option = add<int64_t>(
      flag, strings.emplace_back((help + "; 0 means the default").str()), 0);
  readers.push_back([&option, &value] {
    value = option.getValue() != 0 ? std::optional<int64_t>(option.getValue())
                                   : std::nullopt;
    return llvm::Error::success();
  });
  writers.push_back([&option, &value] { option = value.value_or(0); });
}

void PassOptionGroup::flag(llvm::StringRef flag, bool &value,
                           llvm::StringRef help) {
  auto &option = add<bool>(flag, help, value);
  readers.push_back([&option, &value] {
    value = option.getValue();
    return llvm::Error::success();
  });
  writers.push_back([&option, &value] { option = value; });
}

void PassOptionGroup::fraction(llvm::StringRef flag, double &value,
                               llvm::StringRef help) {
  auto &option = add<double>(flag, help, value);
  readers.push_back([&option, &value] {
    value = option.getValue();
    return llvm::Error::success();
  });
  writers.push_back([&option, &value] { option = value; });
}

void PassOptionGroup::bindChoice(llvm::StringRef flag,
                                 llvm::ArrayRef<llvm::StringRef> names,
                                 std::function<size_t()> get,
                                 std::function<void(size_t)> select,
                                 llvm::StringRef help) {
  std::string text = (help + ": " + llvm::join(names, ", ")).str();
  auto &option = add<std::string>(flag, strings.emplace_back(std::move(text)),
                                  names[get()].str());
  std::vector<llvm::StringRef> choices(names.begin(), names.end());
  readers.push_back([&option, choices, flag, select] {
    return selectChoice(flag, choices, option.getValue(), select);
  });
  writers.push_back([&option, choices, get] { option = choices[get()].str(); });
}

void PassOptionGroup::bindText(llvm::StringRef flag,
                               std::function<std::string()> get,
                               std::function<llvm::Error(llvm::StringRef)> set,
                               llvm::StringRef help) {
  auto &option = add<std::string>(flag, help, get());
  readers.push_back([&option, flag, set] {
    return prefixError(flag, set(option.getValue()));
  });
  writers.push_back([&option, get] { option = get(); });
}

llvm::Error PassOptionGroup::read() {
  for (const auto &reader : readers)
    if (llvm::Error error = reader())
      return error;
  return llvm::Error::success();
}

void PassOptionGroup::write() {
  for (const auto &writer : writers)
    writer();
}
