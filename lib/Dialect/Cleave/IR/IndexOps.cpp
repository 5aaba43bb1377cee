//===- IndexOps.cpp - gathers, scatters, one-hot and trilu ------*- C++ -*-===//
//
// Type inference, verifiers and folders of the ops that index by tensors of
// indices. A folder never folds an out-of-range index: that is an error the
// kernel reports at run time, naming the node.
//
//===----------------------------------------------------------------------===//

#include "cleave/Dialect/Cleave/IR/CleaveOps.h"

#include "ConstantEval.h"
#include "OpDiagnostics.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace cleave;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Row-major strides of a static shape.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// The multi-index of the row-major position `linear` in `shape`.
static SmallVector<int64_t> delinearize(int64_t linear,
                                        ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return index;
}

/// An index of a dimension of `size` with negative values counted from the
/// end, or nullopt when it falls outside the dimension.
static std::optional<int64_t> normalizeIndex(int64_t index, int64_t size) {
  if (index < -size || index >= size)
    return std::nullopt;
  return index < 0 ? index + size : index;
}

/// Whether two dimensions may be equal (either is dynamic or they match).
static bool dimsAgree(int64_t lhs, int64_t rhs) {
  return ShapedType::isDynamic(lhs) || ShapedType::isDynamic(rhs) || lhs == rhs;
}

/// Whether a fold may build a non-splat constant of `type`.
static bool canFold(ShapedType type) {
  return type.hasStaticShape() && type.getNumElements() <= kMaxFoldedElements;
}

/// The index values of a constant, or nullopt when it is not one.
static std::optional<SmallVector<int64_t>> indexValues(Attribute attr) {
  auto indices = dyn_cast_if_present<DenseIntElementsAttr>(attr);
  if (!indices)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &value : indices.getValues<APInt>())
    values.push_back(value.getSExtValue());
  return values;
}

static constexpr StringLiteral kReductions[] = {"none", "add", "mul", "max",
                                                "min"};

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (llvm::is_contained(kReductions, reduction))
    return success();
  return op->emitOpError(
             "'reduction' must be one of none, add, mul, max, min; got \"")
         << reduction << "\"";
}

/// `current` combined with `update` by a scatter's reduction, or null when
/// the element type has no such arithmetic here.
static Attribute combine(Attribute current, Attribute update,
                         StringRef reduction) {
  if (reduction == "none")
    return update;
  if (auto lhs = dyn_cast<FloatAttr>(current)) {
    APFloat a = lhs.getValue(), b = cast<FloatAttr>(update).getValue();
    if (reduction == "add")
      a.add(b, APFloat::rmNearestTiesToEven);
    else if (reduction == "mul")
      a.multiply(b, APFloat::rmNearestTiesToEven);
    else if (reduction == "max")
      a = llvm::maxnum(a, b);
    else
      a = llvm::minnum(a, b);
    return FloatAttr::get(lhs.getType(), a);
  }
  auto lhs = dyn_cast<IntegerAttr>(current);
  if (!lhs)
    return {};
  auto type = cast<IntegerType>(lhs.getType());
  APInt a = lhs.getValue(), b = cast<IntegerAttr>(update).getValue();
  bool isUnsigned = isUnsignedElement(type);
  if (reduction == "add")
    a = type.getWidth() == 1 ? (a | b) : a + b;
  else if (reduction == "mul")
    a = type.getWidth() == 1 ? (a & b) : a * b;
  else if (reduction == "max")
    a = isUnsigned ? llvm::APIntOps::umax(a, b) : llvm::APIntOps::smax(a, b);
  else
    a = isUnsigned ? llvm::APIntOps::umin(a, b) : llvm::APIntOps::smin(a, b);
  return IntegerAttr::get(type, a);
}

