//===- SelectionOps.cpp - top-k, arg max/min and cumsum ---------*- C++ -*-===//
//
// Type inference, verifiers and folders of the ops that order or accumulate
// the elements of one axis. The folders evaluate small constants with the
// same rules as the library kernels (runtime/kernels/*/Selection.*): ties
// keep input order, NaN orders above every number in top-k, and arg max/min
// scan a line as onnxruntime does.
//
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"
#include "OpDiagnostics.h"
#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace cleave;
using namespace cleave::detail;

namespace {

//===----------------------------------------------------------------------===//
// Lines along an axis
//===----------------------------------------------------------------------===//

/// A static shape seen as `outer x size x inner` around one axis: line
/// `l` holds the elements `(l / inner) * size * inner + l % inner + j * inner`
/// for `j` in `[0, size)`.
struct AxisLines {
  AxisLines(ArrayRef<int64_t> shape, int64_t axis)
      : size(shape[axis]),
        inner(ShapedType::getNumElements(shape.drop_front(axis + 1))),
        count(ShapedType::getNumElements(shape.take_front(axis)) * inner) {}

  /// The linear index of element `j` of line `line`.
  int64_t at(int64_t line, int64_t j) const {
    return (line / inner) * size * inner + line % inner + j * inner;
  }

  int64_t size, inner, count;
};

/// Checks that `axis` is a dimension of a tensor of rank `rank`.
template <typename OpT>
LogicalResult verifyAxis(std::optional<Location> loc, StringRef label,
                         int64_t axis, int64_t rank) {
  if (axis >= 0 && axis < rank)
    return success();
  return emitOpErrorAt<OpT>(loc, label, ": axis (", axis, ") must be in [0, ",
                            rank, ")");
}

/// The elements of a foldable constant operand, or null when there is none
/// or it is too large to evaluate.
DenseElementsAttr getFoldableInput(Attribute operand) {
  auto elements = dyn_cast_if_present<DenseElementsAttr>(operand);
  if (!elements || !elements.getType().hasStaticShape() ||
      elements.getNumElements() > kMaxFoldedElements)
    return {};
  return elements;
}

//===----------------------------------------------------------------------===//
// Element order
//===----------------------------------------------------------------------===//

/// Total order of top-k: IEEE order with NaN above every number (and equal
/// to another NaN); integers by their signedness.
struct TopKLess {
  bool isUnsigned = false;

  bool operator()(const APFloat &a, const APFloat &b) const {
    if (a.isNaN())
      return false;
    if (b.isNaN())
      return true;
    return a.compare(b) == APFloat::cmpLessThan;
  }
  bool operator()(const APInt &a, const APInt &b) const {
    return isUnsigned ? a.ult(b) : a.slt(b);
  }
};

/// The plain comparisons of an arg max/min scan: false whenever a NaN is
/// involved, so a leading NaN stays the answer and a later one is skipped.
struct ScanCompare {
  bool isUnsigned = false;

  /// Whether `a` beats `b` (`a > b`, or `a < b` for a minimum); `orEqual`
  /// lets an equal element win too.
  bool beats(const APFloat &a, const APFloat &b, bool max, bool orEqual) const {
    APFloat::cmpResult order = a.compare(b);
    if (order == APFloat::cmpEqual)
      return orEqual;
    return order == (max ? APFloat::cmpGreaterThan : APFloat::cmpLessThan);
  }
  bool beats(const APInt &a, const APInt &b, bool max, bool orEqual) const {
    if (a == b)
      return orEqual;
    bool less = isUnsigned ? a.ult(b) : a.slt(b);
    return max ? !less : less;
  }
};

bool isUnsignedType(Type elementType) {
  auto integer = dyn_cast<IntegerType>(elementType);
  return integer && isUnsignedElement(integer);
}

//===----------------------------------------------------------------------===//
// Folding
//===----------------------------------------------------------------------===//

/// The first `k` positions of each line in top-k order, line after line.
template <typename T>
SmallVector<int64_t> selectTopK(ArrayRef<T> values, const AxisLines &lines,
                                int64_t k, bool largest, TopKLess less) {
  SmallVector<int64_t> selected;
  SmallVector<int64_t> order(lines.size);
  for (int64_t line = 0; line < lines.count; ++line) {
    std::iota(order.begin(), order.end(), 0);
    // Stable: of equal elements the lower index comes first.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const T &x = values[lines.at(line, a)];
      const T &y = values[lines.at(line, b)];
      return largest ? less(y, x) : less(x, y);
    });
    selected.append(order.begin(), order.begin() + k);
  }
  return selected;
}

