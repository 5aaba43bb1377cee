//===- EinsumHandlers.cpp - Einsum lowered to cleave ops ------------------===//
//
// Einsum has no cleave op of its own: the importer lowers an equation to the
// ops the planner and the kernels already know. Operands are contracted
// left to right. Before each contraction, subscripts that no later operand
// and not the output use are summed away (cleave.reduce_sum); the two
// operands are then permuted to `batch, free, contracted` order
// (cleave.transpose), flattened to matrices (cleave.reshape) and multiplied
// (cleave.matmul, or cleave.mul when nothing is contracted: an outer or
// elementwise product). A last transpose puts the output subscripts in
// order. A subscript that repeats within one operand (a diagonal or a
// trace) is refused.
//
//===----------------------------------------------------------------------===//

#include "GraphImporter.h"
#include "NodeBinder.h"
#include "OpHandlers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <cctype>

using namespace mlir;

namespace cleave::onnx_import {
namespace {

/// A subscript: a letter's character code, or kEllipsisLabel + i for
/// dimension i of the (right-aligned) dimensions an ellipsis stands for.
constexpr int64_t kEllipsisLabel = 256;

using Labels = SmallVector<int64_t>;

/// The subscripts of one term before the ellipsis is expanded.
struct Term {
  SmallVector<char> letters;
  /// Where in `letters` the ellipsis stands, if the term has one.
  std::optional<size_t> ellipsis;
};

std::string describeLabel(int64_t label) {
  if (label >= kEllipsisLabel)
    return "...";
  return std::string(1, static_cast<char>(label));
}

/// Imports one Einsum node; every error names the equation.
class EinsumImporter {
public:
  /// `equation` as the node writes it, for messages.
  EinsumImporter(NodeBinder &b, StringRef equation)
      : b(b), equation(equation.str()) {
    for (char c : equation)
      if (!std::isspace(static_cast<unsigned char>(c)))
        compact.push_back(c);
  }

  LogicalResult run(ArrayRef<Value> inputs);

private:
  /// An intermediate value with the subscript of each of its dimensions.
  struct Tensor {
    Value value;
    Labels labels;
  };

  InFlightDiagnostic emitError() {
    InFlightDiagnostic diag = b.emitError();
    diag << "equation '" << equation << "': ";
    return diag;
  }

  FailureOr<Term> parseTerm(StringRef text);
  LogicalResult parse(ArrayRef<Value> inputs);
  LogicalResult recordSizes(ArrayRef<Value> inputs);

  FailureOr<Tensor> sumAway(Tensor t, function_ref<bool(int64_t)> keep);
  FailureOr<Tensor> permute(Tensor t, ArrayRef<int64_t> order);
  FailureOr<Value> reshape(Value value, ArrayRef<int64_t> shape);
  /// Permutes `t` to `order`, then reshapes it to `shape`.
  FailureOr<Value> arrange(Tensor t, ArrayRef<int64_t> order,
                           ArrayRef<int64_t> shape);
  FailureOr<Tensor> contract(Tensor lhs, Tensor rhs,
                             function_ref<bool(int64_t)> keep);
  SmallVector<int64_t> sizesOf(ArrayRef<int64_t> labels) const;
  int64_t productOf(ArrayRef<int64_t> labels) const;

