//===- ShapeOps.cpp - shape, data movement and constant ops -----*- C++ -*-===//
//
// Type inference, verifiers and folders of the shape / data-movement family:
// the ops of ONNX shape-computation subgraphs fold to constants here once the
// shapes they read are static.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Folders never build a non-splat constant larger than this: constants are
/// for shape values and small tables, weights stay out of the IR.
static constexpr int64_t kMaxFoldedElements = 4096;

/// Range tables (positions, arange-based masks) are routinely a few tens of
/// thousands of elements and are worth folding; anything larger stays an op.
// The error for a range that does not fold (DeviceProgram.cpp) names this.
static constexpr int64_t kMaxFoldedRangeElements = 65536;

/// The product of two dimensions, dynamic when either is; nullopt when it
/// does not fit a dimension.
static std::optional<int64_t> mulDims(int64_t lhs, int64_t rhs) {
  if (ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs))
    return ShapedType::kDynamic;
  int64_t product;
  if (llvm::MulOverflow(lhs, rhs, product) || ShapedType::isDynamic(product))
    return std::nullopt;
  return product;
}

/// The sum of two dimensions, dynamic when either is; nullopt when it does
/// not fit a dimension.
static std::optional<int64_t> addDims(int64_t lhs, int64_t rhs) {
  if (ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs))
    return ShapedType::kDynamic;
  int64_t sum;
  if (llvm::AddOverflow(lhs, rhs, sum) || ShapedType::isDynamic(sum))
    return std::nullopt;
  return sum;
}

/// Row-major strides of a static shape.
static SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Calls `fn` with the multi-index of every element of the static `shape`,
/// in row-major order.
static void forEachIndex(ArrayRef<int64_t> shape,
                         function_ref<void(ArrayRef<int64_t>)> fn) {
  if (ShapedType::getNumElements(shape) == 0)
    return;
  SmallVector<int64_t> index(shape.size(), 0);
  while (true) {
    fn(index);
    int64_t dim = static_cast<int64_t>(shape.size()) - 1;
    for (; dim >= 0; --dim) {
      if (++index[dim] < shape[dim])
        break;
      index[dim] = 0;
    }
    if (dim < 0)
      return;
  }
}

/// Whether a folder may build a constant of `type`: static, and either a
/// splat or no larger than `limit` elements.
static bool canFoldTo(ShapedType type, bool isSplat,
                      int64_t limit = kMaxFoldedElements) {
  if (!type.hasStaticShape())
    return false;
  return isSplat || type.getNumElements() <= limit;
}

/// Builds the constant of `resultType` whose element at each index is the
/// element of `source` at the linear index `sourceIndex` maps it to. Returns
/// null when the result would be too large to fold.
static DenseElementsAttr
remapElements(DenseElementsAttr source, ShapedType resultType,
              function_ref<int64_t(ArrayRef<int64_t>)> sourceIndex) {
  if (!canFoldTo(resultType, source.isSplat()))
    return {};
  if (source.isSplat())
    return DenseElementsAttr::get(resultType,
                                  ArrayRef(source.getSplatValue<Attribute>()));
  auto values = source.getValues<Attribute>();
  SmallVector<Attribute> result;
  result.reserve(resultType.getNumElements());
  forEachIndex(resultType.getShape(), [&](ArrayRef<int64_t> index) {
    result.push_back(values[sourceIndex(index)]);
  });
  return DenseElementsAttr::get(resultType, result);
}

/// The linear row-major offset of `index` given `strides`.
static int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (auto [i, stride] : llvm::zip_equal(index, strides))
    offset += i * stride;
  return offset;
}

/// Reinterprets a constant with the (static) result type of a reshape-like
/// op, within the folding size limit.
static OpFoldResult reshapeConstant(Attribute operand, Type resultType) {
  auto elements = dyn_cast_if_present<DenseElementsAttr>(operand);
  auto type = cast<ShapedType>(resultType);
  if (!elements || !canFoldTo(type, elements.isSplat()) ||
      elements.getNumElements() != type.getNumElements())
    return {};
  return elements.reshape(type);
}

/// Checks that `axes` are sorted, unique and in `[0, bound)`. `what` names
/// the dimension space the axes index, for the message.
static LogicalResult verifyAxes(std::optional<Location> location,
                                ArrayRef<int64_t> axes, int64_t bound,
                                StringRef what) {
  for (auto [i, axis] : llvm::enumerate(axes)) {
    if (axis < 0 || axis >= bound)
      return emitOptionalError(location, "'axes' entry ", i, " is ", axis,
                               ", outside [0, ", bound, ") for ", what,
                               " of rank ", bound);
    if (i == 0)
      continue;
    if (axis == axes[i - 1])
      return emitOptionalError(location, "'axes' has duplicate entry ", axis);
    if (axis < axes[i - 1])
      return emitOptionalError(location, "'axes' must be sorted: ", axis,
                               " follows ", axes[i - 1]);
  }
  return success();
}