template <typename T>
SmallVector<int64_t> scanArgExtreme(ArrayRef<T> values, const AxisLines &lines,
                                    bool max, bool last, ScanCompare compare) {
  SmallVector<int64_t> result;
  for (int64_t line = 0; line < lines.count; ++line) {
    int64_t best = 0;
    for (int64_t j = 1; j < lines.size; ++j)
      if (compare.beats(values[lines.at(line, j)], values[lines.at(line, best)],
                        max, last))
        best = j;
    result.push_back(best);
  }
  return result;
}

template <typename T>
SmallVector<T> scanSums(SmallVector<T> values, const AxisLines &lines,
                        bool exclusive, bool reverse, const T &zero,
                        function_ref<void(T &, const T &)> add) {
  SmallVector<T> result(values.size(), zero);
  for (int64_t line = 0; line < lines.count; ++line) {
    T sum = zero;
    for (int64_t step = 0; step < lines.size; ++step) {
      int64_t j = reverse ? lines.size - 1 - step : step;
      int64_t index = lines.at(line, j);
      if (exclusive)
        result[index] = sum;
      add(sum, values[index]);
      if (!exclusive)
        result[index] = sum;
    }
  }
  return result;
}

/// Positions as an i64 constant of `type`.
DenseElementsAttr positionsAttr(ShapedType type, ArrayRef<int64_t> positions) {
  return DenseElementsAttr::get(type, positions);
}

/// Arg max/min: zeros along an axis of size 1, else a scan of a constant.
template <typename OpT> OpFoldResult foldArgExtreme(OpT op, Attribute input) {
  auto inputType = cast<RankedTensorType>(op.getInput().getType());
  auto resultType = cast<RankedTensorType>(op.getOutput().getType());
  int64_t axis = op.getAxis();
  if (!resultType.hasStaticShape())
    return {};
  if (inputType.getDimSize(axis) == 1)
    return DenseElementsAttr::get(resultType, int64_t(0));
  DenseElementsAttr elements = getFoldableInput(input);
  if (!elements || inputType.getDimSize(axis) == 0)
    return {};
  AxisLines lines(inputType.getShape(), axis);
  constexpr bool max = std::is_same_v<OpT, ArgMaxOp>;
  bool last = op.getSelectLastIndex();
  ScanCompare compare{isUnsignedType(inputType.getElementType())};
  SmallVector<int64_t> positions;
  if (isa<FloatType>(inputType.getElementType()))
    positions =
        scanArgExtreme<APFloat>(llvm::to_vector(elements.getValues<APFloat>()),
                                lines, max, last, compare);
  else
    positions =
        scanArgExtreme<APInt>(llvm::to_vector(elements.getValues<APInt>()),
                              lines, max, last, compare);
  return positionsAttr(resultType, positions);
}

} // namespace

//===----------------------------------------------------------------------===//
// TopKOp
//===----------------------------------------------------------------------===//

LogicalResult
TopKOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  int64_t k = adaptor.getK();
  if (failed(
          verifyAxis<TopKOp>(location, "topk_c1", axis, inputType.getRank())))
    return failure();
  int64_t size = inputType.getDimSize(axis);
  if (k < 0 || (!ShapedType::isDynamic(size) && k > size))
    return emitOpErrorAt<TopKOp>(location, "topk_c2: k (", k,
                                 ") must be in [0, ", size,
                                 "], the size of dimension ", axis);
  SmallVector<int64_t> shape(inputType.getShape());
  shape[axis] = k;
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult TopKOp::fold(FoldAdaptor adaptor,
                           SmallVectorImpl<OpFoldResult> &results) {
  DenseElementsAttr elements = getFoldableInput(adaptor.getInput());
  auto valuesType = cast<RankedTensorType>(getValues().getType());
  if (!elements || !valuesType.hasStaticShape())
    return failure();
  int64_t axis = getAxis();
  AxisLines lines(elements.getType().getShape(), axis);
  Type elementType = valuesType.getElementType();
  TopKLess less{isUnsignedType(elementType)};
  SmallVector<int64_t> selected;
  if (isa<FloatType>(elementType))
    selected =
        selectTopK<APFloat>(llvm::to_vector(elements.getValues<APFloat>()),
                            lines, getK(), getLargest(), less);
  else
    selected = selectTopK<APInt>(llvm::to_vector(elements.getValues<APInt>()),
                                 lines, getK(), getLargest(), less);

  // `selected` lists each line's positions in order; the results interleave
  // the lines of inner dimensions, so map result elements back to them.
  AxisLines outLines(valuesType.getShape(), axis);
  auto inputValues = elements.getValues<Attribute>();
  SmallVector<Attribute> values(valuesType.getNumElements());
  SmallVector<int64_t> indices(valuesType.getNumElements());
  for (int64_t line = 0; line < lines.count; ++line)
    for (int64_t j = 0; j < outLines.size; ++j) {
      int64_t position = selected[line * outLines.size + j];
      values[outLines.at(line, j)] = inputValues[lines.at(line, position)];
      indices[outLines.at(line, j)] = position;
    }
  results.push_back(DenseElementsAttr::get(valuesType, values));
  results.push_back(
      positionsAttr(cast<ShapedType>(getIndices().getType()), indices));
  return success();
}

