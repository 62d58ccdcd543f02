//===- AttnAttrs.cpp - attn attributes ------------------------------------===//

#include "dialect/AttnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/DenseSet.h"

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
    // Sequence lengths are below 2^31, so a wider window sees no more keys;
    // the bound keeps every backend's window arithmetic in range.
    if (left > kMaxWindow || right > kMaxWindow)
      return emitError() << "mask 'window' extents must be <= 2^31-1 (" << kMaxWindow
                         << "), the longest sequence; got left = " << left
                         << ", right = " << right;
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

//===----------------------------------------------------------------------===//
// LaunchAttr
//===----------------------------------------------------------------------===//

static const char kDimNames[] = "xyz";

static SmallVector<LaunchTerm> termsOf(ArrayRef<LaunchTerm> terms,
                                       unsigned dim) {
  return llvm::filter_to_vector(
      terms, [&](const LaunchTerm &t) { return t.dim == dim; });
}

SmallVector<LaunchTerm> LaunchAttr::getGridDim(unsigned dim) const {
  return termsOf(getGrid(), dim);
}

unsigned LaunchAttr::getWorkspaceRank() const {
  return getWorkspace().empty() ? 0 : getWorkspace().back().dim + 1;
}

SmallVector<LaunchTerm> LaunchAttr::getWorkspaceDim(unsigned dim) const {
  return termsOf(getWorkspace(), dim);
}

static void printTerm(raw_ostream &os, const LaunchTerm &term) {
  if (term.isConstant())
    os << term.value;
  else if (term.value == 1)
    os << stringifyLaunchSize(term.size);
  else
    os << "ceildiv(" << stringifyLaunchSize(term.size) << ", " << term.value
       << ")";
}

// The terms of a dimension list, dims in order: "a * b, c, d".
static void printDims(raw_ostream &os, ArrayRef<LaunchTerm> terms) {
  for (auto [i, term] : llvm::enumerate(terms)) {
    if (i)
      os << (term.dim == terms[i - 1].dim ? " * " : ", ");
    printTerm(os, term);
  }
}

static std::string describeTerm(const LaunchTerm &term) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printTerm(os, term);
  return text;
}

// "q", "workspace", "tensor_map(k)"
static void printParam(raw_ostream &os, const LaunchParam &param) {
  switch (param.kind) {
  case LaunchParamKind::Memref:
    os << stringifyLaunchOperand(param.operand);
    return;
  case LaunchParamKind::Workspace:
    os << "workspace";
    return;
  case LaunchParamKind::TensorMap:
    os << "tensor_map(" << stringifyLaunchOperand(param.operand) << ")";
    return;
  case LaunchParamKind::Capture:
    os << "capture(" << param.index << ")";
    return;
  }
}

static LogicalResult verifyTerms(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef field, ArrayRef<LaunchTerm> terms,
                                 unsigned rank) {
  for (auto [i, termRef] : llvm::enumerate(terms)) {
    const LaunchTerm &term = termRef; // lambdas cannot capture a binding
    auto dimName = [&]() -> std::string {
      if (field == "grid" && term.dim < 3)
        return std::string(1, kDimNames[term.dim]);
      return std::to_string(term.dim);
    };
    if (term.dim >= rank)
      return emitError() << "launch '" << field << "' term "
                         << describeTerm(term) << " is in dimension "
                         << term.dim << ", beyond its " << rank;
    if (i && terms[i - 1].dim > term.dim)
      return emitError() << "launch '" << field
                         << "' terms must be sorted by dimension";
    if (term.isConstant() && term.value < 1)
      return emitError() << "launch '" << field << "' constant term in "
                         << "dimension " << dimName() << " must be >= 1, got "
                         << term.value;
    if (!term.isConstant() && term.value < 1)
      return emitError() << "launch '" << field << "' term ceildiv("
                         << stringifyLaunchSize(term.size) << ", "
                         << term.value << ") in dimension " << dimName()
                         << " must divide by a constant >= 1";
  }
  for (unsigned dim = 0; dim < rank; ++dim)
    if (llvm::none_of(terms, [&](const LaunchTerm &t) { return t.dim == dim; }))
      return emitError() << "launch '" << field << "' dimension " << dim
                         << " has no term (write 1 for a unit dimension)";
  return success();
}