/// The integer value of a constant 0-d tensor operand, if it is one.
static std::optional<APInt> getConstantInt(Value value) {
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  return *attr.getValues<APInt>().begin();
}

/// The floating-point value of a constant 0-d tensor operand, if it is one.
static std::optional<double> getConstantFloat(Value value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  return (*attr.getValues<APFloat>().begin()).convertToDouble();
}

//===----------------------------------------------------------------------===//
// resolveReshape
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
cleave::resolveReshape(ArrayRef<int64_t> inputShape, ArrayRef<int64_t> target,
                       bool allowZero, std::string &error) {
  llvm::raw_string_ostream os(error);
  SmallVector<int64_t> result;
  result.reserve(target.size());
  std::optional<size_t> inferredIndex;
  bool hasZero = false;
  for (auto [i, dim] : llvm::enumerate(target)) {
    if (dim == -1) {
      if (inferredIndex) {
        os << "reshape target has more than one -1 (entries " << *inferredIndex
           << " and " << i << ")";
        return failure();
      }
      inferredIndex = i;
      result.push_back(ShapedType::kDynamic);
      continue;
    }
    if (dim < -1) {
      os << "reshape target entry " << i << " is " << dim
         << "; entries must be >= -1";
      return failure();
    }
    if (dim == 0 && !allowZero) {
      if (i >= inputShape.size()) {
        os << "reshape target entry " << i
           << " is 0 (copy the input dimension) but the input has rank "
           << inputShape.size();
        return failure();
      }
      result.push_back(inputShape[i]);
      continue;
    }
    hasZero |= dim == 0;
    result.push_back(dim);
  }
  if (allowZero && hasZero && inferredIndex) {
    os << "reshape target has both 0 and -1 while allowzero is set";
    return failure();
  }

  // A dynamic input dimension leaves the element count unknown: the -1 entry
  // stays dynamic and the counts cannot be compared.
  if (ShapedType::isDynamicShape(inputShape))
    return result;
  int64_t inputCount = ShapedType::getNumElements(inputShape);
  int64_t knownCount = 1;
  for (auto [i, dim] : llvm::enumerate(result)) {
    if (inferredIndex && i == *inferredIndex)
      continue;
    if (llvm::MulOverflow(knownCount, dim, knownCount)) {
      os << "reshape target has more elements than a tensor can hold";
      return failure();
    }
  }

  if (inferredIndex) {
    if (knownCount == 0) {
      os << "reshape target has a -1 next to dimensions with zero elements; "
            "the -1 cannot be inferred";
      return failure();
    }
    if (inputCount % knownCount != 0) {
      os << "reshape of " << inputCount
         << " elements cannot infer -1: " << inputCount
         << " is not a multiple of " << knownCount;
      return failure();
    }
    result[*inferredIndex] = inputCount / knownCount;
    return result;
  }
  if (knownCount != inputCount) {
    os << "reshape changes the element count from " << inputCount << " to "
       << knownCount;
    return failure();
  }
  return result;
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult
ConstantOp::inferReturnTypes(MLIRContext *context,
                             std::optional<Location> location, Adaptor adaptor,
                             SmallVectorImpl<Type> &inferredReturnTypes) {
  // constant_c1.
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return emitOptionalError(location,
                             "'value' must have a ranked tensor "
                             "type, got ",
                             adaptor.getValue().getType());
  inferredReturnTypes.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor adaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  // weight_c1: the byte range holds exactly the tensor. Sub-byte types (i1)
  // take one byte per element, as ONNX stores them.
  RankedTensorType type = getOutput().getType();
  if (!type.hasStaticShape())
    return emitOpError("result type ")
           << type << " must have a static shape to have a byte size";
  int64_t elementBytes =
      llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
  int64_t bytes = type.getNumElements() * elementBytes;
  // The I64Attr accessors return unsigned values; read them signed.
  int64_t length = getLengthAttr().getInt();
  int64_t offset = getOffsetAttr().getInt();
  if (length != bytes)
    return emitOpError("'length' is ")
           << length << " bytes but " << type << " holds " << bytes
           << " bytes (" << type.getNumElements() << " elements of "
           << elementBytes << " bytes)";
  // weight_c2.
  if (offset < 0)
    return emitOpError("'offset' must be non-negative, got ") << offset;
  return success();
}

//===----------------------------------------------------------------------===//
// ShapeOp
//===----------------------------------------------------------------------===//

/// shape_c1: `[start, end)` is a normalised range of dimensions.
static LogicalResult verifyShapeRange(std::optional<Location> location,
                                      int64_t rank, int64_t start,
                                      int64_t end) {
  if (start < 0 || start > end || end > rank)
    return emitOptionalError(location, "'start' ", start, " and 'end' ", end,
                             " must satisfy 0 <= start <= end <= rank (", rank,
                             ")");
  return success();
}

LogicalResult
ShapeOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t start = adaptor.getStartAttr().getInt();
  int64_t end = adaptor.getEndAttr().getInt();
  if (failed(verifyShapeRange(location, inputType.getRank(), start, end)))
    return failure();
  inferredReturnTypes.push_back(
      RankedTensorType::get({end - start}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult ShapeOp::verify() {
  // The verifier runs before the inferred result type is checked, so the
  // range is reported here first; inference repeats the check for builders.
  return verifyShapeRange(getLoc(), getInput().getType().getRank(),
                          getStartAttr().getInt(), getEndAttr().getInt());
}

OpFoldResult ShapeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> dims = getInput().getType().getShape().slice(
      getStartAttr().getInt(), getEndAttr().getInt() - getStartAttr().getInt());
  if (ShapedType::isDynamicShape(dims))
    return {};
  return DenseIntElementsAttr::get(getOutput().getType(), dims);
}

//===----------------------------------------------------------------------===//
// ConstantOfShapeOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOfShapeOp::verify() {
  RankedTensorType resultType = getOutput().getType();
  // constant_of_shape_c1.
  if (getValue().getType() != resultType.getElementType())
    return emitOpError("'value' has type ")
           << getValue().getType() << " but the result element type is "
           << resultType.getElementType();
  // constant_of_shape_c2.
  int64_t length = getShape().getType().getDimSize(0);
  if (!ShapedType::isDynamic(length) && length != resultType.getRank())
    return emitOpError("shape operand has ")
           << length << " entries but the result has rank "
           << resultType.getRank();
  // constant_of_shape_c3: a constant shape must be the result's.
  DenseIntElementsAttr shape;
  if (!matchPattern(getShape(), m_Constant(&shape)))
    return success();
  for (auto [i, dim] : llvm::enumerate(shape.getValues<int64_t>())) {
    int64_t resultDim = resultType.getDimSize(i);
    if (dim < 0 || (!ShapedType::isDynamic(resultDim) && resultDim != dim))
      return emitOpError("shape operand entry ")
             << i << " is " << dim << " but result dimension " << i << " is "
             << resultType.getDimSize(i);
  }
  return success();
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor adaptor) {
  // The result is a splat whatever the size; never a dense buffer.
  RankedTensorType type = getOutput().getType();
  if (!type.hasStaticShape())
    return {};
  return DenseElementsAttr::get(type, ArrayRef<Attribute>(getValue()));
}

//===----------------------------------------------------------------------===//
// RangeOp
//===----------------------------------------------------------------------===//

/// The length of the range, when every operand is a constant. Fails, with a
/// diagnostic on `op`, on a constant zero delta.
/// The most elements a range may have: 2^62, like any tensor's bytes.
static constexpr int64_t kMaxRangeLength = int64_t(1) << 62;

static FailureOr<std::optional<int64_t>> getConstantRangeLength(RangeOp op) {
  Type elementType = op.getOutput().getType().getElementType();
  if (isa<FloatType>(elementType)) {
    std::optional<double> start = getConstantFloat(op.getStart());
    std::optional<double> limit = getConstantFloat(op.getLimit());
    std::optional<double> delta = getConstantFloat(op.getDelta());
    if (delta && *delta == 0.0)
      return op.emitOpError("'delta' must be non-zero");
    if (!start || !limit || !delta)
      return std::optional<int64_t>();
    double length = std::ceil((*limit - *start) / *delta);
    if (!std::isfinite(length))
      return op.emitOpError("'start', 'limit' and 'delta' do not give a "
                            "finite number of elements");
    if (length >= kMaxRangeLength)
      return op.emitOpError("'start', 'limit' and 'delta' give more "
                            "elements than a tensor can hold");
    return std::optional<int64_t>(length > 0 ? static_cast<int64_t>(length)
                                             : 0);
  }
  std::optional<APInt> start = getConstantInt(op.getStart());
  std::optional<APInt> limit = getConstantInt(op.getLimit());
  std::optional<APInt> delta = getConstantInt(op.getDelta());
  if (delta && delta->isZero())
    return op.emitOpError("'delta' must be non-zero");
  if (!start || !limit || !delta)
    return std::optional<int64_t>();
  // In 128 bits: limit - start, and its quotient by -1, may not fit 64.
  __int128 span =
      static_cast<__int128>(limit->getSExtValue()) - start->getSExtValue();
  __int128 step = delta->getSExtValue();
  __int128 length =
      span / step + (span % step != 0 && (span < 0) == (step < 0));
  if (length >= static_cast<__int128>(kMaxRangeLength))
    return op.emitOpError("'start', 'limit' and 'delta' give more elements "
                          "than a tensor can hold");
  return std::optional<int64_t>(std::max<int64_t>(length, 0));
}

LogicalResult RangeOp::verify() {
  RankedTensorType resultType = getOutput().getType();
  Type elementType = resultType.getElementType();
  // range_c1.
  if (resultType.getRank() != 1)
    return emitOpError("result must be 1-D, got ") << resultType;
  if (elementType.isInteger(1) || elementType.isUnsignedInteger())
    return emitOpError("element type must be a float or a signless integer "
                       "wider than 1 bit, got ")
           << elementType;
  // range_c2.
  const StringRef names[] = {"start", "limit", "delta"};
  for (auto [name, operand] : llvm::zip_equal(names, getOperands())) {
    auto type = cast<RankedTensorType>(operand.getType());
    if (type.getRank() != 0 || type.getElementType() != elementType)
      return emitOpError("'") << name << "' must be a 0-d tensor of "
                              << elementType << ", got " << type;
  }
  // range_c3 (zero delta) and range_c4 (length).
  FailureOr<std::optional<int64_t>> length = getConstantRangeLength(*this);
  if (failed(length))
    return failure();
  int64_t resultLength = resultType.getDimSize(0);
  if (*length && !ShapedType::isDynamic(resultLength) &&
      resultLength != **length)
    return emitOpError("result has ")
           << resultLength << " elements but the constant operands give "
           << **length;
  return success();
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  RankedTensorType type = getOutput().getType();
  if (!canFoldTo(type, /*isSplat=*/false, kMaxFoldedRangeElements))
    return {};
  auto start = dyn_cast_if_present<DenseElementsAttr>(adaptor.getStart());
  auto delta = dyn_cast_if_present<DenseElementsAttr>(adaptor.getDelta());
  if (!start || !delta || !adaptor.getLimit())
    return {};
  int64_t length = type.getNumElements();
  if (auto floatType = dyn_cast<FloatType>(type.getElementType())) {
    double first = start.getSplatValue<APFloat>().convertToDouble();
    double step = delta.getSplatValue<APFloat>().convertToDouble();
    SmallVector<APFloat> values;
    values.reserve(length);
    for (int64_t i = 0; i < length; ++i) {
      APFloat value(first + static_cast<double>(i) * step);
      bool losesInfo;
      value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      values.push_back(value);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  int64_t first = start.getSplatValue<APInt>().getSExtValue();
  int64_t step = delta.getSplatValue<APInt>().getSExtValue();
  SmallVector<APInt> values;
  values.reserve(length);
  for (int64_t i = 0; i < length; ++i)
    // Wraps as the element type does (in unsigned arithmetic: no UB).
    values.emplace_back(width,
                        static_cast<uint64_t>(first) +
                            static_cast<uint64_t>(i) *
                                static_cast<uint64_t>(step),
                        /*isSigned=*/false, /*implicitTrunc=*/true);
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getOutput().getType();
  // reshape_c1.
  if (inputType.hasStaticShape() && resultType.hasStaticShape() &&
      inputType.getNumElements() != resultType.getNumElements())
    return emitOpError("cannot reshape ")
           << inputType.getNumElements() << " elements (" << inputType
           << ") into " << resultType.getNumElements() << " elements ("
           << resultType << ")";
  // reshape_c2.
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("element type changes from ")
           << inputType.getElementType() << " to "
           << resultType.getElementType();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  if (OpFoldResult folded =
          reshapeConstant(adaptor.getInput(), getOutput().getType()))
    return folded;
  // A reshape only needs the row-major element order, so it can read past
  // any reshape-like op that feeds it.
  Operation *producer = getInput().getDefiningOp();
  if (isa_and_present<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(producer)) {
    Value source = producer->getOperand(0);
    if (source.getType() == getOutput().getType())
      return source;
    getInputMutable().assign(source);
    return getOutput();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// FlattenOp
//===----------------------------------------------------------------------===//

LogicalResult
FlattenOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxisAttr().getInt();
  // flatten_c1.
  if (axis < 0 || axis > inputType.getRank())
    return emitOptionalError(location, "'axis' ", axis,
                             " must be in [0, rank] = [0, ",
                             inputType.getRank(), "]");
  int64_t outer = 1, inner = 1;
  for (auto [i, dim] : llvm::enumerate(inputType.getShape())) {
    int64_t &side = static_cast<int64_t>(i) < axis ? outer : inner;
    std::optional<int64_t> product = mulDims(side, dim);
    // flatten_c2.
    if (!product)
      return emitOptionalError(location, "flattening ", inputType,
                               " gives a dimension of more elements than "
                               "a dimension can hold");
    side = *product;
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get({outer, inner}, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult
TransposeOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  int64_t rank = inputType.getRank();
  // transpose_c1.
  if (static_cast<int64_t>(perm.size()) != rank)
    return emitOptionalError(location, "'perm' has ", perm.size(),
                             " entries but the input has rank ", rank);
  // transpose_c2.
  SmallVector<bool> seen(rank, false);
  for (int64_t dim : perm) {
    if (dim < 0 || dim >= rank || seen[dim])
      return emitOptionalError(
          location, "'perm' [", perm, "] is not a permutation of [0, ", rank,
          "): ", dim,
          dim < 0 || dim >= rank ? " is out of range" : " appears twice");
    seen[dim] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t dim : perm)
    shape.push_back(inputType.getDimSize(dim));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  auto elements = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!elements)
    return {};
  SmallVector<int64_t> inputStrides =
      rowMajorStrides(getInput().getType().getShape());
  return remapElements(elements, getOutput().getType(),
                       [&](ArrayRef<int64_t> index) {
                         int64_t offset = 0;
                         for (auto [i, dim] : llvm::enumerate(perm))
                           offset += index[i] * inputStrides[dim];
                         return offset;
                       });
}

namespace {
/// transpose(transpose(x, inner), outer) -> transpose(x, inner o outer).
/// The identity composition then folds away.
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<TransposeOp>();
    if (!producer)
      return failure();
    ArrayRef<int64_t> inner = producer.getPerm();
    SmallVector<int64_t> perm;
    for (int64_t dim : op.getPerm())
      perm.push_back(inner[dim]);
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, op.getOutput().getType(), producer.getInput(),
        rewriter.getDenseI64ArrayAttr(perm));
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeTransposes>(context);
}

//===----------------------------------------------------------------------===//
// SqueezeOp / UnsqueezeOp
//===----------------------------------------------------------------------===//

LogicalResult
SqueezeOp::inferReturnTypes(MLIRContext *context,
                            std::optional<Location> location, Adaptor adaptor,
                            SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  // squeeze_c1 (range) and squeeze_c2 (sorted, unique).
  if (failed(verifyAxes(location, axes, inputType.getRank(), "an input")))
    return failure();
  SmallVector<int64_t> shape;
  for (auto [i, dim] : llvm::enumerate(inputType.getShape())) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i))) {
      shape.push_back(dim);
      continue;
    }
    // squeeze_c3. A dynamic dimension is 1 at run time or the model is
    // wrong; ONNX leaves that to execution.
    if (!ShapedType::isDynamic(dim) && dim != 1)
      return emitOptionalError(location, "cannot squeeze dimension ", i,
                               " of size ", dim);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  return reshapeConstant(adaptor.getInput(), getOutput().getType());
}

LogicalResult
UnsqueezeOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t resultRank = inputType.getRank() + static_cast<int64_t>(axes.size());
  // unsqueeze_c1 (range) and unsqueeze_c2 (sorted, unique).
  if (failed(verifyAxes(location, axes, resultRank, "a result")))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> inputShape = inputType.getShape();
  for (int64_t i = 0; i < resultRank; ++i) {
    if (llvm::is_contained(axes, i)) {
      shape.push_back(1);
      continue;
    }
    shape.push_back(inputShape.front());
    inputShape = inputShape.drop_front();
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getOutput().getType())
    return getInput();
  return reshapeConstant(adaptor.getInput(), getOutput().getType());
}