/// Applies `updates` to a copy of `data`: update `u` lands on the element
/// `target(u)` names (nullopt refuses the fold). Null when a combination is
/// not foldable.
static DenseElementsAttr
scatterConstant(DenseElementsAttr data, DenseElementsAttr updates,
                StringRef reduction,
                function_ref<std::optional<int64_t>(int64_t)> target) {
  SmallVector<Attribute> result = llvm::to_vector(data.getValues<Attribute>());
  auto values = updates.getValues<Attribute>();
  for (int64_t u = 0, e = updates.getNumElements(); u < e; ++u) {
    std::optional<int64_t> position = target(u);
    if (!position)
      return {};
    Attribute combined = combine(result[*position], values[u], reduction);
    if (!combined)
      return {};
    result[*position] = combined;
  }
  return DenseElementsAttr::get(data.getType(), result);
}

//===----------------------------------------------------------------------===//
// GatherNDOp
//===----------------------------------------------------------------------===//

LogicalResult
GatherNDOp::inferReturnTypes(MLIRContext *context,
                             std::optional<Location> location, Adaptor adaptor,
                             SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  int64_t rank = dataType.getRank(), indexRank = indicesType.getRank();
  int64_t batchDims = adaptor.getBatchDims();
  // gather_nd_c2.
  if (batchDims < 0 || batchDims >= std::min(rank, indexRank))
    return emitOptionalError(location, "'batch_dims' ", batchDims,
                             " must be in [0, min(rank(data), "
                             "rank(indices))) = [0, ",
                             std::min(rank, indexRank), ")");
  // gather_nd_c1.
  int64_t tuple = indicesType.getShape().back();
  if (ShapedType::isDynamic(tuple) || tuple < 1 || tuple > rank - batchDims)
    return emitOptionalError(location, "the last dimension of 'indices' (",
                             detail::formatDim(tuple),
                             ") must be static and in [1, ", rank - batchDims,
                             "], the dimensions of 'data' after the batch");
  // gather_nd_c3.
  for (int64_t d = 0; d < batchDims; ++d)
    if (!dimsAgree(dataType.getDimSize(d), indicesType.getDimSize(d)))
      return emitOptionalError(location, "batch dimension ", d,
                               " of 'indices' (", indicesType.getDimSize(d),
                               ") differs from that of 'data' (",
                               dataType.getDimSize(d), ")");
  SmallVector<int64_t> shape(indicesType.getShape().drop_back());
  llvm::append_range(shape, dataType.getShape().drop_front(batchDims + tuple));
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, dataType.getElementType()));
  return success();
}

OpFoldResult GatherNDOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getData());
  std::optional<SmallVector<int64_t>> indices =
      indexValues(adaptor.getIndices());
  RankedTensorType resultType = getOutput().getType();
  if (!data || !indices || !canFold(resultType))
    return {};
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  int64_t batchDims = getBatchDims();
  int64_t tuple = getIndices().getType().getShape().back();
  int64_t numTuples = static_cast<int64_t>(indices->size()) / tuple;
  int64_t batchSize =
      ShapedType::getNumElements(dataShape.take_front(batchDims));
  int64_t tuplesPerBatch = batchSize ? numTuples / batchSize : 0;
  int64_t slice =
      ShapedType::getNumElements(dataShape.drop_front(batchDims + tuple));
  SmallVector<int64_t> strides = stridesOf(dataShape);
  auto values = data.getValues<Attribute>();
  SmallVector<Attribute> result;
  result.reserve(resultType.getNumElements());
  for (int64_t t = 0; t < numTuples; ++t) {
    int64_t offset = (t / std::max<int64_t>(tuplesPerBatch, 1)) *
                     (batchDims ? strides[batchDims - 1] : 0);
    for (int64_t j = 0; j < tuple; ++j) {
      int64_t dim = batchDims + j;
      std::optional<int64_t> index =
          normalizeIndex((*indices)[t * tuple + j], dataShape[dim]);
      if (!index)
        return {};
      offset += *index * strides[dim];
    }
    for (int64_t s = 0; s < slice; ++s)
      result.push_back(values[offset + s]);
  }
  return DenseElementsAttr::get(resultType, result);
}

//===----------------------------------------------------------------------===//
// ScatterNDOp
//===----------------------------------------------------------------------===//

