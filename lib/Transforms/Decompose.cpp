//===- Decompose.cpp - attn-decompose: L1 ops -> linalg/tensor/scf --------===//
//
// Each L1 op becomes upstream IR with the same meaning: contractions and row
// reductions as linalg.generic on tensors, elementwise steps as
// linalg.generic maps, tile loads as a generic whose body reads the memref
// under a bounds check, tile stores as loops of memref.store. The result
// bufferizes with one-shot-bufferize and lowers to CPU loops.
//
//===----------------------------------------------------------------------===//

#include "lib/Transforms/Passes.h"

#include "dialect/AttnDialect.h"
#include "dialect/AttnMods.h"
#include "dialect/AttnSemantics.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSE
#include "lib/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

struct Builder;
using BodyFn = function_ref<void(Builder &, ValueRange)>;

/// Builds one-op-at-a-time replacements with an implicit location.
struct Builder : ImplicitLocOpBuilder {
  using ImplicitLocOpBuilder::ImplicitLocOpBuilder;

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(*this, v); }
  Value f32(double v) {
    return arith::ConstantOp::create(*this, getF32FloatAttr(v));
  }
  Value negInf() { return f32(-INFINITY); }
  Value zeroOf(Type t) {
    return arith::ConstantOp::create(*this, getZeroAttr(t));
  }
  /// Widens f16/bf16 to f32; f32 passes through.
  Value toF32(Value v) {
    if (v.getType().isF32())
      return v;
    return arith::ExtFOp::create(*this, getF32Type(), v);
  }
  Value fromF32(Value v, Type t) {
    if (t.isF32())
      return v;
    return arith::TruncFOp::create(*this, t, v);
  }
  Value filled(RankedTensorType type, Value value) {
    Value empty =
        tensor::EmptyOp::create(*this, type.getShape(), type.getElementType());
    return linalg::FillOp::create(*this, value, empty).getResult(0);
  }
  Value empty(RankedTensorType type) {
    return tensor::EmptyOp::create(*this, type.getShape(),
                                   type.getElementType());
  }

  /// linalg.generic over `numDims` loops; `maps` lists the inputs' maps then
  /// the outputs'. Reductions are the dims listed in `reductionDims`.
  ValueRange generic(unsigned numDims, ValueRange inputs, ValueRange outputs,
                     ArrayRef<SmallVector<unsigned>> maps,
                     ArrayRef<unsigned> reductionDims, BodyFn body) {
    SmallVector<AffineMap> affineMaps;
    for (const SmallVector<unsigned> &dims : maps) {
      SmallVector<AffineExpr> exprs;
      for (unsigned d : dims)
        exprs.push_back(getAffineDimExpr(d));
      affineMaps.push_back(AffineMap::get(numDims, 0, exprs, getContext()));
    }
    SmallVector<utils::IteratorType> iterators(numDims,
                                               utils::IteratorType::parallel);
    for (unsigned d : reductionDims)
      iterators[d] = utils::IteratorType::reduction;
    Location loc = getLoc();
    auto op = linalg::GenericOp::create(
        *this, TypeRange(outputs), inputs, outputs, affineMaps, iterators,
        [&](OpBuilder &nested, Location, ValueRange args) {
          Builder ib(loc, nested);
          body(ib, args);
        });
    return op.getResults();
  }
};

Value idx(ImplicitLocOpBuilder &b, int64_t v) {
  return arith::ConstantIndexOp::create(b, v);
}

/// Flat Q row `f` -> (head, query) under the query-major GQA packing.
std::pair<Value, Value> headAndQuery(ImplicitLocOpBuilder &b, Value f,
                                     Value kvHead, int64_t group) {
  Value g = idx(b, group);
  Value firstHead = arith::MulIOp::create(b, kvHead, g);
  Value headInGroup = arith::RemUIOp::create(b, f, g);
  Value head = arith::AddIOp::create(b, firstHead, headInGroup);
  return {head, arith::DivUIOp::create(b, f, g)};
}

/// The flat Q rows (G * q_len) of a Q-shaped operand (q, o, lse): its
/// dim 2 times G, or a packed sequence's `seqLen` times G.
Value flatRows(ImplicitLocOpBuilder &b, Value memref, int64_t group,
               Value seqLen) {
  Value qLen = seqLen ? seqLen : Value(memref::DimOp::create(b, memref, 2));
  return arith::MulIOp::create(b, qLen, idx(b, group));
}

