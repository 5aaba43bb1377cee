//===- NodeBinder.cpp - what an op handler sees of its node ---------------===//

#include "NodeBinder.h"
#include "GraphImporter.h"

#include "cleave/rt/Checked.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace cleave::onnx_import {

NodeBinder::NodeBinder(GraphImporter &importer, const onnx::NodeProto &node,
                       unsigned nodeIndex, Location loc, StringRef name)
    : importer(importer), node(node), nodeIndex(nodeIndex), loc(loc),
      name(name.str()), attrsRead(node.attribute_size()) {}

int64_t NodeBinder::getOpset() const { return importer.getOpset(); }

OpBuilder &NodeBinder::getBuilder() { return importer.getBuilder(); }

InFlightDiagnostic NodeBinder::emitError() {
  return mlir::emitError(loc)
         << "node '" << name << "' (" << node.op_type() << "): ";
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

bool NodeBinder::hasInput(unsigned index) const {
  inputsRead = std::max(inputsRead, index + 1);
  return index < static_cast<unsigned>(node.input_size()) &&
         !node.input(index).empty();
}

LogicalResult NodeBinder::optionalInput(unsigned index, Value &value) {
  value = nullptr;
  if (!hasInput(index))
    return success();
  FailureOr<Value> found = importer.lookupValue(node.input(index));
  if (failed(found))
    return failure();
  if (!*found)
    return emitError() << "input " << index << " '" << node.input(index)
                       << "' names no value";
  value = *found;
  return success();
}

LogicalResult NodeBinder::input(unsigned index, Value &value) {
  if (!hasInput(index))
    return emitError() << "input " << index << " is required but missing";
  return optionalInput(index, value);
}

LogicalResult NodeBinder::allInputs(SmallVectorImpl<Value> &values) {
  if (getNumInputs() == 0)
    return emitError() << "needs at least one input";
  for (unsigned i = 0, e = getNumInputs(); i < e; ++i) {
    Value value;
    if (failed(input(i, value)))
      return failure();
    values.push_back(value);
  }
  return success();
}

LogicalResult NodeBinder::constantInput(unsigned index, StringRef role,
                                        DenseElementsAttr &value) {
  Value operand;
  if (failed(input(index, operand)))
    return failure();
  if (matchPattern(operand, m_Constant(&value)))
    return success();
  if (auto weight = operand.getDefiningOp<WeightOp>()) {
    FailureOr<DenseElementsAttr> small = importer.readSmallWeight(weight);
    if (failed(small))
      return failure();
    if (*small) {
      value = *small;
      return success();
    }
  }
  InFlightDiagnostic diag = emitError();
  diag << "input " << index << " ('" << role << "', value '"
       << node.input(index) << "') must be a constant";
  if (operand.getDefiningOp<WeightOp>())
    diag << ", but it is an initializer with more elements than are inlined";
  else
    diag << ", but it is computed at run time (it does not fold to a "
            "constant)";
  return diag;
}

LogicalResult NodeBinder::constantInts(unsigned index, StringRef role,
                                       SmallVectorImpl<int64_t> &values) {
  DenseElementsAttr attr;
  if (failed(constantInput(index, role, attr)))
    return failure();
  auto intType = dyn_cast<IntegerType>(attr.getElementType());
  if (!intType)
    return emitError() << "input " << index << " ('" << role
                       << "') must hold integers, not "
                       << attr.getElementType();
  // Booleans are i1: true is 1, not the sign-extended -1.
  bool zeroExtend = intType.isUnsigned() || intType.getWidth() == 1;
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(zeroExtend ? static_cast<int64_t>(v.getZExtValue())
                                : v.getSExtValue());
  return success();
}

LogicalResult NodeBinder::constantDoubles(unsigned index, StringRef role,
                                          SmallVectorImpl<double> &values) {
  DenseElementsAttr attr;
  if (failed(constantInput(index, role, attr)))
    return failure();
  Type elementType = attr.getElementType();
  if (isa<FloatType>(elementType)) {
    for (const APFloat &v : attr.getValues<APFloat>()) {
      APFloat wide = v;
      bool losesInfo;
      wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                   &losesInfo);
      values.push_back(wide.convertToDouble());
    }
    return success();
  }
  auto intType = cast<IntegerType>(elementType);
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(intType.isUnsigned() || intType.getWidth() == 1
                         ? static_cast<double>(v.getZExtValue())
                         : static_cast<double>(v.getSExtValue()));
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *NodeBinder::findAttr(StringRef attrName) const {
  attrNamesAsked.insert(attrName.str());
  for (auto [i, attr] : llvm::enumerate(node.attribute())) {
    if (attr.name() != attrName)
      continue;
    attrsRead.set(i);
    return &attr;
  }
  return nullptr;
}

LogicalResult NodeBinder::checkUniqueAttributes() {
  llvm::StringSet<> seen;
  for (const onnx::AttributeProto &attr : node.attribute())
    if (!seen.insert(attr.name()).second)
      return emitError() << "attribute '" << attr.name()
                         << "' is given more than once";
  return success();
}

LogicalResult NodeBinder::checkEverythingRead() {
  for (auto [i, attr] : llvm::enumerate(node.attribute())) {
    if (attrsRead.test(i))
      continue;
    InFlightDiagnostic diag = emitError();
    diag << "unknown attribute '" << attr.name() << "' for " << node.op_type()
         << " at opset " << getOpset();
    if (!attrNamesAsked.empty()) {
      diag << " (it takes " << llvm::join(attrNamesAsked, ", ") << ")";
    } else {
      diag << " (it takes none)";
    }
    return diag;
  }
  // Omitted optional inputs at the end are empty names.
  unsigned given = node.input_size();
  while (given > inputsRead && node.input(given - 1).empty())
    --given;
  if (given > inputsRead)
    return emitError() << "has " << given << " inputs, but " << node.op_type()
                       << " at opset " << getOpset() << " takes at most "
                       << inputsRead;
  return success();
}

/// The attribute's type; old exporters leave `type` unset and only fill in
/// the value field.
static onnx::AttributeProto_AttributeType
getAttrType(const onnx::AttributeProto &attr) {
  if (attr.type() != onnx::AttributeProto::UNDEFINED)
    return attr.type();
  if (attr.has_f())
    return onnx::AttributeProto::FLOAT;
  if (attr.has_i())
    return onnx::AttributeProto::INT;
  if (attr.has_s())
    return onnx::AttributeProto::STRING;
  if (attr.has_t())
    return onnx::AttributeProto::TENSOR;
  if (attr.has_g())
    return onnx::AttributeProto::GRAPH;
  if (attr.floats_size())
    return onnx::AttributeProto::FLOATS;
  if (attr.ints_size())
    return onnx::AttributeProto::INTS;
  if (attr.strings_size())
    return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}

static StringRef getAttrTypeName(onnx::AttributeProto_AttributeType type) {
  switch (type) {
  case onnx::AttributeProto::FLOAT:
    return "float";
  case onnx::AttributeProto::INT:
    return "int";
  case onnx::AttributeProto::STRING:
    return "string";
  case onnx::AttributeProto::TENSOR:
    return "tensor";
  case onnx::AttributeProto::GRAPH:
    return "graph";
  case onnx::AttributeProto::FLOATS:
    return "floats";
  case onnx::AttributeProto::INTS:
    return "ints";
  case onnx::AttributeProto::STRINGS:
    return "strings";
  default:
    return "unknown";
  }
}

const onnx::AttributeProto *
NodeBinder::findTypedAttr(StringRef attrName,
                          onnx::AttributeProto_AttributeType type,
                          LogicalResult &status) {
  status = success();
  const onnx::AttributeProto *attr = findAttr(attrName);
  if (!attr)
    return nullptr;
  onnx::AttributeProto_AttributeType actual = getAttrType(*attr);
  // An empty list has no value field to infer its type from.
  bool emptyList = actual == onnx::AttributeProto::UNDEFINED &&
                   (type == onnx::AttributeProto::INTS ||
                    type == onnx::AttributeProto::FLOATS ||
                    type == onnx::AttributeProto::STRINGS);
  if (actual != type && !emptyList) {
    status = emitError() << "attribute '" << attrName << "' must be of type "
                         << getAttrTypeName(type) << ", not "
                         << getAttrTypeName(actual);
    return nullptr;
  }
  return attr;
}

LogicalResult NodeBinder::intAttr(StringRef attrName, int64_t &value,
                                  int64_t defaultValue) {
  LogicalResult status = success();
  const onnx::AttributeProto *attr =
      findTypedAttr(attrName, onnx::AttributeProto::INT, status);
  value = attr ? attr->i() : defaultValue;
  return status;
}

LogicalResult NodeBinder::requiredIntAttr(StringRef attrName, int64_t &value) {
  if (!findAttr(attrName))
    return emitError() << "attribute '" << attrName
                       << "' is required but missing";
  return intAttr(attrName, value, 0);
}

LogicalResult NodeBinder::floatAttr(StringRef attrName, float &value,
                                    float defaultValue) {
  LogicalResult status = success();
  const onnx::AttributeProto *attr =
      findTypedAttr(attrName, onnx::AttributeProto::FLOAT, status);
  value = attr ? attr->f() : defaultValue;
  return status;
}

LogicalResult NodeBinder::optionalFloatAttr(StringRef attrName,
                                            std::optional<float> &value) {
  LogicalResult status = success();
  const onnx::AttributeProto *attr =
      findTypedAttr(attrName, onnx::AttributeProto::FLOAT, status);
  value = attr ? std::optional<float>(attr->f()) : std::nullopt;
  return status;
}

LogicalResult NodeBinder::stringAttr(StringRef attrName, std::string &value,
                                     StringRef defaultValue) {
  LogicalResult status = success();
  const onnx::AttributeProto *attr =
      findTypedAttr(attrName, onnx::AttributeProto::STRING, status);
  value = attr ? attr->s() : defaultValue.str();
  return status;
}

LogicalResult NodeBinder::intsAttr(StringRef attrName,
                                   SmallVectorImpl<int64_t> &values) {
  LogicalResult status = success();
  values.clear();
  if (const onnx::AttributeProto *attr =
          findTypedAttr(attrName, onnx::AttributeProto::INTS, status))
    values.append(attr->ints().begin(), attr->ints().end());
  return status;
}

LogicalResult NodeBinder::floatsAttr(StringRef attrName,
                                     SmallVectorImpl<float> &values) {
  LogicalResult status = success();
  values.clear();
  if (const onnx::AttributeProto *attr =
          findTypedAttr(attrName, onnx::AttributeProto::FLOATS, status))
    values.append(attr->floats().begin(), attr->floats().end());
  return status;
}

LogicalResult NodeBinder::stringsAttr(StringRef attrName,
                                      SmallVectorImpl<std::string> &values) {
  LogicalResult status = success();
  values.clear();
  if (const onnx::AttributeProto *attr =
          findTypedAttr(attrName, onnx::AttributeProto::STRINGS, status))
    values.append(attr->strings().begin(), attr->strings().end());
  return status;
}

LogicalResult NodeBinder::tensorAttr(StringRef attrName, Value &value) {
  LogicalResult status = success();
  const onnx::AttributeProto *attr =
      findTypedAttr(attrName, onnx::AttributeProto::TENSOR, status);
  if (failed(status))
    return failure();
  if (!attr)
    return emitError() << "attribute '" << attrName
                       << "' is required but missing";
  if (!convertElementType(getContext(), attr->t().data_type()))
    return emitError() << "attribute '" << attrName << "' has element type "
                       << getDataTypeName(attr->t().data_type())
                       << ", which cleave does not support";
  // Repeated message fields are arrays of pointers: find the index by
  // address.
  unsigned attrIndex = 0;
  while (&node.attribute(attrIndex) != attr)
    ++attrIndex;
  StringRef valueName = node.output_size() > 0 && !node.output(0).empty()
                            ? StringRef(node.output(0))
                            : StringRef(name);
  FailureOr<Value> imported = importer.importAttributeTensor(
      attr->t(), nodeIndex, attrIndex, valueName, loc);
  if (failed(imported))
    return failure();
  value = *imported;
  return success();
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

StringRef NodeBinder::getOutputName(unsigned index) const {
  if (index >= static_cast<unsigned>(node.output_size()))
    return "";
  return node.output(index);
}

bool NodeBinder::isOutputUsed(unsigned index) const {
  StringRef output = getOutputName(index);
  return !output.empty() && importer.isConsumed(output);
}

LogicalResult NodeBinder::rejectUsedOutputs(unsigned first, StringRef what) {
  for (unsigned i = first, e = getNumOutputs(); i < e; ++i)
    if (isOutputUsed(i))
      return emitError() << "output " << i << " ('" << getOutputName(i)
                         << "') is used, but cleave does not represent "
                         << what;
  return success();
}

LogicalResult NodeBinder::bindOutputs(ValueRange values) {
  for (unsigned i = 0, e = getNumOutputs(); i < e; ++i) {
    StringRef output = getOutputName(i);
    if (output.empty())
      continue;
    if (i >= values.size()) {
      if (isOutputUsed(i))
        return emitError() << "output " << i << " ('" << output
                           << "') is used, but cleave does not produce it";
      continue;
    }
    std::string previous;
    if (failed(importer.defineValue(output, values[i], "node '" + name + "'",
                                    previous)))
      return emitError() << "output '" << output << "' is already defined by "
                         << previous;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

LogicalResult NodeBinder::reportFailures(function_ref<LogicalResult()> fn) {
  std::string messages;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler handler(getContext(), [&](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Error)
        return success();
      if (!messages.empty())
        messages += "; ";
      messages += diag.str();
      // The verifier's "see current operation" note prints generic IR, which
      // says nothing to someone looking at an ONNX model.
      for (const Diagnostic &note : diag.getNotes())
        if (!StringRef(note.str()).starts_with("see current operation"))
          messages += " (" + note.str() + ")";
      return success();
    });
    result = fn();
  }
  if (failed(result))
    emitError() << (messages.empty() ? std::string("invalid operands")
                                     : messages);
  return result;
}

LogicalResult NodeBinder::setProperties(OperationState &state,
                                        OpaqueProperties properties) {
  std::optional<RegisteredOperationName> info = state.name.getRegisteredInfo();
  DictionaryAttr dict = state.attributes.getDictionary(getContext());
  return reportFailures([&] {
    return info->setOpPropertiesFromAttribute(
        state.name, properties, dict, [&]() { return mlir::emitError(loc); });
  });
}

LogicalResult NodeBinder::checkResultSizes(Operation *op) {
  for (auto [index, result] : llvm::enumerate(op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape() ||
        !type.getElementType().isIntOrFloat())
      continue;
    int64_t elementBytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    int64_t elements, bytes;
    if (!rt::checkedTensorSize(type.getShape(), elementBytes, elements, bytes))
      return emitError() << "output " << index << " would be " << type
                         << ", more bytes than cleave can address";
  }
  return success();
}

FailureOr<SmallVector<Value>>
NodeBinder::createVerifiedAndFolded(OperationState &state) {
  OpBuilder &builder = getBuilder();
  Operation *op = builder.create(state);
  if (failed(reportFailures([&] { return mlir::verify(op, false); })) ||
      failed(checkResultSizes(op))) {
    op->erase();
    return failure();
  }
  SmallVector<Value> results;
  if (succeeded(builder.tryFold(op, results)) && !results.empty()) {
    op->erase();
    return results;
  }
  return SmallVector<Value>(op->getResults());
}

Value NodeBinder::constant(DenseElementsAttr value) {
  return ConstantOp::create(getBuilder(), loc, value.getType(), value);
}

Value NodeBinder::intScalarConstant(Type elementType, int64_t value) {
  auto type = RankedTensorType::get({}, elementType);
  return constant(
      DenseElementsAttr::get(type, IntegerAttr::get(elementType, value)));
}

Value NodeBinder::scalarConstant(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (isa<FloatType>(elementType))
    element = FloatAttr::get(elementType, value);
  else
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  return constant(DenseElementsAttr::get(type, element));
}

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

LogicalResult NodeBinder::normalizeAxis(int64_t &axis, int64_t rank,
                                        StringRef what) {
  if (axis < -rank || axis >= rank)
    return emitError() << what << " " << axis << " is out of range for rank "
                       << rank;
  if (axis < 0)
    axis += rank;
  return success();
}

LogicalResult NodeBinder::normalizeAxes(SmallVectorImpl<int64_t> &axes,
                                        int64_t rank, StringRef what) {
  for (int64_t &axis : axes)
    if (failed(normalizeAxis(axis, rank, what)))
      return failure();
  llvm::sort(axes);
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] == axes[i - 1])
      return emitError() << what << " " << axes[i] << " is given twice";
  return success();
}

LogicalResult NodeBinder::requireStaticDim(Value value, int64_t dim,
                                           StringRef what) {
  if (!getType(value).isDynamicDim(dim))
    return success();
  return emitError() << what << ": dimension " << dim
                     << " of the input must be static";
}

} // namespace cleave::onnx_import
