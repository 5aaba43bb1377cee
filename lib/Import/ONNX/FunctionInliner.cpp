//===- FunctionInliner.cpp - model-local ONNX functions -------------------===//
//
// A call of a local function is replaced by a copy of the function's nodes
// in which the function's inputs and outputs are the call's values and its
// other values get names of their own. Calls inside a body are inlined in
// turn. The size of the result, in nodes and in bytes, is counted first,
// per function, which also finds functions that call themselves. Each body
// is checked and its values numbered once, at its first call, so that
// inlining a node copies its message once and renames it in place.
//
// Fields that the ONNX release cleave builds against predates (a function's
// attribute defaults, `attribute_proto`, and the IR 10 `overload` of
// functions and nodes) are read from the messages' unknown fields.
//
//===----------------------------------------------------------------------===//

#include "FunctionInliner.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include "onnx/onnx_pb.h"
#include <google/protobuf/unknown_field_set.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

using namespace mlir;
using namespace cleave::onnx_import;

namespace {

/// Field numbers newer than the ONNX protos cleave compiles.
constexpr int kFunctionAttributeProtoField = 11;
constexpr int kFunctionOverloadField = 13;
constexpr int kNodeOverloadField = 8;

bool isDefaultDomain(llvm::StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// The length-delimited unknown fields numbered `number`, in order.
llvm::SmallVector<std::string>
getUnknownBytes(const google::protobuf::UnknownFieldSet &fields, int number) {
  llvm::SmallVector<std::string> found;
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField &field = fields.field(i);
    if (field.number() == number &&
        field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      found.push_back(field.length_delimited());
  }
  return found;
}

/// A string field read from the unknown fields: the last occurrence, as
/// protobuf reads a repeated scalar field; empty when absent.
std::string getUnknownString(const google::protobuf::UnknownFieldSet &fields,
                             int number) {
  llvm::SmallVector<std::string> all = getUnknownBytes(fields, number);
  return all.empty() ? std::string() : all.back();
}

std::string getFunctionKey(llvm::StringRef domain, llvm::StringRef name,
                           llvm::StringRef overload) {
  std::string key = isDefaultDomain(domain) ? "" : domain.str();
  key += '\0';
  key += name;
  key += '\0';
  key += overload;
  return key;
}

/// What the inlined copies of a function (its calls included) add to the
/// graph, counted before anything is copied.
struct InlinedSize {
  uint64_t nodes = 0;
  /// The bytes of the nodes' messages and names, without the prefix of the
  /// call being inlined (counted in `prefixedNames`).
  uint64_t bytes = 0;
  /// The names that carry the call's name as their prefix.
  uint64_t prefixedNames = 0;
};

/// A function's body resolved once for all its calls: each value is
/// numbered (the function's inputs first, then each node's outputs in
/// order), so that an expansion binds names by number.
struct BodyPlan {
  /// Per node: the number of each input and output, -1 where omitted.
  llvm::SmallVector<llvm::SmallVector<int, 4>> nodeInputs;
  llvm::SmallVector<llvm::SmallVector<int, 2>> nodeOutputs;
  /// Per node: its name inside the function (`<op type>_<index>` when
  /// unnamed).
  llvm::SmallVector<std::string> nodeNames;
  /// Per value: the first function output it is, -1 when none.
  llvm::SmallVector<int> valueOutput;
  /// Per function output: the value it is, -1 when nothing defines it.
  llvm::SmallVector<int> outputValues;
  int numValues = 0;
};

struct LocalFunction {
  const onnx::FunctionProto *proto = nullptr;
  /// `domain.name` (and `:overload`), as errors name it.
  std::string displayName;
  /// Attribute defaults (`attribute_proto`), by name.
  std::map<std::string, onnx::AttributeProto> defaults;
  /// Per node of the body: the local function it calls, or null. Set with
  /// `size`, which is counted before any call is inlined.
  llvm::SmallVector<LocalFunction *> callees;
  std::optional<InlinedSize> size;
  /// Made at the first call inlined.
  std::optional<BodyPlan> plan;
};

/// A call being inlined: the graph's names for the function's inputs and
/// outputs (empty where omitted) and the call's attributes by name.
struct Call {
  std::string name;
  llvm::SmallVector<std::string, 4> inputs;
  llvm::SmallVector<std::string, 2> outputs;
  llvm::SmallVector<std::pair<llvm::StringRef, const onnx::AttributeProto *>>
      attributes;

  /// The attribute named `name`, the last when given twice (as protobuf
  /// reads a field given twice).
  const onnx::AttributeProto *findAttribute(llvm::StringRef name) const {
    for (const auto &[given, value] : llvm::reverse(attributes))
      if (given == name)
        return value;
    return nullptr;
  }
};

class Inliner {
public:
  Inliner(onnx::ModelProto &model, Location loc) : model(model), loc(loc) {}

  LogicalResult run(ModelLayout &layout);

private:
  LogicalResult collectFunctions();
  void collectNames();
  /// `stem`, or `stem.N` when the graph already has that name; the name
  /// stays owned by `taken`.
  llvm::StringRef getFreshName(llvm::StringRef stem);
  LocalFunction *lookupCall(const onnx::NodeProto &node);
  /// What a call of `function` inlines to, calls inside it included
  /// (saturating past the limits); fails when the function calls itself,
  /// with `chain` the functions that call it.
  FailureOr<InlinedSize>
  computeSize(LocalFunction &function,
              llvm::SmallVectorImpl<const LocalFunction *> &chain,
              const onnx::NodeProto &call);
  /// Checks `function`'s body once and numbers its values; errors name
  /// `call`, the first call inlined.
  LogicalResult makePlan(LocalFunction &function, const Call &call);
  /// Appends the nodes of `call`'s function to the new graph.
  LogicalResult expand(const Call &call, LocalFunction &function);
  /// What `attribute` of a body node is at `call`: itself, or for a
  /// reference the call's value or else the function's default; null when
  /// neither exists.
  const onnx::AttributeProto *resolve(const onnx::AttributeProto &attribute,
                                      const Call &call,
                                      const LocalFunction &function) const;
  InFlightDiagnostic callError(llvm::StringRef call,
                               const LocalFunction &function) {
    InFlightDiagnostic diag = emitError(loc);
    diag << "node '" << call << "' calls function '" << function.displayName
         << "': ";
    return diag;
  }

  onnx::ModelProto &model;
  Location loc;
  std::optional<int64_t> defaultOpset;
  std::map<std::string, LocalFunction> functions;
  /// The largest attribute a call passes or a function defaults to, what a
  /// reference to a call's attribute may copy into each inlined node.
  uint64_t maxAttributeBytes = 0;
  llvm::StringSet<> taken;
  /// The next `.N` to try for a stem that was taken.
  llvm::StringMap<unsigned> nextSuffix;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
};

uint64_t add(uint64_t a, uint64_t b) { return llvm::SaturatingAdd(a, b); }

uint64_t add(uint64_t a, uint64_t b, uint64_t c) { return add(add(a, b), c); }

/// The number `map` holds for `name`, or -1.
int lookupNumber(const llvm::StringMap<int> &map, llvm::StringRef name) {
  auto it = map.find(name);
  return it == map.end() ? -1 : it->second;
}

uint64_t multiply(uint64_t a, uint64_t b) {
  return llvm::SaturatingMultiply(a, b);
}

} // namespace

LogicalResult Inliner::collectFunctions() {
  for (const onnx::OperatorSetIdProto &entry : model.opset_import())
    if (isDefaultDomain(entry.domain()))
      defaultOpset = entry.version();
  for (const onnx::FunctionProto &proto : model.functions()) {
    LocalFunction function;
    function.proto = &proto;
    std::string overload =
        getUnknownString(proto.unknown_fields(), kFunctionOverloadField);
    function.displayName =
        (proto.domain().empty() ? "" : proto.domain() + ".") + proto.name() +
        (overload.empty() ? "" : ":" + overload);
    for (const std::string &bytes : getUnknownBytes(
             proto.unknown_fields(), kFunctionAttributeProtoField)) {
      onnx::AttributeProto attribute;
      if (!attribute.ParseFromString(bytes))
        return emitError(loc) << "function '" << function.displayName
                              << "': an attribute default is malformed";
      function.defaults[attribute.name()] = std::move(attribute);
    }
    std::string key = getFunctionKey(proto.domain(), proto.name(), overload);
    auto [it, inserted] = functions.try_emplace(key, std::move(function));
    if (!inserted)
      return emitError(loc) << "function '" << it->second.displayName
                            << "' is defined more than once";
  }
  return success();
}

void Inliner::collectNames() {
  const onnx::GraphProto &graph = model.graph();
  for (const onnx::ValueInfoProto &info : graph.input())
    taken.insert(info.name());
  for (const onnx::ValueInfoProto &info : graph.output())
    taken.insert(info.name());
  for (const onnx::ValueInfoProto &info : graph.value_info())
    taken.insert(info.name());
  for (const onnx::TensorProto &tensor : graph.initializer())
    taken.insert(tensor.name());
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &name : node.input())
      taken.insert(name);
    for (const std::string &name : node.output())
      taken.insert(name);
  }
}