/// The indices of (head, query) in a Q-shaped operand: [batch, head,
/// query] padded, [seqStart + query, head] packed.
SmallVector<Value> rowIndices(ImplicitLocOpBuilder &b, Value batch,
                              Value seqStart, Value head, Value query) {
  if (!seqStart)
    return {batch, head, query};
  return {arith::AddIOp::create(b, seqStart, query), head};
}

/// A tile whose element (r, d) is `load(r, d)` where `valid(r)` holds and
/// zero elsewhere; nothing is read for invalid rows.
Value guardedTile(
    Builder &b, RankedTensorType type,
    function_ref<Value(ImplicitLocOpBuilder &, Value)> valid,
    function_ref<Value(ImplicitLocOpBuilder &, Value, Value)> load) {
  Type elt = type.getElementType();
  return b.generic(
      2, {}, {b.empty(type)}, {{0, 1}}, {}, [&](Builder &nb, ValueRange) {
        Value r = linalg::IndexOp::create(nb, 0);
        Value d = linalg::IndexOp::create(nb, 1);
        auto ifOp =
            scf::IfOp::create(nb, TypeRange{elt}, valid(nb, r), true, true);
        {
          OpBuilder::InsertionGuard g(nb);
          nb.setInsertionPointToStart(ifOp.thenBlock());
          scf::YieldOp::create(nb, load(nb, r, d));
          nb.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(
              nb,
              arith::ConstantOp::create(nb, nb.getZeroAttr(elt)).getResult());
        }
        linalg::YieldOp::create(nb, ifOp.getResult(0));
      })[0];
}

/// A quantized element's f32 value: its byte decoded (QuantRules) times
/// `scale` (if any), indexed by the scale's granularity (`head`: the
/// element's head; `row`: its indices without D).
Value dequantize(ImplicitLocOpBuilder &b, Value stored, Value scale, Value head,
                 ArrayRef<Value> row) {
  KVFormat format = kvFormatOf(stored.getType());
  Value byte = stored;
  if (format != KVFormat::Int8)
    byte = arith::BitcastOp::create(b, b.getI8Type(), stored);
  byte = arith::ExtUIOp::create(b, b.getI32Type(), byte);
  ByteExprs exprs{b};
  Value value = QuantRules<ByteExprs>(exprs).decode(format, byte);
  if (!scale)
    return value;
  SmallVector<Value> at;
  switch (scaleGranularityOf(cast<MemRefType>(scale.getType()))) {
  case ScaleGranularity::Tensor:
    break;
  case ScaleGranularity::Head:
    at.push_back(head);
    break;
  case ScaleGranularity::Token:
    at.assign(row.begin(), row.end());
    break;
  }
  Value factor = memref::LoadOp::create(b, scale, at);
  return arith::MulFOp::create(b, value, factor);
}

Value decompose(Builder &b, LoadQOp op) {
  auto type = cast<RankedTensorType>(op.getTile().getType());
  int64_t group = op.getGroup();
  Value rows = flatRows(b, op.getQ(), group, op.getSeqLen());
  return guardedTile(
      b, type,
      [&](ImplicitLocOpBuilder &nb, Value r) {
        Value f = arith::AddIOp::create(nb, op.getRow(), r);
        return arith::CmpIOp::create(nb, arith::CmpIPredicate::ult, f, rows);
      },
      [&](ImplicitLocOpBuilder &nb, Value r, Value d) -> Value {
        Value f = arith::AddIOp::create(nb, op.getRow(), r);
        auto [head, query] = headAndQuery(nb, f, op.getKvHead(), group);
        SmallVector<Value> indices =
            rowIndices(nb, op.getBatch(), op.getSeqStart(), head, query);
        indices.push_back(d);
        Value stored = memref::LoadOp::create(nb, op.getQ(), indices);
        if (!op.isQuantized())
          return stored;
        return dequantize(nb, stored, op.getScale(), head, {});
      });
}