//===----------------------------------------------------------------------===//
// ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getOutput().getType();
  // expand_c1: broadcasting the operand with the result shape gives the
  // result shape back. A dynamic result dimension accepts any broadcast.
  FailureOr<SmallVector<int64_t>> broadcast =
      broadcastShapes(inputType.getShape(), resultType.getShape());
  bool matches =
      succeeded(broadcast) && broadcast->size() == resultType.getShape().size();
  if (matches) {
    for (auto [got, want] : llvm::zip_equal(*broadcast, resultType.getShape()))
      matches &= ShapedType::isDynamic(want) || got == want;
  }
  if (!matches)
    return emitOpError("operand type ")
           << inputType << " does not broadcast to the result type "
           << resultType;
  // expand_c2.
  if (inputType.getElementType() != resultType.getElementType())
    return emitOpError("element type changes from ")
           << inputType.getElementType() << " to "
           << resultType.getElementType();
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  RankedTensorType inputType = getInput().getType();
  if (inputType == getOutput().getType())
    return getInput();
  auto elements = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!elements)
    return {};
  SmallVector<int64_t> inputStrides = rowMajorStrides(inputType.getShape());
  int64_t leading = getOutput().getType().getRank() - inputType.getRank();
  return remapElements(elements, getOutput().getType(),
                       [&](ArrayRef<int64_t> index) {
                         int64_t offset = 0;
                         for (int64_t i = 0; i < inputType.getRank(); ++i)
                           if (inputType.getDimSize(i) != 1)
                             offset += index[leading + i] * inputStrides[i];
                         return offset;
                       });
}

