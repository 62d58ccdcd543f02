//===- ModEval.cpp - evaluate score_mod / mask_mod regions on the host
//-----===//

#include "ModEval.h"

#include "lib/Reference/HostFloat.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace mlir;

namespace attn::modeval {

namespace {
/// A value: floats in `f`, integers (index, iN, i1 as 0/1) in `i`.
struct Slot {
  double f = 0;
  int64_t i = 0;
};

enum class Kind { Float, Int };

struct Inst {
  std::string name;           // the op's name, e.g. "arith.addf"
  SmallVector<unsigned> args; // operand slots
  unsigned result = 0;
  Type type;         // the result's type
  Type operandType;  // the first operand's type
  Slot constant;     // arith.constant
  int predicate = 0; // cmpf / cmpi
  int capture = -1;  // memref.load
};

bool isFloat(Type t) { return isa<FloatType>(t); }
unsigned widthOf(Type t) {
  return isa<IndexType>(t) ? 64 : t.getIntOrFloatBitWidth();
}

/// Wraps `x` to a signed integer of `width` bits (i1: 0 or -1, as arith
/// and LLVM read a signed i1: extsi and sitofp of true give -1).
int64_t wrap(int64_t x, unsigned width) {
  if (width == 1)
    return (x & 1) ? -1 : 0;
  if (width >= 64)
    return x;
  uint64_t m = (uint64_t(1) << width) - 1;
  uint64_t u = uint64_t(x) & m;
  if (u >> (width - 1))
    u |= ~m;
  return int64_t(u);
}
/// The bits of `x` as a `To` of the same size (arith.bitcast).
template <typename To, typename From> To bitsAs(From x) {
  static_assert(sizeof(To) == sizeof(From), "bitcast between sizes");
  To y;
  std::memcpy(&y, &x, sizeof y);
  return y;
}
/// The low `width` bits of `x`, as an unsigned number.
uint64_t unsignedOf(int64_t x, unsigned width) {
  if (width >= 64)
    return uint64_t(x);
  return uint64_t(x) & ((uint64_t(1) << width) - 1);
}
/// The bits of `x` rounded to the float type `t` (f16, bf16, f32, f64).
uint64_t floatBits(double x, Type t) {
  if (t.isF16())
    return ::attn::host::toHalf(static_cast<float>(x));
  if (t.isBF16())
    return ::attn::host::toBF16(static_cast<float>(x));
  if (t.isF32())
    return bitsAs<uint32_t>(static_cast<float>(x));
  return bitsAs<uint64_t>(x);
}
/// The value of the float type `t` whose bits are the low bits of `bits`.
double fromFloatBits(uint64_t bits, Type t) {
  if (t.isF16())
    return ::attn::host::fromHalf(uint16_t(bits));
  if (t.isBF16())
    return ::attn::host::fromBF16(uint16_t(bits));
  if (t.isF32())
    return bitsAs<float>(uint32_t(bits));
  return bitsAs<double>(bits);
}
/// `x` truncated to an integer of `width` bits, signed or not, saturated
/// at the type's range and 0 for NaN: arith leaves these cases poison, and
/// C++'s conversion would be undefined (PTX's cvt.rzi saturates alike).
int64_t toInteger(double x, unsigned width, bool isSigned) {
  if (std::isnan(x))
    return 0;
  x = std::trunc(x);
  const unsigned bits = std::min(width, 64u);
  double lo = isSigned ? -std::ldexp(1.0, int(bits) - 1) : 0.0;
  double hi = std::ldexp(1.0, int(bits) - (isSigned ? 1 : 0)); // exclusive
  if (x <= lo)
    return isSigned ? (bits == 64 ? std::numeric_limits<int64_t>::min()
                                  : -(int64_t(1) << (bits - 1)))
                    : 0;
  if (x >= hi)
    return isSigned
               ? (bits == 64 ? std::numeric_limits<int64_t>::max()
                             : (int64_t(1) << (bits - 1)) - 1)
               : int64_t(bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1);
  return isSigned ? int64_t(x) : int64_t(uint64_t(x));
}
/// Rounds `x` to the float type `t`.
double round(double x, Type t) {
  if (t.isF64())
    return x;
  float f = static_cast<float>(x);
  if (t.isF16())
    return ::attn::host::fromHalf(::attn::host::toHalf(f));
  if (t.isBF16())
    return ::attn::host::fromBF16(::attn::host::toBF16(f));
  return f;
}
using UnaryFn = double (*)(double);

/// The math ops of one float operand, and the libm function of each.
UnaryFn unaryMath(StringRef name) {
  static const std::pair<const char *, UnaryFn> table[] = {
      {"math.exp", [](double x) { return std::exp(x); }},
      {"math.exp2", [](double x) { return std::exp2(x); }},
      {"math.expm1", [](double x) { return std::expm1(x); }},
      {"math.log", [](double x) { return std::log(x); }},
      {"math.log2", [](double x) { return std::log2(x); }},
      {"math.log10", [](double x) { return std::log10(x); }},
      {"math.log1p", [](double x) { return std::log1p(x); }},
      {"math.tanh", [](double x) { return std::tanh(x); }},
      {"math.sqrt", [](double x) { return std::sqrt(x); }},
      {"math.rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"math.absf", [](double x) { return std::fabs(x); }},
      {"math.floor", [](double x) { return std::floor(x); }},
      {"math.ceil", [](double x) { return std::ceil(x); }},
      {"math.round", [](double x) { return std::round(x); }},
      {"math.roundeven", [](double x) { return std::nearbyint(x); }},
      {"math.trunc", [](double x) { return std::trunc(x); }},
      {"math.sin", [](double x) { return std::sin(x); }},
      {"math.cos", [](double x) { return std::cos(x); }},
      {"math.tan", [](double x) { return std::tan(x); }},
      {"math.atan", [](double x) { return std::atan(x); }},
      {"math.erf", [](double x) { return std::erf(x); }}};
  for (const auto &[n, fn] : table)
    if (name == n)
      return fn;
  return nullptr;
}
} // namespace

class Program {
public:
  std::vector<Inst> insts;
  std::vector<Capture> captures;
  unsigned numSlots = 0, numPositions = 0, result = 0;
  bool resultIsFloat = false;
  std::vector<Type> positionTypes;