/// The indices of key `j`'s row in a K/V operand `src` (without the head
/// dim): [seqStart + j, head] packed, [batch, head, j] contiguous,
/// [block_table[batch, j / bs], head, j % bs] paged.
SmallVector<Value> kvRowIndices(ImplicitLocOpBuilder &b, LoadKVOp op, Value j) {
  if (Value seqStart = op.getSeqStart())
    return {arith::AddIOp::create(b, seqStart, j), op.getKvHead()};
  Value table = op.getBlockTable();
  if (!table)
    return {op.getBatch(), op.getKvHead(), j};
  int64_t blockSize = cast<MemRefType>(op.getSrc().getType()).getDimSize(2);
  Value bs = idx(b, blockSize);
  Value entry = memref::LoadOp::create(
      b, table, ValueRange{op.getBatch(), arith::DivUIOp::create(b, j, bs)});
  Value block = arith::IndexCastOp::create(b, b.getIndexType(), entry);
  return {block, op.getKvHead(), arith::RemUIOp::create(b, j, bs)};
}

Value decompose(Builder &b, LoadKVOp op) {
  auto type = cast<RankedTensorType>(op.getTile().getType());
  return guardedTile(
      b, type,
      [&](ImplicitLocOpBuilder &nb, Value r) {
        Value j = arith::AddIOp::create(nb, op.getStart(), r);
        return arith::CmpIOp::create(nb, arith::CmpIPredicate::slt, j,
                                     op.getLength());
      },
      [&](ImplicitLocOpBuilder &nb, Value r, Value d) -> Value {
        Value j = arith::AddIOp::create(nb, op.getStart(), r);
        SmallVector<Value> row = kvRowIndices(nb, op, j);
        SmallVector<Value> at = row;
        at.push_back(d);
        Value stored = memref::LoadOp::create(nb, op.getSrc(), at);
        if (!op.isQuantized())
          return stored;
        return dequantize(nb, stored, op.getScale(), op.getKvHead(), row);
      });
}

/// Tile element (r, c)'s positions: (b, h, q_idx, kv_idx) of flat row
/// `row + r` and key `col + c` under the GQA packing.
SmallVector<Value> positionsOf(ImplicitLocOpBuilder &b, Value batch,
                               Value kvHead, Value row, Value col,
                               int64_t group, Value r, Value c) {
  Value f = arith::AddIOp::create(b, row, r);
  auto [head, query] = headAndQuery(b, f, kvHead, group);
  return {batch, head, query, arith::AddIOp::create(b, col, c)};
}

/// `then()` where `cond` holds, else `otherwise`, in a linalg body.
Value guarded(ImplicitLocOpBuilder &b, Value cond, Value otherwise,
              function_ref<Value()> then) {
  auto ifOp =
      scf::IfOp::create(b, TypeRange{otherwise.getType()}, cond, true, true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, then());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, otherwise);
  return ifOp.getResult(0);
}

/// qk with a score_mod: s = log2(e) * mod(cap(scale * dot), b, h, i, j),
/// the region inlined per element and run only for in-range (i, j); the
/// others keep log2(e) * cap(scale * dot), which the mask hides.
Value scoreWithMod(Builder &b, QKOp op, Value dot, ScoreTransform score) {
  auto type = cast<RankedTensorType>(op.getScores().getType());
  const int64_t group = *op.getGroup();
  Value rows = arith::MulIOp::create(b, op.getQLen(), b.idx(group));
  return b.generic(
      2, {dot}, {b.empty(type)}, {{0, 1}, {0, 1}}, {},
      [&](Builder &nb, ValueRange a) {
        Value x = a[0];
        if (score.softcap) {
          x = arith::MulFOp::create(nb, x, nb.f32(score.tanhInputFactor()));
          x = math::TanhOp::create(nb, x);
          x = arith::MulFOp::create(nb, x, nb.f32(*score.softcap));
        } else {
          x = arith::MulFOp::create(nb, x, nb.f32(score.scale));
        }
        Value r = linalg::IndexOp::create(nb, 0);
        Value c = linalg::IndexOp::create(nb, 1);
        Value f = arith::AddIOp::create(nb, op.getRow(), r);
        Value j = arith::AddIOp::create(nb, op.getCol(), c);
        Value rowExists =
            arith::CmpIOp::create(nb, arith::CmpIPredicate::ult, f, rows);
        Value keyExists = arith::CmpIOp::create(nb, arith::CmpIPredicate::slt,
                                                j, op.getKvLen());
        Value inRange = arith::AndIOp::create(nb, rowExists, keyExists);
        Value natural = x;
        x = guarded(nb, inRange, natural, [&] {
          SmallVector<Value> args{natural};
          args.append(positionsOf(nb, op.getBatch(), op.getKvHead(),
                                  op.getRow(), op.getCol(), group, r, c));
          llvm::append_range(args, op.getCaptures());
          return inlineMod(nb, op.getScoreMod(), args);
        });
        x = arith::MulFOp::create(nb, x, nb.f32(kLog2E));
        linalg::YieldOp::create(nb, x);
      })[0];
}