LogicalResult
ScatterNDOp::inferReturnTypes(MLIRContext *context,
                              std::optional<Location> location, Adaptor adaptor,
                              SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  auto updatesType = cast<RankedTensorType>(adaptor.getUpdates().getType());
  int64_t rank = dataType.getRank();
  // scatter_nd_c1.
  int64_t tuple = indicesType.getRank() ? indicesType.getShape().back()
                                        : ShapedType::kDynamic;
  if (ShapedType::isDynamic(tuple) || tuple < 1 || tuple > rank)
    return emitOptionalError(
        location, "the last dimension of 'indices' (", detail::formatDim(tuple),
        ") must be static and in [1, ", rank, "], the rank of 'data'");
  // scatter_nd_c2.
  SmallVector<int64_t> expected(indicesType.getShape().drop_back());
  llvm::append_range(expected, dataType.getShape().drop_front(tuple));
  ArrayRef<int64_t> updates = updatesType.getShape();
  if (updates.size() != expected.size() ||
      !llvm::all_of(llvm::zip_equal(updates, expected), [](auto dims) {
        return dimsAgree(std::get<0>(dims), std::get<1>(dims));
      }))
    return emitOptionalError(location, "'updates' has shape ",
                             detail::formatShape(updates),
                             " but indices.shape[:-1] + data.shape[", tuple,
                             ":] is ", detail::formatShape(expected));
  inferredReturnTypes.push_back(dataType);
  return success();
}

LogicalResult ScatterNDOp::verify() {
  // scatter_nd_c3.
  if (getUpdates().getType().getElementType() !=
      getData().getType().getElementType())
    return emitOpError("'updates' has element type ")
           << getUpdates().getType().getElementType() << " but 'data' has "
           << getData().getType().getElementType();
  // scatter_nd_c4.
  return verifyReduction(*this, getReduction());
}

OpFoldResult ScatterNDOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getData());
  auto updates = dyn_cast_if_present<DenseElementsAttr>(adaptor.getUpdates());
  std::optional<SmallVector<int64_t>> indices =
      indexValues(adaptor.getIndices());
  if (!data || !updates || !indices || !canFold(data.getType()))
    return {};
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  int64_t tuple = getIndices().getType().getShape().back();
  int64_t slice = ShapedType::getNumElements(dataShape.drop_front(tuple));
  SmallVector<int64_t> strides = stridesOf(dataShape);
  return scatterConstant(
      data, updates, getReduction(), [&](int64_t u) -> std::optional<int64_t> {
        int64_t t = u / slice, offset = u % slice;
        for (int64_t j = 0; j < tuple; ++j) {
          std::optional<int64_t> index =
              normalizeIndex((*indices)[t * tuple + j], dataShape[j]);
          if (!index)
            return std::nullopt;
          offset += *index * strides[j];
        }
        return offset;
      });
}

//===----------------------------------------------------------------------===//
// GatherElementsOp and ScatterElementsOp
//===----------------------------------------------------------------------===//

/// The checks the two element-wise indexing ops share: `axis` in range, the
/// same rank, and `indices` no larger than `data` off the axis.
static LogicalResult verifyElementIndexing(std::optional<Location> location,
                                           RankedTensorType dataType,
                                           RankedTensorType indicesType,
                                           int64_t axis) {
  int64_t rank = dataType.getRank();
  // gather_elements_c1, scatter_elements_c1.
  if (axis < 0 || axis >= rank)
    return emitOptionalError(location, "'axis' ", axis,
                             " must be in [0, rank) = [0, ", rank,
                             ") of the data operand");
  // gather_elements_c2, scatter_elements_c2.
  if (indicesType.getRank() != rank)
    return emitOptionalError(location, "'indices' has rank ",
                             indicesType.getRank(), " but 'data' has rank ",
                             rank);
  // gather_elements_c3, scatter_elements_c4.
  for (int64_t d = 0; d < rank; ++d) {
    int64_t indexDim = indicesType.getDimSize(d);
    int64_t dataDim = dataType.getDimSize(d);
    if (d != axis && !ShapedType::isDynamic(indexDim) &&
        !ShapedType::isDynamic(dataDim) && indexDim > dataDim)
      return emitOptionalError(location, "dimension ", d, " of 'indices' (",
                               indexDim, ") exceeds that of 'data' (", dataDim,
                               ")");
  }
  return success();
}