  NodeBinder &b;
  std::string equation;
  /// The equation without white space, which is what is parsed.
  std::string compact;
  SmallVector<Labels> operandLabels;
  Labels outputLabels;
  llvm::DenseMap<int64_t, int64_t> sizes;
};

FailureOr<Term> EinsumImporter::parseTerm(StringRef text) {
  Term term;
  while (!text.empty()) {
    if (text.consume_front("...")) {
      if (term.ellipsis)
        return emitError() << "a term has two ellipses";
      term.ellipsis = term.letters.size();
      continue;
    }
    char c = text.front();
    if (!std::isalpha(static_cast<unsigned char>(c)))
      return emitError() << "unexpected character '" << c
                         << "' (subscripts are letters)";
    term.letters.push_back(c);
    text = text.drop_front();
  }
  return term;
}

LogicalResult EinsumImporter::parse(ArrayRef<Value> inputs) {
  StringRef text = compact;
  auto [lhs, rhs] = text.split("->");
  bool explicitOutput = text.contains("->");
  SmallVector<StringRef> termTexts;
  lhs.split(termTexts, ',');
  if (termTexts.size() != inputs.size())
    return emitError() << "has " << termTexts.size()
                       << " input terms, but the node has " << inputs.size()
                       << " inputs";

  SmallVector<Term> terms;
  int64_t ellipsisRank = 0;
  for (auto [i, termText] : llvm::enumerate(termTexts)) {
    FailureOr<Term> term = parseTerm(termText);
    if (failed(term))
      return failure();
    int64_t rank = NodeBinder::getType(inputs[i]).getRank();
    int64_t covered = rank - static_cast<int64_t>(term->letters.size());
    if (covered < 0 || (!term->ellipsis && covered != 0))
      return emitError() << "term '" << termText << "' does not match input "
                         << i << " of rank " << rank;
    if (term->ellipsis)
      ellipsisRank = std::max(ellipsisRank, covered);
    terms.push_back(std::move(*term));
  }

  // Expand each term; an ellipsis stands for the trailing dimensions of the
  // broadcast ellipsis shape.
  for (auto [i, term] : llvm::enumerate(terms)) {
    int64_t rank = NodeBinder::getType(inputs[i]).getRank();
    int64_t covered = rank - static_cast<int64_t>(term.letters.size());
    Labels labels;
    for (auto [j, letter] : llvm::enumerate(term.letters)) {
      if (term.ellipsis && *term.ellipsis == j)
        for (int64_t k = 0; k < covered; ++k)
          labels.push_back(kEllipsisLabel + ellipsisRank - covered + k);
      labels.push_back(letter);
    }
    if (term.ellipsis && *term.ellipsis == term.letters.size())
      for (int64_t k = 0; k < covered; ++k)
        labels.push_back(kEllipsisLabel + ellipsisRank - covered + k);
    for (auto [j, label] : llvm::enumerate(labels))
      if (llvm::is_contained(ArrayRef(labels).take_front(j), label))
        return emitError() << "subscript '" << describeLabel(label)
                           << "' repeats in input " << i
                           << "; diagonals and traces are not supported";
    operandLabels.push_back(std::move(labels));
  }

  auto countOf = [&](int64_t label) {
    int64_t count = 0;
    for (const Labels &labels : operandLabels)
      count += llvm::count(labels, label);
    return count;
  };
  if (!explicitOutput) {
    // numpy's implicit output: the ellipsis, then the subscripts used once,
    // in alphabetical order.
    for (int64_t k = 0; k < ellipsisRank; ++k)
      outputLabels.push_back(kEllipsisLabel + k);
    for (int64_t letter = 0; letter < kEllipsisLabel; ++letter)
      if (countOf(letter) == 1)
        outputLabels.push_back(letter);
    return success();
  }
  FailureOr<Term> output = parseTerm(rhs);
  if (failed(output))
    return failure();
  for (auto [j, letter] : llvm::enumerate(output->letters)) {
    if (output->ellipsis && *output->ellipsis == j)
      for (int64_t k = 0; k < ellipsisRank; ++k)
        outputLabels.push_back(kEllipsisLabel + k);
    outputLabels.push_back(letter);
  }
  if (output->ellipsis && *output->ellipsis == output->letters.size())
    for (int64_t k = 0; k < ellipsisRank; ++k)
      outputLabels.push_back(kEllipsisLabel + k);
  for (auto [j, label] : llvm::enumerate(outputLabels)) {
    if (countOf(label) == 0)
      return emitError() << "output subscript '" << describeLabel(label)
                         << "' appears in no input";
    if (llvm::is_contained(ArrayRef(outputLabels).take_front(j), label))
      return emitError() << "output subscript '" << describeLabel(label)
                         << "' repeats";
  }
  return success();
}

LogicalResult EinsumImporter::recordSizes(ArrayRef<Value> inputs) {
  for (auto [i, input] : llvm::enumerate(inputs)) {
    ArrayRef<int64_t> shape = NodeBinder::getType(input).getShape();
    for (auto [label, size] : llvm::zip_equal(operandLabels[i], shape)) {
      if (ShapedType::isDynamic(size))
        return emitError() << "input " << i
                           << " has a dynamic dimension; Einsum needs "
                              "static shapes";
      auto [it, inserted] = sizes.try_emplace(label, size);
      if (!inserted && it->second != size)
        return emitError() << "subscript '" << describeLabel(label)
                           << "' has size " << it->second << " and " << size
                           << " (broadcasting is not supported)";
    }
  }
  return success();
}

SmallVector<int64_t> EinsumImporter::sizesOf(ArrayRef<int64_t> labels) const {
  return llvm::map_to_vector(labels,
                             [&](int64_t label) { return sizes.at(label); });
}

int64_t EinsumImporter::productOf(ArrayRef<int64_t> labels) const {
  int64_t product = 1;
  for (int64_t label : labels)
    product *= sizes.at(label);
  return product;
}

FailureOr<EinsumImporter::Tensor>
EinsumImporter::sumAway(Tensor t, function_ref<bool(int64_t)> keep) {
  SmallVector<int64_t> axes;
  Labels kept;
  for (auto [i, label] : llvm::enumerate(t.labels)) {
    if (keep(label))
      kept.push_back(label);
    else
      axes.push_back(i);
  }
  if (axes.empty())
    return t;
  OpBuilder &builder = b.getBuilder();
  FailureOr<Value> sum = b.create<ReduceSumOp>(
      {t.value}, {b.named("axes", builder.getDenseI64ArrayAttr(axes)),
                  b.named("keepdims", builder.getBoolAttr(false))});
  if (failed(sum))
    return failure();
  return Tensor{*sum, kept};
}

FailureOr<EinsumImporter::Tensor>
EinsumImporter::permute(Tensor t, ArrayRef<int64_t> order) {
  SmallVector<int64_t> perm;
  for (int64_t label : order)
    perm.push_back(llvm::find(t.labels, label) - t.labels.begin());
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return Tensor{t.value, Labels(order)};
  FailureOr<Value> permuted = b.create<TransposeOp>(
      {t.value}, {b.named("perm", b.getBuilder().getDenseI64ArrayAttr(perm))});
  if (failed(permuted))
    return failure();
  return Tensor{*permuted, Labels(order)};
}

FailureOr<Value> EinsumImporter::reshape(Value value, ArrayRef<int64_t> shape) {
  auto type = NodeBinder::getType(value);
  if (type.getShape() == shape)
    return value;
  return b.create<ReshapeOp>({value}, {}, type.clone(shape));
}

FailureOr<Value> EinsumImporter::arrange(Tensor t, ArrayRef<int64_t> order,
                                         ArrayRef<int64_t> shape) {
  FailureOr<Tensor> permuted = permute(t, order);
  if (failed(permuted))
    return failure();
  return reshape(permuted->value, shape);
}

FailureOr<EinsumImporter::Tensor>
EinsumImporter::contract(Tensor lhs, Tensor rhs,
                         function_ref<bool(int64_t)> keep) {
  auto inLhs = [&](int64_t label) {
    return llvm::is_contained(lhs.labels, label);
  };
  auto inRhs = [&](int64_t label) {
    return llvm::is_contained(rhs.labels, label);
  };
  FailureOr<Tensor> summedLhs =
      sumAway(lhs, [&](int64_t l) { return keep(l) || inRhs(l); });
  if (failed(summedLhs))
    return failure();
  lhs = *summedLhs;
  FailureOr<Tensor> summedRhs =
      sumAway(rhs, [&](int64_t l) { return keep(l) || inLhs(l); });
  if (failed(summedRhs))
    return failure();
  rhs = *summedRhs;

  Labels batch, contracted, lhsFree, rhsFree;
  for (int64_t label : lhs.labels) {
    if (!inRhs(label))
      lhsFree.push_back(label);
    else if (keep(label))
      batch.push_back(label);
    else
      contracted.push_back(label);
  }
  for (int64_t label : rhs.labels)
    if (!inLhs(label))
      rhsFree.push_back(label);
  Labels resultLabels(batch);
  llvm::append_range(resultLabels, lhsFree);
  llvm::append_range(resultLabels, rhsFree);
  SmallVector<int64_t> resultShape = sizesOf(resultLabels);

  Labels lhsOrder(batch), rhsOrder(batch);
  llvm::append_range(lhsOrder, lhsFree);
  if (contracted.empty()) {
    // An outer (or, over the batch, elementwise) product: line both up
    // against the result's dimensions and let cleave.mul broadcast.
    llvm::append_range(rhsOrder, rhsFree);
    SmallVector<int64_t> lhsShape = sizesOf(lhsOrder);
    lhsShape.append(rhsFree.size(), 1);
    SmallVector<int64_t> rhsShape = sizesOf(batch);
    rhsShape.append(lhsFree.size(), 1);
    llvm::append_range(rhsShape, sizesOf(rhsFree));
    FailureOr<Value> a = arrange(lhs, lhsOrder, lhsShape);
    if (failed(a))
      return failure();
    FailureOr<Value> c = arrange(rhs, rhsOrder, rhsShape);
    if (failed(c))
      return failure();
    FailureOr<Value> product = b.create<MulOp>({*a, *c});
    if (failed(product))
      return failure();
    return Tensor{*product, resultLabels};
  }

  // A batch of matrix products: [batch..., M, K] x [batch..., K, N].
  llvm::append_range(lhsOrder, contracted);
  llvm::append_range(rhsOrder, contracted);
  llvm::append_range(rhsOrder, rhsFree);
  int64_t m = productOf(lhsFree), k = productOf(contracted),
          n = productOf(rhsFree);
  SmallVector<int64_t> lhsShape = sizesOf(batch), rhsShape = sizesOf(batch),
                       productShape = sizesOf(batch);
  lhsShape.append({m, k});
  rhsShape.append({k, n});
  productShape.append({m, n});
  FailureOr<Value> a = arrange(lhs, lhsOrder, lhsShape);
  if (failed(a))
    return failure();
  FailureOr<Value> c = arrange(rhs, rhsOrder, rhsShape);
  if (failed(c))
    return failure();
  FailureOr<Value> product = b.create<MatMulOp>({*a, *c});
  if (failed(product))
    return failure();
  FailureOr<Value> result = reshape(*product, resultShape);
  if (failed(result))
    return failure();
  return Tensor{*result, resultLabels};
}

LogicalResult EinsumImporter::run(ArrayRef<Value> inputs) {
  if (failed(parse(inputs)) || failed(recordSizes(inputs)))
    return failure();
  auto neededAfter = [&](size_t operand) {
    return [this, operand](int64_t label) {
      if (llvm::is_contained(outputLabels, label))
        return true;
      for (size_t j = operand + 1; j < operandLabels.size(); ++j)
        if (llvm::is_contained(operandLabels[j], label))
          return true;
      return false;
    };
  };
  Tensor first{inputs[0], operandLabels[0]};
  FailureOr<Tensor> acc = first;
  if (inputs.size() == 1)
    acc = sumAway(first, neededAfter(0));
  for (size_t i = 1; succeeded(acc) && i < inputs.size(); ++i)
    acc = contract(*acc, Tensor{inputs[i], operandLabels[i]}, neededAfter(i));
  if (failed(acc))
    return failure();
  FailureOr<Tensor> result = permute(*acc, outputLabels);
  if (failed(result))
    return failure();
  return b.bindOutputs(result->value);
}

LogicalResult importEinsum(NodeBinder &b) {
  SmallVector<Value> inputs;
  std::string equation;
  if (failed(b.allInputs(inputs)) ||
      failed(b.stringAttr("equation", equation, "")))
    return failure();
  if (equation.empty())
    return b.emitError() << "attribute 'equation' is required";
  if (inputs.empty())
    return b.emitError() << "needs at least one input";
  return EinsumImporter(b, equation).run(inputs);
}

const OpHandler einsumHandlers[] = {
    {"Einsum", 12, importEinsum,
     "cleave.matmul cleave.mul cleave.reduce_sum cleave.transpose "
     "cleave.reshape",
     "lowered to products, sums and permutations; equal subscripts within "
     "one input (diagonals, traces) and broadcasting subscripts are refused"},
};

} // namespace

ArrayRef<OpHandler> getEinsumHandlers() { return einsumHandlers; }

} // namespace cleave::onnx_import