//===----------------------------------------------------------------------===//
// ArgMaxOp / ArgMinOp
//===----------------------------------------------------------------------===//

/// The input's shape with the axis kept as 1 or removed.
template <typename OpT>
static LogicalResult
inferArgExtremeType(std::optional<Location> location,
                    typename OpT::Adaptor adaptor,
                    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  std::string label = (OpT::getOperationName().drop_front(7) + "_c1").str();
  if (failed(verifyAxis<OpT>(location, label, axis, inputType.getRank())))
    return failure();
  SmallVector<int64_t> shape(inputType.getShape());
  if (adaptor.getKeepdims())
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  inferredReturnTypes.push_back(RankedTensorType::get(
      shape, IntegerType::get(inputType.getContext(), 64)));
  return success();
}

LogicalResult
ArgMaxOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferArgExtremeType<ArgMaxOp>(location, adaptor, inferredReturnTypes);
}

LogicalResult
ArgMinOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  return inferArgExtremeType<ArgMinOp>(location, adaptor, inferredReturnTypes);
}

OpFoldResult ArgMaxOp::fold(FoldAdaptor adaptor) {
  return foldArgExtreme(*this, adaptor.getInput());
}

OpFoldResult ArgMinOp::fold(FoldAdaptor adaptor) {
  return foldArgExtreme(*this, adaptor.getInput());
}

//===----------------------------------------------------------------------===//
// CumSumOp
//===----------------------------------------------------------------------===//

LogicalResult CumSumOp::verify() {
  return verifyAxis<CumSumOp>(getLoc(), "cumsum_c1", getAxis(),
                              getInput().getType().getRank());
}

OpFoldResult CumSumOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getInput().getType();
  int64_t axis = getAxis();
  if (type.getDimSize(axis) == 1) {
    if (!getExclusive())
      return getInput();
    if (!type.hasStaticShape())
      return {};
    // Every exclusive sum of a single element is empty.
    Type elementType = type.getElementType();
    if (auto floatType = dyn_cast<FloatType>(elementType))
      return DenseElementsAttr::get(
          type, APFloat::getZero(floatType.getFloatSemantics()));
    return DenseElementsAttr::get(
        type, APInt::getZero(elementType.getIntOrFloatBitWidth()));
  }
  DenseElementsAttr elements = getFoldableInput(adaptor.getInput());
  if (!elements)
    return {};
  AxisLines lines(type.getShape(), axis);
  if (auto floatType = dyn_cast<FloatType>(type.getElementType())) {
    SmallVector<APFloat> sums = scanSums<APFloat>(
        llvm::to_vector(elements.getValues<APFloat>()), lines, getExclusive(),
        getReverse(), APFloat::getZero(floatType.getFloatSemantics()),
        [](APFloat &sum, const APFloat &x) {
          sum.add(x, APFloat::rmNearestTiesToEven);
        });
    return DenseElementsAttr::get(type, sums);
  }
  SmallVector<APInt> sums = scanSums<APInt>(
      llvm::to_vector(elements.getValues<APInt>()), lines, getExclusive(),
      getReverse(), APInt::getZero(type.getElementTypeBitWidth()),
      [](APInt &sum, const APInt &x) { sum += x; });
  return DenseElementsAttr::get(type, sums);
}