Value decompose(Builder &b, QKOp op) {
  auto type = cast<RankedTensorType>(op.getScores().getType());
  Value dot =
      b.generic(3, {op.getQ(), op.getK()}, {b.filled(type, b.f32(0))},
                {{0, 2}, {1, 2}, {0, 1}}, {2}, [&](Builder &nb, ValueRange a) {
                  Value qx = nb.toF32(a[0]);
                  Value kx = nb.toF32(a[1]);
                  Value prod = arith::MulFOp::create(nb, qx, kx);
                  linalg::YieldOp::create(
                      nb, arith::AddFOp::create(nb, a[2], prod).getResult());
                })[0];
  ScoreTransform score = ScoreTransform::of(op);
  if (op.hasScoreMod())
    return scoreWithMod(b, op, dot, score);
  return b.generic(
      2, {dot}, {b.empty(type)}, {{0, 1}, {0, 1}}, {},
      [&](Builder &nb, ValueRange a) {
        Value x = a[0];
        if (std::optional<double> c = score.linearFactor()) {
          x = arith::MulFOp::create(nb, x, nb.f32(*c));
        } else {
          x = arith::MulFOp::create(nb, x, nb.f32(score.tanhInputFactor()));
          x = math::TanhOp::create(nb, x);
          x = arith::MulFOp::create(nb, x, nb.f32(score.tanhOutputFactor()));
        }
        linalg::YieldOp::create(nb, x);
      })[0];
}

Value decompose(Builder &b, MaskOp op) {
  auto type = cast<RankedTensorType>(op.getScores().getType());
  MaskAttr mask = op.getMask();
  // The diagonal's shift once, outside the elementwise body.
  IndexExprs outer{b};
  Value shift =
      MaskRules<IndexExprs>(outer, mask).shift(op.getQLen(), op.getKvLen());
  return b.generic(
      2, {op.getScores()}, {b.empty(type)}, {{0, 1}, {0, 1}}, {},
      [&](Builder &nb, ValueRange a) {
        Value r = linalg::IndexOp::create(nb, 0);
        Value c = linalg::IndexOp::create(nb, 1);
        Value flat = arith::AddIOp::create(nb, op.getRow(), r);
        Value query = arith::DivUIOp::create(nb, flat, nb.idx(op.getGroup()));
        Value key = arith::AddIOp::create(nb, op.getCol(), c);
        Value diagonal = arith::AddIOp::create(nb, query, shift);
        IndexExprs inner{nb};
        Value visible = MaskRules<IndexExprs>(inner, mask)
                            .visibleFromDiagonal(key, diagonal, op.getKvLen());
        // mask_mod only where the built-in rules show the key (in range
        // and unmasked): visible = built-in AND mask_mod.
        if (op.hasMaskMod()) {
          Value rows =
              arith::MulIOp::create(nb, op.getQLen(), nb.idx(op.getGroup()));
          Value inRows =
              arith::CmpIOp::create(nb, arith::CmpIPredicate::ult, flat, rows);
          Value ask = arith::AndIOp::create(nb, visible, inRows);
          visible = guarded(
              nb, ask, arith::ConstantOp::create(nb, nb.getBoolAttr(false)),
              [&] {
                SmallVector<Value> args =
                    positionsOf(nb, op.getBatch(), op.getKvHead(), op.getRow(),
                                op.getCol(), op.getGroup(), r, c);
                llvm::append_range(args, op.getCaptures());
                return inlineMod(nb, op.getMaskMod(), args);
              });
        }
        Value hidden = nb.negInf();
        linalg::YieldOp::create(
            nb, arith::SelectOp::create(nb, visible, a[0], hidden).getResult());
      })[0];
}