//===----------------------------------------------------------------------===//
// TileOp
//===----------------------------------------------------------------------===//

LogicalResult
TileOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         Adaptor adaptor,
                         SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> repeats = adaptor.getRepeats();
  // tile_c1.
  if (static_cast<int64_t>(repeats.size()) != inputType.getRank())
    return emitOptionalError(location, "'repeats' has ", repeats.size(),
                             " entries but the input has rank ",
                             inputType.getRank());
  SmallVector<int64_t> shape;
  for (auto [i, dim, repeat] : llvm::enumerate(inputType.getShape(), repeats)) {
    // tile_c2.
    if (repeat < 0)
      return emitOptionalError(location, "'repeats' entry ", i, " is ", repeat,
                               "; repeats must be non-negative");
    std::optional<int64_t> size = mulDims(dim, repeat);
    // tile_c3.
    if (!size)
      return emitOptionalError(location, "repeating dimension ", i, " of size ",
                               dim, " ", repeat,
                               " times gives more elements than a dimension "
                               "can hold");
    shape.push_back(*size);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult
ConcatOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  ValueRange inputs = adaptor.getInputs();
  // concat_c1.
  if (inputs.empty())
    return emitOptionalError(location, "needs at least one operand");
  auto firstType = cast<RankedTensorType>(inputs.front().getType());
  int64_t rank = firstType.getRank();
  int64_t axis = adaptor.getAxisAttr().getInt();
  // concat_c2.
  if (axis < 0 || axis >= rank)
    return emitOptionalError(location, "'axis' ", axis,
                             " must be in [0, rank) = [0, ", rank, ")");
  SmallVector<int64_t> shape(firstType.getShape());
  shape[axis] = 0;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto type = cast<RankedTensorType>(input.getType());
    // concat_c3.
    if (type.getRank() != rank)
      return emitOptionalError(location, "operand ", i, " has rank ",
                               type.getRank(), " but operand 0 has rank ",
                               rank);
    // concat_c4.
    if (type.getElementType() != firstType.getElementType())
      return emitOptionalError(
          location, "operand ", i, " has element type ", type.getElementType(),
          " but operand 0 has element type ", firstType.getElementType());
    for (int64_t d = 0; d < rank; ++d) {
      int64_t dim = type.getDimSize(d);
      if (d == axis) {
        std::optional<int64_t> sum = addDims(shape[d], dim);
        // concat_c6.
        if (!sum)
          return emitOptionalError(location, "concatenating operand ", i,
                                   " gives more elements along axis ", axis,
                                   " than a dimension can hold");
        shape[d] = *sum;
        continue;
      }
      // concat_c5. A dynamic dimension takes the static size of another
      // operand, which it must have at run time.
      if (ShapedType::isDynamic(dim))
        continue;
      if (!ShapedType::isDynamic(shape[d]) && shape[d] != dim)
        return emitOptionalError(location, "operand ", i, " has size ", dim,
                                 " in dimension ", d,
                                 " but an earlier "
                                 "operand has size ",
                                 shape[d]);
      shape[d] = dim;
    }
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, firstType.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 &&
      getInputs().front().getType() == getOutput().getType())
    return getInputs().front();
  SmallVector<DenseElementsAttr> operands;
  for (Attribute operand : adaptor.getInputs()) {
    auto elements = dyn_cast_if_present<DenseElementsAttr>(operand);
    if (!elements)
      return {};
    operands.push_back(elements);
  }
  RankedTensorType type = getOutput().getType();
  bool sameSplat = llvm::all_of(operands, [&](DenseElementsAttr elements) {
    return elements.isSplat() &&
           elements.getSplatValue<Attribute>() ==
               operands.front().getSplatValue<Attribute>();
  });
  if (!canFoldTo(type, sameSplat))
    return {};
  if (sameSplat)
    return DenseElementsAttr::get(
        type, ArrayRef(operands.front().getSplatValue<Attribute>()));

  // Row-major, the result is, for each index of the dimensions before
  // `axis`, one contiguous block of every operand in turn.
  int64_t axis = getAxisAttr().getInt();
  SmallVector<Attribute> values;
  values.reserve(type.getNumElements());
  int64_t outer = ShapedType::getNumElements(type.getShape().take_front(axis));
  for (int64_t o = 0; o < outer; ++o) {
    for (DenseElementsAttr elements : operands) {
      int64_t block = ShapedType::getNumElements(
          elements.getType().getShape().drop_front(axis));
      auto source = elements.getValues<Attribute>();
      for (int64_t i = 0; i < block; ++i)
        values.push_back(source[o * block + i]);
    }
  }
  return DenseElementsAttr::get(type, values);
}