llvm::StringRef Inliner::getFreshName(llvm::StringRef stem) {
  auto [it, inserted] = taken.insert(stem);
  if (inserted)
    return it->getKey();
  // Calls of one name (unnamed ones are named by their index, so only
  // named ones) share stems: counting on from the last suffix keeps their
  // renaming linear.
  unsigned &n = nextSuffix[stem];
  for (;;) {
    auto [fresh, added] = taken.insert((stem + "." + llvm::Twine(++n)).str());
    if (added)
      return fresh->getKey();
  }
}

LocalFunction *Inliner::lookupCall(const onnx::NodeProto &node) {
  if (functions.empty())
    return nullptr;
  auto it = functions.find(getFunctionKey(
      node.domain(), node.op_type(),
      getUnknownString(node.unknown_fields(), kNodeOverloadField)));
  return it == functions.end() ? nullptr : &it->second;
}

FailureOr<InlinedSize>
Inliner::computeSize(LocalFunction &function,
                     llvm::SmallVectorImpl<const LocalFunction *> &chain,
                     const onnx::NodeProto &call) {
  if (function.size)
    return *function.size;
  if (llvm::is_contained(chain, &function)) {
    InFlightDiagnostic diag = callError(call.name(), *chain.front());
    diag << "function '" << function.displayName << "' calls itself (";
    bool inCycle = false;
    for (const LocalFunction *caller : chain) {
      inCycle |= caller == &function;
      if (inCycle)
        diag << caller->displayName << " -> ";
    }
    return diag << function.displayName << ")";
  }
  chain.push_back(&function);
  const onnx::FunctionProto &proto = *function.proto;
  // An identity, `<call>/Identity_<output>`, for each output that no node
  // computes (passing an input through).
  InlinedSize size;
  llvm::StringSet<> computed;
  for (const onnx::NodeProto &node : proto.node())
    for (const std::string &output : node.output())
      computed.insert(output);
  for (const std::string &output : proto.output()) {
    if (computed.contains(output))
      continue;
    size.nodes = add(size.nodes, 1);
    size.prefixedNames = add(size.prefixedNames, 1);
    size.bytes = add(size.bytes, output.size() + 32);
  }
  function.callees.clear();
  for (auto [k, node] : llvm::enumerate(proto.node())) {
    LocalFunction *callee = lookupCall(node);
    function.callees.push_back(callee);
    // What a node adds: its message (copied once; a call's is not copied
    // at all, but counting it keeps this simple), its name (unnamed nodes
    // are named `<op type>_<index>`), a `/` after the call's prefix for
    // its name and each output, and a copy of the attribute each
    // reference to the call's attributes takes.
    uint64_t nameBytes = node.name().empty() ? node.op_type().size() + 1 +
                                                   std::to_string(k).size()
                                             : node.name().size();
    uint64_t bytes = add(node.ByteSizeLong(), nameBytes);
    for (const onnx::AttributeProto &attribute : node.attribute())
      if (!attribute.ref_attr_name().empty())
        bytes = add(bytes, maxAttributeBytes);
    uint64_t prefixed = 1 + node.output_size();
    bytes = add(bytes, prefixed);
    size.prefixedNames = add(size.prefixedNames, node.output_size());
    if (!callee) {
      size.nodes = add(size.nodes, 1);
      size.prefixedNames = add(size.prefixedNames, 1);
      size.bytes = add(size.bytes, bytes);
      continue;
    }
    FailureOr<InlinedSize> inner = computeSize(*callee, chain, call);
    if (failed(inner))
      return failure();
    // The callee's names are prefixed by `/<this node's name>` more.
    size.nodes = add(size.nodes, inner->nodes);
    size.prefixedNames = add(size.prefixedNames, inner->prefixedNames);
    size.bytes = add(size.bytes, add(bytes, inner->bytes),
                     multiply(nameBytes + 1, inner->prefixedNames));
  }
  chain.pop_back();
  function.size = size;
  return size;
}