SmallVector<Value> decompose(Builder &b, OnlineSoftmaxOp op) {
  auto sType = cast<RankedTensorType>(op.getScores().getType());
  auto rowType = cast<RankedTensorType>(op.getMax().getType());
  Value rowMax =
      b.generic(2, {op.getScores()}, {b.filled(rowType, b.negInf())},
                {{0, 1}, {0}}, {1}, [&](Builder &nb, ValueRange a) {
                  linalg::YieldOp::create(
                      nb, arith::MaxNumFOp::create(nb, a[0], a[1]).getResult());
                })[0];
  ValueRange maxAndRescale =
      b.generic(1, {op.getMax(), rowMax}, {b.empty(rowType), b.empty(rowType)},
                {{0}, {0}, {0}, {0}}, {}, [&](Builder &nb, ValueRange a) {
                  Value newMax = arith::MaxNumFOp::create(nb, a[0], a[1]);
                  F32Exprs exprs{nb};
                  SoftmaxRules<F32Exprs> rules(exprs);
                  Value rescale = rules.weight(a[0], rules.shift(newMax));
                  linalg::YieldOp::create(nb, ValueRange{newMax, rescale});
                });
  Value newMax = maxAndRescale[0], rescale = maxAndRescale[1];
  Value probs = b.generic(
      2, {op.getScores(), newMax}, {b.empty(sType)}, {{0, 1}, {0}, {0, 1}}, {},
      [&](Builder &nb, ValueRange a) {
        F32Exprs exprs{nb};
        SoftmaxRules<F32Exprs> rules(exprs);
        linalg::YieldOp::create(nb, rules.weight(a[0], rules.shift(a[1])));
      })[0];
  Value rowSum =
      b.generic(2, {probs}, {b.filled(rowType, b.f32(0))}, {{0, 1}, {0}}, {1},
                [&](Builder &nb, ValueRange a) {
                  linalg::YieldOp::create(
                      nb, arith::AddFOp::create(nb, a[0], a[1]).getResult());
                })[0];
  Value newSum =
      b.generic(1, {op.getSum(), rescale, rowSum}, {b.empty(rowType)},
                {{0}, {0}, {0}, {0}}, {}, [&](Builder &nb, ValueRange a) {
                  Value scaled = arith::MulFOp::create(nb, a[0], a[1]);
                  linalg::YieldOp::create(
                      nb, arith::AddFOp::create(nb, scaled, a[2]).getResult());
                })[0];
  return {probs, newMax, newSum, rescale};
}

/// acc[r, d] * rescale[r], elementwise.
Value rescaleRows(Builder &b, Value acc, Value rescale) {
  auto type = cast<RankedTensorType>(acc.getType());
  return b.generic(2, {acc, rescale}, {b.empty(type)}, {{0, 1}, {0}, {0, 1}},
                   {}, [&](Builder &nb, ValueRange a) {
                     linalg::YieldOp::create(
                         nb, arith::MulFOp::create(nb, a[0], a[1]).getResult());
                   })[0];
}

Value decompose(Builder &b, PVOp op) {
  Value scaled = rescaleRows(b, op.getAcc(), op.getRescale());
  return b.generic(
      3, {op.getProbs(), op.getV()}, {scaled}, {{0, 2}, {2, 1}, {0, 1}}, {2},
      [&](Builder &nb, ValueRange a) {
        Value prod = arith::MulFOp::create(nb, a[0], nb.toF32(a[1]));
        linalg::YieldOp::create(
            nb, arith::AddFOp::create(nb, a[2], prod).getResult());
      })[0];
}