//===----------------------------------------------------------------------===//
// SplitOp
//===----------------------------------------------------------------------===//

LogicalResult
SplitOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxisAttr().getInt();
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  // split_c1.
  if (axis < 0 || axis >= inputType.getRank())
    return emitOptionalError(location, "'axis' ", axis,
                             " must be in [0, rank) = [0, ",
                             inputType.getRank(), ")");
  int64_t total = 0;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    // split_c2.
    if (size < 0)
      return emitOptionalError(location, "'sizes' entry ", i, " is ", size,
                               "; sizes must be non-negative");
    total += size;
  }
  // split_c3.
  int64_t dim = inputType.getDimSize(axis);
  if (!ShapedType::isDynamic(dim) && total != dim)
    return emitOptionalError(location, "'sizes' [", sizes, "] add up to ",
                             total, " but dimension ", axis, " has size ", dim);
  SmallVector<int64_t> shape(inputType.getShape());
  for (int64_t size : sizes) {
    shape[axis] = size;
    inferredReturnTypes.push_back(
        RankedTensorType::get(shape, inputType.getElementType()));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult
SliceOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t rank = inputType.getRank();
  ArrayRef<int64_t> starts = adaptor.getStarts();
  ArrayRef<int64_t> ends = adaptor.getEnds();
  ArrayRef<int64_t> steps = adaptor.getSteps();
  // slice_c1.
  const std::pair<StringRef, ArrayRef<int64_t>> lists[] = {
      {"starts", starts}, {"ends", ends}, {"steps", steps}};
  for (auto [name, values] : lists) {
    if (static_cast<int64_t>(values.size()) != rank)
      return emitOptionalError(location, "'", name, "' has ", values.size(),
                               " entries but the input has rank ", rank);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = inputType.getDimSize(d);
    int64_t start = starts[d], end = ends[d], step = steps[d];
    // slice_c2.
    if (step == 0)
      return emitOptionalError(location, "'steps' entry ", d, " is 0");
    if (ShapedType::isDynamic(dim)) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    // slice_c3 and slice_c4: the bounds are clamped as ONNX clamps them, so
    // every selected index is inside the dimension.
    int64_t startMax = step > 0 ? dim : dim - 1;
    int64_t endMin = step > 0 ? 0 : -1;
    int64_t endMax = step > 0 ? dim : dim - 1;
    if (start < 0 || start > startMax)
      return emitOptionalError(location, "'starts' entry ", d, " is ", start,
                               " but must be clamped to [0, ", startMax,
                               "] for dimension size ", dim, " and step ",
                               step);
    if (end < endMin || end > endMax)
      return emitOptionalError(location, "'ends' entry ", d, " is ", end,
                               " but must be clamped to [", endMin, ", ",
                               endMax, "] for dimension size ", dim,
                               " and step ", step);
    shape.push_back(
        std::max<int64_t>(0, llvm::divideCeilSigned(end - start, step)));
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getOutput().getType();
  ArrayRef<int64_t> starts = getStarts();
  ArrayRef<int64_t> steps = getSteps();
  bool selectsAll = inputType == resultType;
  for (int64_t d = 0; selectsAll && d < inputType.getRank(); ++d) {
    // A size-1 dimension is kept whole by any non-empty slice of it.
    selectsAll =
        inputType.getDimSize(d) == 1 ||
        (!inputType.isDynamicDim(d) && starts[d] == 0 && steps[d] == 1);
  }
  if (selectsAll)
    return getInput();
  auto elements = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!elements)
    return {};
  SmallVector<int64_t> inputStrides = rowMajorStrides(inputType.getShape());
  return remapElements(elements, resultType, [&](ArrayRef<int64_t> index) {
    int64_t offset = 0;
    for (auto [d, i] : llvm::enumerate(index))
      offset += (starts[d] + i * steps[d]) * inputStrides[d];
    return offset;
  });
}