LogicalResult Inliner::makePlan(LocalFunction &function, const Call &call) {
  const onnx::FunctionProto &proto = *function.proto;
  for (const onnx::OperatorSetIdProto &entry : proto.opset_import())
    if (isDefaultDomain(entry.domain()) && defaultOpset &&
        entry.version() != *defaultOpset)
      return callError(call.name, function)
             << "the function uses opset " << entry.version()
             << " of the default ONNX domain and the model uses opset "
             << *defaultOpset << "; cleave inlines functions of the model's "
             << "opset only";

  BodyPlan plan;
  // The number of each name of the body defined so far.
  llvm::StringMap<int> values;
  for (const std::string &name : proto.input())
    if (!values.try_emplace(name, plan.numValues++).second)
      return callError(call.name, function)
             << "the function declares input '" << name << "' twice";
  llvm::StringMap<int> outputIndex;
  for (auto [i, name] : llvm::enumerate(proto.output()))
    outputIndex.try_emplace(name, static_cast<int>(i));
  plan.valueOutput.assign(plan.numValues, -1);
  for (auto [name, value] : llvm::zip(proto.input(), plan.valueOutput))
    value = lookupNumber(outputIndex, name);

  for (auto [k, node] : llvm::enumerate(proto.node())) {
    std::string local = node.name().empty()
                            ? node.op_type() + "_" + std::to_string(k)
                            : node.name();
    auto &inputs = plan.nodeInputs.emplace_back();
    for (const std::string &input : node.input()) {
      if (input.empty()) {
        inputs.push_back(-1);
        continue;
      }
      auto it = values.find(input);
      if (it == values.end())
        return callError(call.name, function)
               << "its node '" << call.name << "/" << local << "' reads '"
               << input
               << "', which is neither an input of the function nor an "
                  "output of an earlier node of it";
      inputs.push_back(it->second);
    }
    auto &outputs = plan.nodeOutputs.emplace_back();
    for (const std::string &output : node.output()) {
      if (output.empty()) {
        outputs.push_back(-1);
        continue;
      }
      if (!values.try_emplace(output, plan.numValues).second)
        return callError(call.name, function)
               << "its node '" << call.name << "/" << local << "' writes '"
               << output << "', which the function already defines";
      outputs.push_back(plan.numValues++);
      plan.valueOutput.push_back(lookupNumber(outputIndex, output));
    }
    plan.nodeNames.push_back(std::move(local));
  }
  for (const std::string &name : proto.output())
    plan.outputValues.push_back(lookupNumber(values, name));
  function.plan = std::move(plan);
  return success();
}