SmallVector<Value> decompose(Builder &b, MergeOp op) {
  auto rowType = cast<RankedTensorType>(op.getMax0().getType());
  auto accType = cast<RankedTensorType>(op.getAcc0().getType());
  ValueRange rows = b.generic(
      1, {op.getMax0(), op.getSum0(), op.getMax1(), op.getSum1()},
      {b.empty(rowType), b.empty(rowType), b.empty(rowType), b.empty(rowType)},
      SmallVector<SmallVector<unsigned>>(8, {0}), {},
      [&](Builder &nb, ValueRange a) {
        Value m = arith::MaxNumFOp::create(nb, a[0], a[2]);
        F32Exprs exprs{nb};
        SoftmaxRules<F32Exprs> rules(exprs);
        Value shift = rules.shift(m);
        Value a0 = rules.weight(a[0], shift);
        Value a1 = rules.weight(a[2], shift);
        Value l0 = arith::MulFOp::create(nb, a[1], a0);
        Value l1 = arith::MulFOp::create(nb, a[3], a1);
        Value l = arith::AddFOp::create(nb, l0, l1);
        linalg::YieldOp::create(nb, ValueRange{m, l, a0, a1});
      });
  Value acc = b.generic(2, {op.getAcc0(), op.getAcc1(), rows[2], rows[3]},
                        {b.empty(accType)}, {{0, 1}, {0, 1}, {0}, {0}, {0, 1}},
                        {}, [&](Builder &nb, ValueRange a) {
                          Value x0 = arith::MulFOp::create(nb, a[0], a[2]);
                          Value x1 = arith::MulFOp::create(nb, a[1], a[3]);
                          Value x = arith::AddFOp::create(nb, x0, x1);
                          linalg::YieldOp::create(nb, x);
                        })[0];
  return {rows[0], rows[1], acc};
}

Value decompose(Builder &b, LoadSinkOp op) {
  auto type = cast<RankedTensorType>(op.getTile().getType());
  return b.generic(
      1, {}, {b.empty(type)}, {{0}}, {}, [&](Builder &nb, ValueRange) {
        Value r = linalg::IndexOp::create(nb, 0);
        Value f = arith::AddIOp::create(nb, op.getRow(), r);
        Value head = headAndQuery(nb, f, op.getKvHead(), op.getGroup()).first;
        Value x = memref::LoadOp::create(nb, op.getSinks(), ValueRange{head});
        linalg::YieldOp::create(nb, nb.toF32(x));
      })[0];
}

SmallVector<Value> decompose(Builder &b, FinalizeOp op) {
  auto outType = cast<RankedTensorType>(op.getOut().getType());
  auto rowType = cast<RankedTensorType>(op.getMax().getType());
  Type outElt = outType.getElementType();
  Value max = op.getMax(), sum = op.getSum(), acc = op.getAcc();
  // The sink (natural units; base-2 here) joins the state as one more
  // logit with no value: m' = max(m, t), l' = l * 2^(m - m') + 2^(t - m'),
  // acc' = acc * 2^(m - m'). A row with no key and no finite sink keeps
  // l' = 0 and takes the empty-row rule below.
  if (Value sink = op.getSink()) {
    ValueRange rows =
        b.generic(1, {max, sum, sink},
                  {b.empty(rowType), b.empty(rowType), b.empty(rowType)},
                  SmallVector<SmallVector<unsigned>>(6, {0}), {},
                  [&](Builder &nb, ValueRange a) {
                    Value t = arith::MulFOp::create(nb, a[2], nb.f32(kLog2E));
                    Value m = arith::MaxNumFOp::create(nb, a[0], t);
                    F32Exprs exprs{nb};
                    SoftmaxRules<F32Exprs> rules(exprs);
                    Value shift = rules.shift(m);
                    Value rescale = rules.weight(a[0], shift);
                    Value sinkProb = rules.weight(t, shift);
                    Value l = arith::AddFOp::create(
                        nb, arith::MulFOp::create(nb, a[1], rescale), sinkProb);
                    linalg::YieldOp::create(nb, ValueRange{m, l, rescale});
                  });
    max = rows[0];
    sum = rows[1];
    acc = rescaleRows(b, acc, rows[2]);
  }
  Value out = b.generic(
      2, {acc, sum}, {b.empty(outType)}, {{0, 1}, {0}, {0, 1}}, {},
      [&](Builder &nb, ValueRange a) {
        Value seen = arith::CmpFOp::create(nb, arith::CmpFPredicate::OGT, a[1],
                                           nb.f32(0));
        Value quotient = arith::DivFOp::create(nb, a[0], a[1]);
        Value x = arith::SelectOp::create(nb, seen, quotient, nb.f32(0));
        linalg::YieldOp::create(nb, nb.fromF32(x, outElt));
      })[0];
  Value lse = b.generic(1, {max, sum}, {b.empty(rowType)}, {{0}, {0}, {0}}, {},
                        [&](Builder &nb, ValueRange a) {
                          F32Exprs e{nb};
                          SoftmaxRules<F32Exprs> rules(e);
                          Value seen = rules.seen(a[1]);
                          linalg::YieldOp::create(
                              nb, rules.logSumExp(a[0], a[1], seen));
                        })[0];
  return {out, lse};
}