LogicalResult LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 LaunchRole role, Tier tier, int64_t threads,
                                 int64_t shared, ArrayRef<LaunchTerm> grid,
                                 ArrayRef<LaunchParam> params,
                                 ArrayRef<LaunchTerm> workspace,
                                 Type workspaceType, int64_t blockQ,
                                 int64_t group, bool programmatic,
                                 int64_t maxKvLen) {
  if (maxKvLen < 0)
    return emitError() << "launch 'max_kv_len' must be >= 0 (0: no bound), "
                          "got "
                       << maxKvLen;
  if (maxKvLen && role != LaunchRole::Prefill)
    return emitError() << "a '" << stringifyLaunchRole(role)
                       << "' launch cannot have 'max_kv_len' (only prefill "
                          "launches are alternatives the runtime chooses "
                          "among)";
  if (programmatic && role != LaunchRole::DecodeCombine)
    return emitError() << "a '" << stringifyLaunchRole(role)
                       << "' launch cannot be 'programmatic' (only "
                          "decode_combine follows a launch it may overlap)";
  if (threads < 1 || threads > 1024)
    return emitError() << "launch 'threads' must be in [1, 1024], got "
                       << threads;
  if (shared < 0)
    return emitError() << "launch 'shared' must be >= 0 bytes, got " << shared;
  unsigned gridRank = grid.empty() ? 0 : grid.back().dim + 1;
  if (gridRank != 3)
    return emitError() << "launch 'grid' must have 3 dimensions (x, y, z), "
                          "got "
                       << gridRank;
  if (failed(verifyTerms(emitError, "grid", grid, 3)))
    return failure();
  if (params.empty())
    return emitError() << "launch 'params' must list the kernel's "
                          "parameters, got none";
  // One flag per operand kind (sized from the enum: a fixed count here
  // once overflowed when the enum grew).
  bool seen[getMaxEnumValForLaunchOperand() + 1] = {};
  bool hasWorkspaceParam = false;
  // Under v_from_k (MLA) V is read from K: K stands in V's place, and
  // k_scale in v_scale's, so a launch without v may name them twice.
  auto names = [&](LaunchOperand operand) {
    return llvm::any_of(params, [&](const LaunchParam &param) {
      return param.kind == LaunchParamKind::Memref && param.operand == operand;
    });
  };
  const bool kForV = !names(LaunchOperand::V),
             kScaleForV = !names(LaunchOperand::VScale);
  llvm::SmallDenseSet<unsigned> captures;
  for (const LaunchParam &param : params) {
    if (param.kind == LaunchParamKind::Capture) {
      if (!captures.insert(param.index).second)
        return emitError() << "launch 'params' names capture(" << param.index
                           << ") twice";
      continue;
    }
    if (param.kind == LaunchParamKind::Workspace) {
      if (hasWorkspaceParam)
        return emitError() << "launch 'params' names the workspace twice";
      hasWorkspaceParam = true;
      continue;
    }
    auto index = static_cast<unsigned>(param.operand);
    if (param.kind == LaunchParamKind::Memref) {
      const bool standsIn =
          (param.operand == LaunchOperand::K && kForV) ||
          (param.operand == LaunchOperand::KScale && kScaleForV);
      if (seen[index] && !standsIn)
        return emitError() << "launch 'params' names operand '"
                           << stringifyLaunchOperand(param.operand)
                           << "' twice";
      seen[index] = true;
    }
  }
  unsigned workspaceRank = workspace.empty() ? 0 : workspace.back().dim + 1;
  if (hasWorkspaceParam && workspaceRank == 0)
    return emitError() << "launch 'params' has a workspace parameter but the "
                          "launch has no 'workspace' shape";
  if (!hasWorkspaceParam && workspaceRank > 0)
    return emitError() << "launch 'workspace' shape is given but no "
                          "parameter is the workspace";
  if (workspaceRank > 4)
    return emitError() << "launch 'workspace' must have rank 1 to 4, got "
                       << workspaceRank;
  if (workspaceRank > 0) {
    if (failed(verifyTerms(emitError, "workspace", workspace, workspaceRank)))
      return failure();
    if (!workspaceType || !workspaceType.isIntOrFloat())
      return emitError() << "launch 'workspace' element type must be an "
                            "integer or float type";
  } else if (workspaceType) {
    return emitError() << "launch 'workspace' element type is given without "
                          "a shape";
  }
  if (role == LaunchRole::DecodeUnsplit && workspaceRank > 0)
    return emitError() << "a 'decode_unsplit' launch cannot have a workspace "
                          "(it runs in place of decode_split and "
                          "decode_combine, writing O itself)";
  if (blockQ < 0)
    return emitError() << "launch 'block_q' must be >= 0, got " << blockQ;
  if (group < 0)
    return emitError() << "launch 'group' must be >= 0, got " << group;
  (void)role;
  return success();
}