const onnx::AttributeProto *
Inliner::resolve(const onnx::AttributeProto &attribute, const Call &call,
                 const LocalFunction &function) const {
  if (attribute.ref_attr_name().empty())
    return &attribute;
  if (const onnx::AttributeProto *given =
          call.findAttribute(attribute.ref_attr_name()))
    return given;
  auto it = function.defaults.find(attribute.ref_attr_name());
  return it == function.defaults.end() ? nullptr : &it->second;
}

LogicalResult Inliner::expand(const Call &call, LocalFunction &function) {
  const onnx::FunctionProto &proto = *function.proto;
  if (call.inputs.size() > static_cast<size_t>(proto.input_size()))
    return callError(call.name, function)
           << "the call passes " << call.inputs.size()
           << " inputs and the function takes " << proto.input_size();
  if (call.outputs.size() > static_cast<size_t>(proto.output_size()))
    return callError(call.name, function)
           << "the call names " << call.outputs.size()
           << " outputs and the function returns " << proto.output_size();
  if (!function.plan && failed(makePlan(function, call)))
    return failure();
  const BodyPlan &plan = *function.plan;

  // The graph's name of each value of the body; what they refer to (the
  // call's names, `taken`'s keys) outlives the expansion.
  llvm::SmallVector<llvm::StringRef> names(plan.numValues);
  for (auto [name, input] : llvm::zip(names, call.inputs))
    name = input;
  std::string prefix = call.name + "/";
  // A value the call names takes the call's name, the others one of their
  // own under the call's prefix.
  auto nameOutput = [&](int value, const std::string &output) {
    int index = plan.valueOutput[value];
    names[value] = index >= 0 &&
                           static_cast<size_t>(index) < call.outputs.size() &&
                           !call.outputs[index].empty()
                       ? llvm::StringRef(call.outputs[index])
                       : getFreshName(prefix + output);
    return names[value];
  };

  for (auto [k, inner] : llvm::enumerate(proto.node())) {
    std::string name = prefix + plan.nodeNames[k];
    if (LocalFunction *callee = function.callees[k]) {
      Call nested;
      nested.name = std::move(name);
      for (int value : plan.nodeInputs[k])
        nested.inputs.emplace_back(value < 0 ? llvm::StringRef()
                                             : names[value]);
      for (auto [value, output] :
           llvm::zip(plan.nodeOutputs[k], inner.output()))
        nested.outputs.emplace_back(value < 0 ? llvm::StringRef()
                                              : nameOutput(value, output));
      for (const onnx::AttributeProto &attribute : inner.attribute())
        if (const onnx::AttributeProto *value =
                resolve(attribute, call, function))
          nested.attributes.emplace_back(attribute.name(), value);
      if (failed(expand(nested, *callee)))
        return failure();
      continue;
    }

    // The node's one copy, renamed in place.
    onnx::NodeProto &node = *nodes.Add();
    node = inner;
    node.set_name(std::move(name));
    for (auto [value, input] :
         llvm::zip(plan.nodeInputs[k], *node.mutable_input()))
      if (value >= 0)
        input = names[value].str();
    for (auto [value, output] :
         llvm::zip(plan.nodeOutputs[k], *node.mutable_output()))
      if (value >= 0)
        output = nameOutput(value, output).str();
    // Attributes that refer to the call's take its value, or the
    // function's default; without either the attribute is left out.
    auto &attributes = *node.mutable_attribute();
    int kept = 0;
    for (auto [i, attribute] : llvm::enumerate(inner.attribute())) {
      int at = static_cast<int>(i);
      if (!attribute.ref_attr_name().empty()) {
        const onnx::AttributeProto *value = resolve(attribute, call, function);
        if (!value)
          continue;
        onnx::AttributeProto &copy = *attributes.Mutable(at);
        copy = *value;
        copy.set_name(attribute.name());
        copy.clear_ref_attr_name();
      }
      attributes.SwapElements(kept++, at);
    }
    attributes.DeleteSubrange(kept, attributes.size() - kept);
  }

  // An output that no node computes passes an input through.
  for (auto [i, output] : llvm::enumerate(call.outputs)) {
    int value = plan.outputValues[i];
    if (output.empty() || value >= proto.input_size())
      continue;
    const std::string &name = proto.output(static_cast<int>(i));
    if (value < 0 || names[value].empty())
      return callError(call.name, function)
             << "no node of the function computes its output '" << name << "'";
    onnx::NodeProto &identity = *nodes.Add();
    identity.set_op_type("Identity");
    identity.set_name(prefix + "Identity_" + name);
    identity.add_input(names[value].str());
    identity.add_output(output);
  }
  return success();
}