/// The row-major position in `dataShape` that element `linear` of an index
/// tensor of `indexShape` addresses along `axis`, or nullopt when its index
/// is out of range.
static std::optional<int64_t> elementTarget(int64_t linear, int64_t index,
                                            ArrayRef<int64_t> indexShape,
                                            ArrayRef<int64_t> dataShape,
                                            ArrayRef<int64_t> dataStrides,
                                            int64_t axis) {
  std::optional<int64_t> resolved = normalizeIndex(index, dataShape[axis]);
  if (!resolved)
    return std::nullopt;
  SmallVector<int64_t> position = delinearize(linear, indexShape);
  position[axis] = *resolved;
  int64_t offset = 0;
  for (auto [i, stride] : llvm::zip_equal(position, dataStrides))
    offset += i * stride;
  return offset;
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (failed(verifyElementIndexing(location, dataType, indicesType,
                                   adaptor.getAxis())))
    return failure();
  inferredReturnTypes.push_back(
      RankedTensorType::get(indicesType.getShape(), dataType.getElementType()));
  return success();
}

OpFoldResult GatherElementsOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getData());
  std::optional<SmallVector<int64_t>> indices =
      indexValues(adaptor.getIndices());
  RankedTensorType resultType = getOutput().getType();
  if (!data || !indices || !canFold(resultType))
    return {};
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  SmallVector<int64_t> strides = stridesOf(dataShape);
  auto values = data.getValues<Attribute>();
  SmallVector<Attribute> result;
  for (auto [i, index] : llvm::enumerate(*indices)) {
    std::optional<int64_t> source = elementTarget(
        i, index, resultType.getShape(), dataShape, strides, getAxis());
    if (!source)
      return {};
    result.push_back(values[*source]);
  }
  return DenseElementsAttr::get(resultType, result);
}

LogicalResult ScatterElementsOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  auto dataType = cast<RankedTensorType>(adaptor.getData().getType());
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  auto updatesType = cast<RankedTensorType>(adaptor.getUpdates().getType());
  if (failed(verifyElementIndexing(location, dataType, indicesType,
                                   adaptor.getAxis())))
    return failure();
  // scatter_elements_c3.
  ArrayRef<int64_t> indices = indicesType.getShape();
  ArrayRef<int64_t> updates = updatesType.getShape();
  if (indices.size() != updates.size() ||
      !llvm::all_of(llvm::zip_equal(indices, updates), [](auto dims) {
        return dimsAgree(std::get<0>(dims), std::get<1>(dims));
      }))
    return emitOptionalError(
        location, "'updates' has shape ", detail::formatShape(updates),
        " but 'indices' has shape ", detail::formatShape(indices));
  inferredReturnTypes.push_back(dataType);
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  // scatter_elements_c5.
  if (getUpdates().getType().getElementType() !=
      getData().getType().getElementType())
    return emitOpError("'updates' has element type ")
           << getUpdates().getType().getElementType() << " but 'data' has "
           << getData().getType().getElementType();
  // scatter_elements_c6.
  return verifyReduction(*this, getReduction());
}

OpFoldResult ScatterElementsOp::fold(FoldAdaptor adaptor) {
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getData());
  auto updates = dyn_cast_if_present<DenseElementsAttr>(adaptor.getUpdates());
  std::optional<SmallVector<int64_t>> indices =
      indexValues(adaptor.getIndices());
  if (!data || !updates || !indices || !canFold(data.getType()))
    return {};
  ArrayRef<int64_t> dataShape = data.getType().getShape();
  ArrayRef<int64_t> indexShape = getIndices().getType().getShape();
  SmallVector<int64_t> strides = stridesOf(dataShape);
  int64_t axis = getAxis();
  return scatterConstant(data, updates, getReduction(), [&](int64_t u) {
    return elementTarget(u, (*indices)[u], indexShape, dataShape, strides,
                         axis);
  });
}