//===----------------------------------------------------------------------===//
// GatherOp
//===----------------------------------------------------------------------===//

LogicalResult
GatherOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t axis = adaptor.getAxisAttr().getInt();
  // gather_c1.
  if (axis < 0 || axis >= dataType.getRank())
    return emitOptionalError(location, "'axis' ", axis,
                             " must be in [0, rank) = [0, ", dataType.getRank(),
                             ") of the data operand");
  ArrayRef<int64_t> dataShape = dataType.getShape();
  SmallVector<int64_t> shape(dataShape.take_front(axis));
  llvm::append_range(shape, indicesType.getShape());
  llvm::append_range(shape, dataShape.drop_front(axis + 1));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, dataType.getElementType()));
  return success();
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getData());
  if (!data)
    return {};
  RankedTensorType resultType = getOutput().getType();
  // Every element of a splat is the same whatever the indices select.
  if (data.isSplat())
    return remapElements(data, resultType,
                         [](ArrayRef<int64_t>) -> int64_t { return 0; });
  auto indices =
      dyn_cast_if_present<DenseIntElementsAttr>(adaptor.getIndices());
  if (!indices || !canFoldTo(resultType, /*isSplat=*/false))
    return {};

  int64_t axis = getAxisAttr().getInt();
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  int64_t axisSize = dataShape[axis];
  SmallVector<int64_t> indexValues;
  for (const APInt &index : indices.getValues<APInt>()) {
    int64_t value = index.getSExtValue();
    if (value < -axisSize || value >= axisSize)
      return {}; // Out of range: an error at run time, not ours to fold.
    indexValues.push_back(value < 0 ? value + axisSize : value);
  }
  SmallVector<int64_t> dataStrides = rowMajorStrides(dataShape);
  SmallVector<int64_t> indexStrides =
      rowMajorStrides(indices.getType().getShape());
  int64_t indexRank = indices.getType().getRank();
  return remapElements(data, resultType, [&](ArrayRef<int64_t> index) {
    ArrayRef<int64_t> outer = index.take_front(axis);
    ArrayRef<int64_t> position = index.slice(axis, indexRank);
    ArrayRef<int64_t> inner = index.drop_front(axis + indexRank);
    int64_t offset = linearize(outer, ArrayRef(dataStrides).take_front(axis));
    offset +=
        indexValues[linearize(position, indexStrides)] * dataStrides[axis];
    offset += linearize(inner, ArrayRef(dataStrides).drop_front(axis + 1));
    return offset;
  });
}