LogicalResult Inliner::run(ModelLayout &layout) {
  if (model.functions_size() == 0 || !model.has_graph())
    return success();
  if (failed(collectFunctions()))
    return failure();
  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::SmallVector<LocalFunction *> calls;
  for (const onnx::NodeProto &node : graph.node())
    calls.push_back(lookupCall(node));
  if (llvm::none_of(calls, [](LocalFunction *f) { return f != nullptr; }))
    return success();
  collectNames();
  auto noteAttributes = [&](const onnx::NodeProto &call) {
    for (const onnx::AttributeProto &attribute : call.attribute())
      maxAttributeBytes =
          std::max<uint64_t>(maxAttributeBytes, attribute.ByteSizeLong());
  };
  for (auto [node, function] : llvm::zip(graph.node(), calls))
    if (function)
      noteAttributes(node);
  for (auto &entry : functions) {
    for (const auto &[name, attribute] : entry.second.defaults)
      maxAttributeBytes =
          std::max<uint64_t>(maxAttributeBytes, attribute.ByteSizeLong());
    for (const onnx::NodeProto &node : entry.second.proto->node())
      if (lookupCall(node))
        noteAttributes(node);
  }

  // The size of the result first: calls that fan out (each function
  // calling the next twice) would otherwise exhaust memory.
  uint64_t totalNodes = 0, totalBytes = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    if (node.name().empty())
      node.set_name(node.op_type() + "_" + std::to_string(i));
    InlinedSize size{/*nodes=*/1, /*bytes=*/0, /*prefixedNames=*/0};
    if (LocalFunction *function = calls[i]) {
      llvm::SmallVector<const LocalFunction *> chain;
      FailureOr<InlinedSize> inner = computeSize(*function, chain, node);
      if (failed(inner))
        return failure();
      size = *inner;
    }
    totalNodes = add(totalNodes, size.nodes);
    totalBytes = add(totalBytes, size.bytes,
                     multiply(node.name().size(), size.prefixedNames));
    if (totalNodes > kMaxInlinedNodes)
      return emitError(loc)
             << "inlining the model's functions makes more than "
             << kMaxInlinedNodes << " nodes (at node '" << node.name() << "')";
    if (totalBytes > kMaxInlinedBytes)
      return emitError(loc)
             << "inlining the model's functions makes more than "
             << kMaxInlinedBytes / (1 << 20)
             << " MiB of nodes and names (at node '" << node.name() << "')";
  }

  // Where each node that stays goes, for its attribute tensors.
  llvm::DenseMap<unsigned, unsigned> movedTo;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    if (LocalFunction *function = calls[i]) {
      Call call;
      call.name = node.name();
      call.inputs.assign(node.input().begin(), node.input().end());
      call.outputs.assign(node.output().begin(), node.output().end());
      for (const onnx::AttributeProto &attribute : node.attribute())
        call.attributes.emplace_back(attribute.name(), &attribute);
      if (failed(expand(call, *function)))
        return failure();
      continue;
    }
    movedTo[i] = nodes.size();
    *nodes.Add() = std::move(node);
  }
  graph.mutable_node()->Swap(&nodes);

  llvm::DenseMap<std::pair<unsigned, unsigned>, TensorPayloads> tensors;
  for (auto &[key, payloads] : layout.attributeTensors) {
    auto it = movedTo.find(key.first);
    if (it != movedTo.end())
      tensors[{it->second, key.second}] = std::move(payloads);
  }
  layout.attributeTensors = std::move(tensors);
  return success();
}

LogicalResult cleave::onnx_import::inlineLocalFunctions(onnx::ModelProto &model,
                                                        ModelLayout &layout,
                                                        Location loc) {
  return Inliner(model, loc).run(layout);
}
