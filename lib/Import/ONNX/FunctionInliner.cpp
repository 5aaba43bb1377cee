//===- FunctionInliner.cpp - model-local ONNX functions -------------------===//
//
// A call of a local function is replaced by a copy of the function's nodes
// in which the function's inputs and outputs are the call's values and its
// other values get names of their own. Calls inside a body are inlined in
// turn. The size of the result is counted first, per function, which also
// finds functions that call themselves.
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

struct LocalFunction {
  const onnx::FunctionProto *proto = nullptr;
  /// `domain.name` (and `:overload`), as errors name it.
  std::string displayName;
  /// Attribute defaults (`attribute_proto`), by name.
  std::map<std::string, onnx::AttributeProto> defaults;
};

class Inliner {
public:
  Inliner(onnx::ModelProto &model, Location loc) : model(model), loc(loc) {}

  LogicalResult run(ModelLayout &layout);

private:
  LogicalResult collectFunctions();
  void collectNames();
  /// `stem`, or `stem.N` when the graph already has that name.
  std::string getFreshName(const std::string &stem);
  const LocalFunction *lookupCall(const onnx::NodeProto &node) const;
  /// The nodes a call of `function` expands to, calls inside it expanded
  /// too (saturating past kMaxInlinedNodes); fails when the function calls
  /// itself, with `chain` the functions that call it.
  FailureOr<uint64_t>
  countNodes(const LocalFunction &function,
             llvm::SmallVectorImpl<const LocalFunction *> &chain,
             const onnx::NodeProto &call);
  /// Appends the nodes of `call`'s function to the new graph.
  LogicalResult expand(const onnx::NodeProto &call);
  InFlightDiagnostic callError(const onnx::NodeProto &call,
                               const LocalFunction &function) {
    InFlightDiagnostic diag = emitError(loc);
    diag << "node '" << call.name() << "' calls function '"
         << function.displayName << "': ";
    return diag;
  }

  onnx::ModelProto &model;
  Location loc;
  std::optional<int64_t> defaultOpset;
  std::map<std::string, LocalFunction> functions;
  llvm::StringSet<> taken;
  std::map<const LocalFunction *, uint64_t> counts;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
};

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

std::string Inliner::getFreshName(const std::string &stem) {
  if (taken.insert(stem).second)
    return stem;
  for (unsigned n = 1;; ++n) {
    std::string name = stem + "." + std::to_string(n);
    if (taken.insert(name).second)
      return name;
  }
}

const LocalFunction *Inliner::lookupCall(const onnx::NodeProto &node) const {
  if (functions.empty())
    return nullptr;
  auto it = functions.find(getFunctionKey(
      node.domain(), node.op_type(),
      getUnknownString(node.unknown_fields(), kNodeOverloadField)));
  return it == functions.end() ? nullptr : &it->second;
}

