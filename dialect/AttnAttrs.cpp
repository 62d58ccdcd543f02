//===- AttnAttrs.cpp - attn attributes ------------------------------------===//

#include "dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::attn;

#include "dialect/AttnEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/AttnAttrs.cpp.inc"

void AttnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/AttnAttrs.cpp.inc"
      >();
}

MaskAttr MaskAttr::getNone(MLIRContext *ctx) {
  return MaskAttr::get(ctx, MaskKind::None, MaskAlign::TopLeft, kUnbounded,
                       kUnbounded);
}

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               MaskKind kind, MaskAlign align, int64_t left,
                               int64_t right) {
  switch (kind) {
  case MaskKind::None:
    if (left != kUnbounded || right != kUnbounded)
      return emitError() << "mask 'none' has no window extents";
    if (align != MaskAlign::TopLeft)
      return emitError() << "mask 'none' takes no alignment";
    return success();
  case MaskKind::Causal:
    if (left != kUnbounded || right != 0)
      return emitError() << "mask 'causal' must have left = unbounded and "
                            "right = 0 (use 'window' for other extents)";
    return success();
  case MaskKind::Window:
    if (left < 0 || right < 0)
      return emitError() << "mask 'window' extents must be >= 0, got left = "
                         << left << ", right = " << right;
    return success();
  }
  return emitError() << "unknown mask kind";
}

// #attn.mask<none> | <causal[, align]> | <window L, R[, align]>
Attribute MaskAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  auto emitError = [&] { return parser.emitError(loc); };
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<MaskKind> kind = symbolizeMaskKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown mask kind '" << kindName
                          << "'; expected none, causal or window";
    return {};
  }
  int64_t left = kUnbounded, right = kUnbounded;
  if (*kind == MaskKind::Causal)
    right = 0;
  if (*kind == MaskKind::Window) {
    if (parser.parseInteger(left) || parser.parseComma() ||
        parser.parseInteger(right))
      return {};
  }
  MaskAlign align = MaskAlign::TopLeft;
  if (succeeded(parser.parseOptionalComma())) {
    StringRef alignName;
    SMLoc alignLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&alignName))
      return {};
    std::optional<MaskAlign> parsed = symbolizeMaskAlign(alignName);
    if (!parsed) {
      parser.emitError(alignLoc)
          << "unknown mask alignment '" << alignName
          << "'; expected top_left or bottom_right";
      return {};
    }
    align = *parsed;
  }
  if (parser.parseGreater())
    return {};
  return MaskAttr::getChecked(emitError, ctx, *kind, align, left, right);
}

void MaskAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyMaskKind(getKind());
  if (getKind() == MaskKind::Window)
    printer << " " << getLeft() << ", " << getRight();
  if (getKind() != MaskKind::None && getAlign() != MaskAlign::TopLeft)
    printer << ", " << stringifyMaskAlign(getAlign());
  printer << ">";
}