// term := INT | size | ceildiv(size, INT)
static ParseResult parseTerm(AsmParser &parser, unsigned dim,
                             SmallVectorImpl<LaunchTerm> &terms) {
  int64_t constant;
  OptionalParseResult number = parser.parseOptionalInteger(constant);
  if (number.has_value()) {
    if (failed(*number))
      return failure();
    terms.push_back(LaunchTerm::constant(dim, constant));
    return success();
  }
  auto parseSize = [&](LaunchSize &size) -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    std::optional<LaunchSize> parsed = symbolizeLaunchSize(name);
    if (!parsed || *parsed == LaunchSize::Constant)
      return parser.emitError(loc)
             << "unknown launch size '" << name
             << "'; expected batch, q_heads, kv_heads, q_len, kv_len, "
                "group_rows, rows, splits or new_len";
    size = *parsed;
    return success();
  };
  LaunchSize size;
  if (succeeded(parser.parseOptionalKeyword("ceildiv"))) {
    int64_t divisor;
    if (parser.parseLParen() || parseSize(size) || parser.parseComma() ||
        parser.parseInteger(divisor) || parser.parseRParen())
      return failure();
    terms.push_back(LaunchTerm::of(dim, size, divisor));
    return success();
  }
  if (parseSize(size))
    return failure();
  terms.push_back(LaunchTerm::of(dim, size));
  return success();
}

// [t * t, t, ...]
static ParseResult parseDims(AsmParser &parser,
                             SmallVectorImpl<LaunchTerm> &terms) {
  unsigned dim = 0;
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        do {
          if (parseTerm(parser, dim, terms))
            return failure();
        } while (succeeded(parser.parseOptionalStar()));
        ++dim;
        return success();
      });
}

static ParseResult parseParam(AsmParser &parser,
                              SmallVectorImpl<LaunchParam> &params) {
  auto parseOperand = [&](LaunchOperand &operand) -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    StringRef name;
    if (parser.parseKeyword(&name))
      return failure();
    std::optional<LaunchOperand> parsed = symbolizeLaunchOperand(name);
    if (!parsed)
      return parser.emitError(loc)
             << "unknown launch parameter '" << name
             << "'; expected q, k, v, block_table, kv_lens, o, lse, "
                "k_new, v_new, new_lens, slot_mapping, cu_seqlens_q, "
                "cu_seqlens_k, workspace, capture(N) or tensor_map(operand)";
    operand = *parsed;
    return success();
  };
  if (succeeded(parser.parseOptionalKeyword("workspace"))) {
    params.push_back(LaunchParam::workspace());
    return success();
  }
  if (succeeded(parser.parseOptionalKeyword("capture"))) {
    SMLoc loc = parser.getCurrentLocation();
    int64_t index;
    if (parser.parseLParen() || parser.parseInteger(index) ||
        parser.parseRParen())
      return failure();
    if (index < 0 || index > 255)
      return parser.emitError(loc)
             << "launch parameter capture(" << index
             << ") must name a capture in [0, 255]";
    params.push_back(LaunchParam::capture(static_cast<unsigned>(index)));
    return success();
  }
  LaunchOperand operand;
  if (succeeded(parser.parseOptionalKeyword("tensor_map"))) {
    if (parser.parseLParen() || parseOperand(operand) || parser.parseRParen())
      return failure();
    params.push_back({LaunchParamKind::TensorMap, operand});
    return success();
  }
  if (parseOperand(operand))
    return failure();
  params.push_back(LaunchParam::memref(operand));
  return success();
}