FailureOr<uint64_t>
Inliner::countNodes(const LocalFunction &function,
                    llvm::SmallVectorImpl<const LocalFunction *> &chain,
                    const onnx::NodeProto &call) {
  auto known = counts.find(&function);
  if (known != counts.end())
    return known->second;
  if (llvm::is_contained(chain, &function)) {
    InFlightDiagnostic diag = callError(call, *chain.front());
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
  // One node per node of the body, an identity per output at most.
  uint64_t count = function.proto->output_size();
  for (const onnx::NodeProto &node : function.proto->node()) {
    const LocalFunction *callee = lookupCall(node);
    if (!callee) {
      ++count;
      continue;
    }
    FailureOr<uint64_t> inner = countNodes(*callee, chain, call);
    if (failed(inner))
      return failure();
    count = std::min<uint64_t>(count + *inner, kMaxInlinedNodes + 1);
  }
  chain.pop_back();
  counts[&function] = count;
  return count;
}

LogicalResult Inliner::expand(const onnx::NodeProto &call) {
  const LocalFunction &function = *lookupCall(call);
  const onnx::FunctionProto &proto = *function.proto;
  for (const onnx::OperatorSetIdProto &entry : proto.opset_import())
    if (isDefaultDomain(entry.domain()) && defaultOpset &&
        entry.version() != *defaultOpset)
      return callError(call, function)
             << "the function uses opset " << entry.version()
             << " of the default ONNX domain and the model uses opset "
             << *defaultOpset << "; cleave inlines functions of the model's "
             << "opset only";
  if (call.input_size() > proto.input_size())
    return callError(call, function)
           << "the call passes " << call.input_size()
           << " inputs and the function takes " << proto.input_size();
  if (call.output_size() > proto.output_size())
    return callError(call, function)
           << "the call names " << call.output_size()
           << " outputs and the function returns " << proto.output_size();

  // What each name of the body stands for in the graph.
  llvm::StringMap<std::string> renamed;
  llvm::StringSet<> inputs;
  for (auto [i, name] : llvm::enumerate(proto.input())) {
    if (!inputs.insert(name).second)
      return callError(call, function)
             << "the function declares input '" << name << "' twice";
    renamed[name] = i < static_cast<size_t>(call.input_size())
                        ? call.input(static_cast<int>(i))
                        : std::string();
  }
  llvm::StringMap<int> outputIndex;
  for (auto [i, name] : llvm::enumerate(proto.output()))
    outputIndex.try_emplace(name, static_cast<int>(i));
  std::string prefix = call.name() + "/";
  llvm::StringSet<> produced;

  for (auto [k, inner] : llvm::enumerate(proto.node())) {
    onnx::NodeProto node = inner;
    node.set_name(prefix + (inner.name().empty()
                                ? inner.op_type() + "_" + std::to_string(k)
                                : inner.name()));
    for (std::string &input : *node.mutable_input()) {
      if (input.empty())
        continue;
      auto it = renamed.find(input);
      if (it == renamed.end())
        return callError(call, function)
               << "its node '" << node.name() << "' reads '" << input
               << "', which is neither an input of the function nor an "
                  "output of an earlier node of it";
      input = it->second;
    }
    for (std::string &output : *node.mutable_output()) {
      if (output.empty())
        continue;
      if (renamed.count(output))
        return callError(call, function)
               << "its node '" << node.name() << "' writes '" << output
               << "', which the function already defines";
      auto index = outputIndex.find(output);
      std::string name = index != outputIndex.end() &&
                                 index->second < call.output_size() &&
                                 !call.output(index->second).empty()
                             ? call.output(index->second)
                             : getFreshName(prefix + output);
      produced.insert(output);
      renamed[output] = name;
      output = std::move(name);
    }
    // Attributes that refer to the call's take its value, or the
    // function's default; without either the attribute is left out.
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
    for (const onnx::AttributeProto &attribute : inner.attribute()) {
      if (attribute.ref_attr_name().empty()) {
        *attributes.Add() = attribute;
        continue;
      }
      const onnx::AttributeProto *value = nullptr;
      for (const onnx::AttributeProto &given : call.attribute())
        if (given.name() == attribute.ref_attr_name())
          value = &given;
      if (!value) {
        auto it = function.defaults.find(attribute.ref_attr_name());
        if (it != function.defaults.end())
          value = &it->second;
      }
      if (!value)
        continue;
      onnx::AttributeProto *copy = attributes.Add();
      *copy = *value;
      copy->set_name(attribute.name());
      copy->clear_ref_attr_name();
    }
    node.mutable_attribute()->Swap(&attributes);

    if (lookupCall(node)) {
      if (failed(expand(node)))
        return failure();
    } else {
      *nodes.Add() = std::move(node);
    }
  }

  // An output that no node computes passes an input through.
  for (int i = 0; i < call.output_size(); ++i) {
    const std::string &name = proto.output(i);
    if (call.output(i).empty() || produced.contains(name))
      continue;
    if (!inputs.contains(name) || renamed[name].empty())
      return callError(call, function)
             << "no node of the function computes its output '" << name << "'";
    onnx::NodeProto identity;
    identity.set_op_type("Identity");
    identity.set_name(prefix + "Identity_" + name);
    identity.add_input(renamed[name]);
    identity.add_output(call.output(i));
    *nodes.Add() = std::move(identity);
  }
  return success();
}

LogicalResult Inliner::run(ModelLayout &layout) {
  if (model.functions_size() == 0 || !model.has_graph())
    return success();
  if (failed(collectFunctions()))
    return failure();
  onnx::GraphProto &graph = *model.mutable_graph();
  if (llvm::none_of(graph.node(), [&](const onnx::NodeProto &node) {
        return lookupCall(node) != nullptr;
      }))
    return success();
  collectNames();

  // The size of the result first: calls that fan out (each function
  // calling the next twice) would otherwise exhaust memory.
  uint64_t total = 0;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    if (node.name().empty())
      node.set_name(node.op_type() + "_" + std::to_string(i));
    const LocalFunction *function = lookupCall(node);
    uint64_t count = 1;
    if (function) {
      llvm::SmallVector<const LocalFunction *> chain;
      FailureOr<uint64_t> inner = countNodes(*function, chain, node);
      if (failed(inner))
        return failure();
      count = *inner;
    }
    total = std::min<uint64_t>(total + count, kMaxInlinedNodes + 1);
    if (total > kMaxInlinedNodes)
      return emitError(loc)
             << "inlining the model's functions makes more than "
             << kMaxInlinedNodes << " nodes (at node '" << node.name() << "')";
  }

  // Where each node that stays goes, for its attribute tensors.
  llvm::DenseMap<unsigned, unsigned> movedTo;
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    if (lookupCall(node)) {
      if (failed(expand(node)))
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