  double run(const double *positions) const;
  /// The first load outside its capture, described; "" if none so far.
  mutable std::string fault;
  mutable bool outOfBounds = false;
  /// The value of `inst`, or none for an op the evaluator does not know.
  std::optional<Slot> eval(const Inst &inst,
                           const std::vector<Slot> &slots) const;
};

std::optional<Slot> Program::eval(const Inst &in,
                                  const std::vector<Slot> &s) const {
  Slot r;
  auto a = [&](unsigned k) -> const Slot & { return s[in.args[k]]; };
  const StringRef n = in.name;
  const unsigned w = isFloat(in.type) ? 0 : widthOf(in.type);
  const unsigned ow =
      in.operandType && !isFloat(in.operandType) ? widthOf(in.operandType) : 0;
  auto fl = [&](double x) {
    r.f = round(x, in.type);
    return r;
  };
  auto in_ = [&](int64_t x) {
    r.i = wrap(x, w);
    return r;
  };
  // Floats.
  if (n == "arith.constant")
    return in.constant;
  if (n == "arith.addf")
    return fl(a(0).f + a(1).f);
  if (n == "arith.subf")
    return fl(a(0).f - a(1).f);
  if (n == "arith.mulf")
    return fl(a(0).f * a(1).f);
  if (n == "arith.divf")
    return fl(a(0).f / a(1).f);
  if (n == "arith.remf")
    return fl(std::fmod(a(0).f, a(1).f));
  if (n == "arith.negf")
    return fl(-a(0).f);
  if (n == "arith.maximumf")
    return fl(std::isnan(a(0).f) || std::isnan(a(1).f)
                  ? std::numeric_limits<double>::quiet_NaN()
                  : std::max(a(0).f, a(1).f));
  if (n == "arith.minimumf")
    return fl(std::isnan(a(0).f) || std::isnan(a(1).f)
                  ? std::numeric_limits<double>::quiet_NaN()
                  : std::min(a(0).f, a(1).f));
  if (n == "arith.maxnumf")
    return fl(std::fmax(a(0).f, a(1).f));
  if (n == "arith.minnumf")
    return fl(std::fmin(a(0).f, a(1).f));
  if (n == "arith.extf" || n == "arith.truncf")
    return fl(a(0).f);
  if (n == "arith.sitofp")
    return fl(double(wrap(a(0).i, ow)));
  if (n == "arith.uitofp")
    return fl(double(unsignedOf(a(0).i, ow)));
  if (n == "arith.fptosi")
    return in_(toInteger(a(0).f, w, /*isSigned=*/true));
  if (n == "arith.fptoui")
    return in_(toInteger(a(0).f, w, /*isSigned=*/false));
  if (n == "arith.select") {
    r = a(0).i ? a(1) : a(2);
    return r;
  }
  // The bits of a float as an integer of its width, back, or as another
  // float type of the same width (f16 <-> bf16).
  if (n == "arith.bitcast") {
    const bool fromFloat = isFloat(in.operandType);
    const uint64_t bits =
        fromFloat ? floatBits(a(0).f, in.operandType) : unsignedOf(a(0).i, ow);
    if (isFloat(in.type))
      return fl(fromFloatBits(bits, in.type));
    return in_(int64_t(bits));
  }
  if (n == "arith.cmpf") {
    double x = a(0).f, y = a(1).f;
    bool uno = std::isnan(x) || std::isnan(y);
    bool res = false;
    using P = arith::CmpFPredicate;
    switch (P(in.predicate)) {
    case P::AlwaysFalse:
      res = false;
      break;
    case P::OEQ:
      res = !uno && x == y;
      break;
    case P::OGT:
      res = !uno && x > y;
      break;
    case P::OGE:
      res = !uno && x >= y;
      break;
    case P::OLT:
      res = !uno && x < y;
      break;
    case P::OLE:
      res = !uno && x <= y;
      break;
    case P::ONE:
      res = !uno && x != y;
      break;
    case P::ORD:
      res = !uno;
      break;
    case P::UEQ:
      res = uno || x == y;
      break;
    case P::UGT:
      res = uno || x > y;
      break;
    case P::UGE:
      res = uno || x >= y;
      break;
    case P::ULT:
      res = uno || x < y;
      break;
    case P::ULE:
      res = uno || x <= y;
      break;
    case P::UNE:
      res = uno || x != y;
      break;
    case P::UNO:
      res = uno;
      break;
    case P::AlwaysTrue:
      res = true;
      break;
    }
    r.i = res ? -1 : 0; // i1 true, read signed
    return r;
  }
  // Integers.
  auto u = [&](unsigned k) { return unsignedOf(a(k).i, w); };
  if (n == "arith.addi")
    return in_(int64_t(uint64_t(a(0).i) + uint64_t(a(1).i)));
  if (n == "arith.subi")
    return in_(int64_t(uint64_t(a(0).i) - uint64_t(a(1).i)));
  if (n == "arith.muli")
    return in_(int64_t(uint64_t(a(0).i) * uint64_t(a(1).i)));
  if (n == "arith.andi")
    return in_(a(0).i & a(1).i);
  if (n == "arith.ori")
    return in_(a(0).i | a(1).i);
  if (n == "arith.xori")
    return in_(a(0).i ^ a(1).i);
  if (n == "arith.maxsi")
    return in_(std::max(a(0).i, a(1).i));
  if (n == "arith.minsi")
    return in_(std::min(a(0).i, a(1).i));
  if (n == "arith.maxui")
    return in_(int64_t(std::max(u(0), u(1))));
  if (n == "arith.minui")
    return in_(int64_t(std::min(u(0), u(1))));
  // Division by zero is undefined in arith; the reference gives 0.
  // INT64_MIN / -1 overflows (and traps on x86): wrapped, it is INT64_MIN,
  // and the remainder 0. The verifier refuses both cases in a region.
  auto overflow = [&] {
    return a(0).i == std::numeric_limits<int64_t>::min() && a(1).i == -1;
  };
  if (n == "arith.divsi")
    return in_(!a(1).i ? 0 : overflow() ? a(0).i : a(0).i / a(1).i);
  if (n == "arith.remsi")
    return in_(!a(1).i || overflow() ? 0 : a(0).i % a(1).i);
  if (n == "arith.divui")
    return in_(u(1) ? int64_t(u(0) / u(1)) : 0);
  if (n == "arith.remui")
    return in_(u(1) ? int64_t(u(0) % u(1)) : 0);
  if (n == "arith.floordivsi" || n == "arith.ceildivsi") {
    int64_t x = a(0).i, y = a(1).i;
    if (!y)
      return in_(0);
    if (overflow())
      return in_(x);
    int64_t q = x / y;
    bool inexact = q * y != x;
    if (inexact && n == "arith.floordivsi" && ((x < 0) != (y < 0)))
      --q;
    if (inexact && n == "arith.ceildivsi" && ((x < 0) == (y < 0)))
      ++q;
    return in_(q);
  }
  if (n == "arith.shli")
    return in_(u(1) < w ? int64_t(u(0) << u(1)) : 0);
  if (n == "arith.shrui")
    return in_(u(1) < w ? int64_t(u(0) >> u(1)) : 0);
  if (n == "arith.shrsi")
    return in_(u(1) < w ? a(0).i >> u(1) : (a(0).i < 0 ? -1 : 0));
  if (n == "arith.extsi" || n == "arith.trunci" || n == "arith.index_cast")
    return in_(wrap(a(0).i, ow));
  if (n == "arith.extui" || n == "arith.index_castui")
    return in_(int64_t(unsignedOf(a(0).i, ow)));
  if (n == "arith.cmpi") {
    int64_t x = wrap(a(0).i, ow), y = wrap(a(1).i, ow);
    uint64_t ux = unsignedOf(x, ow), uy = unsignedOf(y, ow);
    bool res = false;
    using P = arith::CmpIPredicate;
    switch (P(in.predicate)) {
    case P::eq:
      res = x == y;
      break;
    case P::ne:
      res = x != y;
      break;
    case P::slt:
      res = x < y;
      break;
    case P::sle:
      res = x <= y;
      break;
    case P::sgt:
      res = x > y;
      break;
    case P::sge:
      res = x >= y;
      break;
    case P::ult:
      res = ux < uy;
      break;
    case P::ule:
      res = ux <= uy;
      break;
    case P::ugt:
      res = ux > uy;
      break;
    case P::uge:
      res = ux >= uy;
      break;
    }
    r.i = res ? -1 : 0; // i1 true, read signed
    return r;
  }
  // math.
  // The minimum stays itself (wrapping), as LLVM's abs without poison.
  if (n == "math.absi")
    return in_(a(0).i < 0 ? int64_t(0 - uint64_t(a(0).i)) : a(0).i);
  if (UnaryFn fn = unaryMath(n))
    return fl(fn(a(0).f));
  if (n == "math.atan2")
    return fl(std::atan2(a(0).f, a(1).f));
  if (n == "math.powf")
    return fl(std::pow(a(0).f, a(1).f));
  if (n == "math.copysign")
    return fl(std::copysign(a(0).f, a(1).f));
  if (n == "math.fma")
    return fl(a(0).f * a(1).f + a(2).f);
  if (n == "memref.load") {
    // A capture: row-major index into its data.
    const Capture &c = captures[in.capture];
    int64_t linear = 0;
    for (unsigned d = 0; d < c.shape.size(); ++d) {
      int64_t index = s[in.args[d]].i;
      if (index < 0 || index >= c.shape[d]) {
        outOfBounds = true; // run() says where; the load gives 0
        return r;
      }
      linear = linear * c.shape[d] + index;
    }
    double v = c.data[linear];
    if (isFloat(in.type))
      r.f = v;
    else
      r.i = int64_t(v);
    return r;
  }
  return std::nullopt;
}

double Program::run(const double *positions) const {
  std::vector<Slot> slots(numSlots);
  for (unsigned k = 0; k < numPositions; ++k) {
    if (isFloat(positionTypes[k]))
      slots[k].f = round(positions[k], positionTypes[k]);
    else
      slots[k].i = int64_t(positions[k]);
  }
  for (const Inst &inst : insts) {
    slots[inst.result] = *eval(inst, slots);
    if (outOfBounds && fault.empty()) {
      std::string text =
          "a load from capture #" + std::to_string(inst.capture) + " at (";
      for (size_t d = 0; d < inst.args.size(); ++d)
        text += (d ? ", " : "") + std::to_string(slots[inst.args[d]].i);
      text += ") is outside its shape (";
      for (size_t d = 0; d < captures[inst.capture].shape.size(); ++d)
        text +=
            (d ? ", " : "") + std::to_string(captures[inst.capture].shape[d]);
      text += ") at positions (";
      for (unsigned k = 0; k < numPositions; ++k) {
        text += k ? ", " : "";
        // The score is a float; b, h, q_idx, kv_idx are exact integers.
        text += isFloat(positionTypes[k])
                    ? std::to_string(positions[k])
                    : std::to_string(int64_t(positions[k]));
      }
      fault = text + ")";
    }
  }
  const Slot &out = slots[result];
  // A mask_mod's i1: 1 or 0 to the caller.
  return resultIsFloat ? out.f : double(out.i != 0);
}

Evaluator::Evaluator() = default;
Evaluator::~Evaluator() = default;

double Evaluator::operator()(const double *positions) const {
  return program->run(positions);
}

const std::string &Evaluator::fault() const { return program->fault; }

std::unique_ptr<Evaluator> Evaluator::compile(Region &region,
                                              unsigned numPositions,
                                              std::vector<Capture> captures,
                                              std::string &error) {
  auto program = std::make_unique<Program>();
  Block &block = region.front();
  llvm::DenseMap<Value, unsigned> slotOf;
  for (BlockArgument arg : block.getArguments().take_front(numPositions)) {
    slotOf[arg] = program->numSlots++;
    program->positionTypes.push_back(arg.getType());
  }
  program->numPositions = numPositions;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      Value yielded = op.getOperand(0);
      program->result = slotOf.lookup(yielded);
      program->resultIsFloat = isFloat(yielded.getType());
      continue;
    }
    StringRef name = op.getName().getStringRef();
    auto unknown = [&] {
      error = ("the reference cannot evaluate '" + name + "' yet").str();
      return nullptr;
    };
    if (op.getNumResults() != 1)
      return unknown();
    Inst inst;
    inst.name = name.str();
    inst.type = op.getResult(0).getType();
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      inst.capture =
          cast<BlockArgument>(load.getMemref()).getArgNumber() - numPositions;
      for (Value index : load.getIndices())
        inst.args.push_back(slotOf.lookup(index));
    } else {
      for (Value operand : op.getOperands())
        inst.args.push_back(slotOf.lookup(operand));
      if (op.getNumOperands())
        inst.operandType = op.getOperand(0).getType();
    }
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      if (auto f = dyn_cast<FloatAttr>(cst.getValue())) {
        inst.constant.f = f.getValueAsDouble();
      } else if (auto i = dyn_cast<IntegerAttr>(cst.getValue())) {
        inst.constant.i = i.getValue().getSExtValue(); // true: -1
      } else {
        error = "the reference cannot evaluate a non-scalar arith.constant";
        return nullptr;
      }
    }
    if (auto cmp = dyn_cast<arith::CmpFOp>(op))
      inst.predicate = int(cmp.getPredicate());
    if (auto cmp = dyn_cast<arith::CmpIOp>(op))
      inst.predicate = int(cmp.getPredicate());
    // eval() says whether it knows the op: ask it once, on zeros.
    if (!isa<memref::LoadOp>(op) &&
        !program->eval(inst, std::vector<Slot>(program->numSlots)))
      return unknown();
    inst.result = program->numSlots++;
    slotOf[op.getResult(0)] = inst.result;
    program->insts.push_back(std::move(inst));
  }
  program->captures = std::move(captures);
  auto evaluator = std::unique_ptr<Evaluator>(new Evaluator());
  evaluator->program = std::move(program);
  return evaluator;
}

} // namespace attn::modeval