/// for r < rows of the tile with flat row f = row + r < G * q_len:
///   store(r, head, query)
void storeRows(
    Builder &b, Value tile, Value dest, Value kvHead, Value row, int64_t group,
    Value seqLen,
    function_ref<void(ImplicitLocOpBuilder &, Value, Value, Value)> store) {
  auto type = cast<RankedTensorType>(tile.getType());
  Value rows = flatRows(b, dest, group, seqLen);
  Value first = b.idx(0);
  Value count = b.idx(type.getDimSize(0));
  Value step = b.idx(1);
  auto loop = scf::ForOp::create(b, first, count, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value r = loop.getInductionVar();
  Value f = arith::AddIOp::create(b, row, r);
  Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, f, rows);
  auto ifOp = scf::IfOp::create(b, inside, /*withElse=*/false);
  b.setInsertionPointToStart(ifOp.thenBlock());
  auto [head, query] = headAndQuery(b, f, kvHead, group);
  store(b, r, head, query);
}

void decompose(Builder &b, StoreOOp op) {
  auto type = cast<RankedTensorType>(op.getTile().getType());
  storeRows(
      b, op.getTile(), op.getO(), op.getKvHead(), op.getRow(), op.getGroup(),
      op.getSeqLen(),
      [&](ImplicitLocOpBuilder &nb, Value r, Value head, Value query) {
        Value from = idx(nb, 0);
        Value to = idx(nb, type.getDimSize(1));
        Value step = idx(nb, 1);
        auto loop = scf::ForOp::create(nb, from, to, step);
        OpBuilder::InsertionGuard guard(nb);
        nb.setInsertionPointToStart(loop.getBody());
        Value d = loop.getInductionVar();
        Value x = tensor::ExtractOp::create(nb, op.getTile(), ValueRange{r, d});
        SmallVector<Value> indices =
            rowIndices(nb, op.getBatch(), op.getSeqStart(), head, query);
        indices.push_back(d);
        memref::StoreOp::create(nb, x, op.getO(), indices);
      });
}

void decompose(Builder &b, StoreLseOp op) {
  storeRows(b, op.getTile(), op.getLse(), op.getKvHead(), op.getRow(),
            op.getGroup(), op.getSeqLen(),
            [&](ImplicitLocOpBuilder &nb, Value r, Value head, Value query) {
              Value x =
                  tensor::ExtractOp::create(nb, op.getTile(), ValueRange{r});
              memref::StoreOp::create(
                  nb, x, op.getLse(),
                  rowIndices(nb, op.getBatch(), op.getSeqStart(), head, query));
            });
}

SmallVector<Value> decompose(Builder &b, InitStateOp op) {
  auto rowType = cast<RankedTensorType>(op.getMax().getType());
  auto accType = cast<RankedTensorType>(op.getAcc().getType());
  return {b.filled(rowType, b.negInf()), b.filled(rowType, b.f32(0)),
          b.filled(accType, b.f32(0))};
}

struct AttnDecomposePass
    : mlir::attn::impl::AttnDecomposeBase<AttnDecomposePass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    // The mod regions of qk and mask go with their ops (their attn.yield
    // is inlined, not decomposed).
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<AttnDialect>(op->getDialect()))
        ops.push_back(op);
      return isa<QKOp, MaskOp>(op) ? WalkResult::skip() : WalkResult::advance();
    });
    for (Operation *op : ops) {
      Builder b(op->getLoc(), op);
      auto replace = [&](ValueRange values) {
        op->replaceAllUsesWith(values);
        op->erase();
      };
      LogicalResult result =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<LoadQOp, LoadKVOp, LoadSinkOp, QKOp, MaskOp, PVOp>(
                  [&](auto op) {
                    replace(decompose(b, op));
                    return success();
                  })
              .Case<OnlineSoftmaxOp, MergeOp, FinalizeOp, InitStateOp>(
                  [&](auto op) {
                    replace(decompose(b, op));
                    return success();
                  })
              .Case<StoreOOp, StoreLseOp>([&](auto op) {
                decompose(b, op);
                op->erase();
                return success();
              })
              .Default([&](Operation *op) {
                return op->emitError()
                       << "attn-decompose expects L1 ops; run attn-tile "
                          "first";
              });
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