//===----------------------------------------------------------------------===//
// PadOp
//===----------------------------------------------------------------------===//

LogicalResult
PadOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                        Adaptor adaptor,
                        SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> pads = adaptor.getPads();
  int64_t rank = inputType.getRank();
  // pad_c1.
  if (static_cast<int64_t>(pads.size()) != 2 * rank)
    return emitOptionalError(location, "'pads' has ", pads.size(),
                             " entries but needs 2 * rank = ", 2 * rank);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t begin = pads[d], end = pads[rank + d];
    // pad_c2.
    if (begin < 0 || end < 0)
      return emitOptionalError(location, "'pads' of dimension ", d, " are ",
                               begin, " and ", end,
                               "; pads must be non-negative");
    std::optional<int64_t> padded = addDims(begin, end);
    if (padded)
      padded = addDims(inputType.getDimSize(d), *padded);
    // pad_c4.
    if (!padded)
      return emitOptionalError(location, "padding dimension ", d, " by ", begin,
                               " and ", end,
                               " gives more elements than a dimension can "
                               "hold");
    shape.push_back(*padded);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, inputType.getElementType()));
  return success();
}

LogicalResult PadOp::verify() {
  // pad_c3.
  StringRef mode = getMode();
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return emitOpError("'mode' must be one of constant, reflect, edge, wrap; "
                       "got \"")
           << mode << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// ResizeOp
//===----------------------------------------------------------------------===//

LogicalResult ResizeOp::verify() {
  RankedTensorType inputType = getInput().getType();
  RankedTensorType resultType = getOutput().getType();
  ArrayRef<double> scales = getScales();
  // resize_c1.
  if (static_cast<int64_t>(scales.size()) != inputType.getRank())
    return emitOpError("'scales' has ")
           << scales.size() << " entries but the input has rank "
           << inputType.getRank();
  // resize_c2.
  if (resultType.getRank() != inputType.getRank() ||
      resultType.getElementType() != inputType.getElementType())
    return emitOpError("result type ")
           << resultType << " must have the rank and element type of "
           << inputType;
  for (auto [d, scale] : llvm::enumerate(scales)) {
    // resize_c3.
    if (!(scale > 0.0))
      return emitOpError("'scales' entry ")
             << d << " is " << scale << "; scales must be positive";
    // resize_c4: ONNX sizes the output floor(input * scale), or
    // round(input * scale) when `sizes` keeps the aspect ratio. A scale stored
    // as size / input size may land just below the integer, hence the
    // relative tolerance.
    int64_t in = inputType.getDimSize(d), out = resultType.getDimSize(d);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(out))
      continue;
    double exact = static_cast<double>(in) * scale;
    auto floored =
        static_cast<int64_t>(std::floor(exact + 1e-6 * std::max(1.0, exact)));
    auto rounded = static_cast<int64_t>(std::llround(exact));
    if (out == floored || out == rounded)
      continue;
    InFlightDiagnostic diag = emitOpError("result dimension ")
                              << d << " is " << out << " but " << in << " * "
                              << scale << " gives " << floored;
    if (rounded != floored)
      diag << " (floor) or " << rounded << " (round)";
    return diag;
  }
  // resize_c5, resize_c6, resize_c7: ONNX's enumerations.
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, getMode()))
    return emitOpError("'mode' must be one of nearest, linear, cubic; got \"")
           << getMode() << "\"";
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_crop_and_resize"},
                          getCoordinateTransformationMode()))
    return emitOpError("'coordinate_transformation_mode' \"")
           << getCoordinateTransformationMode() << "\" is not an ONNX mode";
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          getNearestMode()))
    return emitOpError("'nearest_mode' must be one of round_prefer_floor, "
                       "round_prefer_ceil, floor, ceil; got \"")
           << getNearestMode() << "\"";
  return success();
}