//===----------------------------------------------------------------------===//
// OneHotOp
//===----------------------------------------------------------------------===//

LogicalResult
OneHotOp::inferReturnTypes(MLIRContext *context,
                           std::optional<Location> location, Adaptor adaptor,
                           SmallVectorImpl<Type> &inferredReturnTypes) {
  auto indicesType = cast<RankedTensorType>(adaptor.getIndices().getType());
  auto valuesType = cast<RankedTensorType>(adaptor.getValues().getType());
  int64_t depth = adaptor.getDepth(), axis = adaptor.getAxis();
  // one_hot_c1.
  if (depth < 1)
    return emitOptionalError(location, "'depth' ", depth, " must be positive");
  // one_hot_c2.
  if (axis < 0 || axis > indicesType.getRank())
    return emitOptionalError(location, "'axis' ", axis,
                             " must be in [0, rank(indices)] = [0, ",
                             indicesType.getRank(), "]");
  // one_hot_c3.
  if (valuesType.getRank() != 1 || !dimsAgree(valuesType.getDimSize(0), 2))
    return emitOptionalError(location,
                             "'values' must be [off, on], a 1-D tensor of 2 "
                             "elements; got shape ",
                             detail::formatShape(valuesType.getShape()));
  SmallVector<int64_t> shape(indicesType.getShape());
  shape.insert(shape.begin() + axis, depth);
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, valuesType.getElementType()));
  return success();
}

OpFoldResult OneHotOp::fold(FoldAdaptor adaptor) {
  auto values = dyn_cast_if_present<DenseElementsAttr>(adaptor.getValues());
  std::optional<SmallVector<int64_t>> indices =
      indexValues(adaptor.getIndices());
  RankedTensorType resultType = getOutput().getType();
  if (!values || !indices || !canFold(resultType))
    return {};
  Attribute off = values.getValues<Attribute>()[0];
  Attribute on = values.getValues<Attribute>()[1];
  int64_t depth = getDepth(), axis = getAxis();
  ArrayRef<int64_t> shape = resultType.getShape();
  int64_t inner = ShapedType::getNumElements(shape.drop_front(axis + 1));
  SmallVector<Attribute> result;
  result.reserve(resultType.getNumElements());
  for (int64_t i = 0, e = resultType.getNumElements(); i < e; ++i) {
    int64_t j = (i / inner) % depth;
    int64_t source = (i / (inner * depth)) * inner + i % inner;
    std::optional<int64_t> index = normalizeIndex((*indices)[source], depth);
    result.push_back(index && *index == j ? on : off);
  }
  return DenseElementsAttr::get(resultType, result);
}

//===----------------------------------------------------------------------===//
// TriluOp
//===----------------------------------------------------------------------===//

LogicalResult
TriluOp::inferReturnTypes(MLIRContext *context,
                          std::optional<Location> location, Adaptor adaptor,
                          SmallVectorImpl<Type> &inferredReturnTypes) {
  auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
  // trilu_c1.
  if (inputType.getRank() < 2)
    return emitOptionalError(location, "the operand has rank ",
                             inputType.getRank(), "; trilu needs at least 2");
  inferredReturnTypes.push_back(inputType);
  return success();
}

OpFoldResult TriluOp::fold(FoldAdaptor adaptor) {
  auto input = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  RankedTensorType type = getOutput().getType();
  if (!input || !canFold(type))
    return {};
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  Attribute zero = isa<FloatType>(type.getElementType())
                       ? Attribute(FloatAttr::get(type.getElementType(), 0.0))
                       : Attribute(IntegerAttr::get(type.getElementType(), 0));
  int64_t k = getK();
  bool upper = getUpper();
  auto values = input.getValues<Attribute>();
  SmallVector<Attribute> result;
  result.reserve(type.getNumElements());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    int64_t row = (i / cols) % std::max<int64_t>(rows, 1), col = i % cols;
    bool keep = upper ? col - row >= k : col - row <= k;
    result.push_back(keep ? values[i] : zero);
  }
  return DenseElementsAttr::get(type, result);
}