// #attn.launch<role, tier = "...", threads = N, shared = N, grid = [...],
//              params = [...] (, workspace = [...] : type)?
//              (, block_q = N)? (, group = N)? (, programmatic)?
//              (, max_kv_len = N)?>
Attribute LaunchAttr::parse(AsmParser &parser, Type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  auto emitError = [&] { return parser.emitError(loc); };
  StringRef roleName;
  if (parser.parseLess() || parser.parseKeyword(&roleName))
    return {};
  std::optional<LaunchRole> role = symbolizeLaunchRole(roleName);
  if (!role) {
    parser.emitError(loc) << "unknown launch role '" << roleName
                          << "'; expected prefill, decode_split, "
                             "decode_combine, decode_unsplit, append, merge or "
                             "block_mask";
    return {};
  }
  StringRef tierName;
  int64_t threads, shared;
  SmallVector<LaunchTerm> grid, workspace;
  SmallVector<LaunchParam> params;
  SMLoc tierLoc;
  if (parser.parseComma() || parser.parseKeyword("tier") ||
      parser.parseEqual() || (tierLoc = parser.getCurrentLocation(), false) ||
      parser.parseKeyword(&tierName) ||
      parser.parseComma() || parser.parseKeyword("threads") ||
      parser.parseEqual() || parser.parseInteger(threads) ||
      parser.parseComma() || parser.parseKeyword("shared") ||
      parser.parseEqual() || parser.parseInteger(shared) ||
      parser.parseComma() || parser.parseKeyword("grid") ||
      parser.parseEqual() || parseDims(parser, grid) || parser.parseComma() ||
      parser.parseKeyword("params") || parser.parseEqual() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        return parseParam(parser, params);
      }))
    return {};
  Type workspaceType;
  int64_t blockQ = 0, group = 0, maxKvLen = 0;
  bool programmatic = false;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return {};
    if (key == "programmatic") {
      programmatic = true;
      continue;
    }
    if (parser.parseEqual())
      return {};
    if (key == "workspace") {
      if (parseDims(parser, workspace) || parser.parseColon() ||
          parser.parseType(workspaceType))
        return {};
    } else if (key == "block_q") {
      if (parser.parseInteger(blockQ))
        return {};
    } else if (key == "group") {
      if (parser.parseInteger(group))
        return {};
    } else if (key == "max_kv_len") {
      if (parser.parseInteger(maxKvLen))
        return {};
    } else {
      parser.emitError(keyLoc) << "unknown launch field '" << key
                               << "'; expected workspace, block_q, group, "
                                  "programmatic or max_kv_len";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  std::optional<Tier> tier = symbolizeTier(tierName);
  if (!tier) {
    parser.emitError(tierLoc) << "unknown launch tier '" << tierName
                              << "'; expected wmma, mma, wgmma, decode or copy";
    return {};
  }
  return LaunchAttr::getChecked(emitError, ctx, *role, *tier, threads, shared,
                                grid, params, workspace, workspaceType, blockQ,
                                group, programmatic, maxKvLen);
}

void LaunchAttr::print(AsmPrinter &printer) const {
  raw_ostream &os = printer.getStream();
  os << "<" << stringifyLaunchRole(getRole())
     << ", tier = " << stringifyTier(getTier())
     << ", threads = " << getThreads() << ", shared = " << getShared()
     << ", grid = [";
  printDims(os, getGrid());
  os << "], params = [";
  llvm::interleaveComma(getParams(), os,
                        [&](const LaunchParam &p) { printParam(os, p); });
  os << "]";
  if (hasWorkspace()) {
    os << ", workspace = [";
    printDims(os, getWorkspace());
    os << "] : ";
    printer.printType(getWorkspaceType());
  }
  if (getBlockQ())
    os << ", block_q = " << getBlockQ();
  if (getGroup())
    os << ", group = " << getGroup();
  if (getProgrammatic())
    os << ", programmatic";
  if (getMaxKvLen())
    os << ", max_kv_len = " << getMaxKvLen();
  os << ">";
}
