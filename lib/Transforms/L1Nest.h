//===- L1Nest.h - the loop nest attn-tile builds ----------------*- C++ -*-===//
//
// Every target lowers the same L1 structure: an scf.forall over (batch,
// K/V head, Q tile) holding load_q, the K/V loop (qk, mask, online_softmax,
// pv), [load_sink,] finalize and the stores; with attn-split-kv the K/V loop
// sits in a split forall followed by an attn.merge loop. This recognizes it
// once.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_TRANSFORMS_L1NEST_H
#define ATTN_LIB_TRANSFORMS_L1NEST_H

#include "dialect/AttnDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {

/// The L1 ops of one attn-tile nest, with or without attn-split-kv.
struct L1Nest {
  scf::ForallOp forall;
  LoadQOp loadQ;
  scf::ForOp kvLoop;
  scf::ForallOp splitForall; // null without split-K
  MergeOp merge;             // null without split-K
  LoadKVOp loadK, loadV;
  QKOp qk;
  MaskOp mask;
  OnlineSoftmaxOp softmax;
  PVOp pv;
  FinalizeOp finalize;
  LoadSinkOp loadSink; // null without attention sinks
  StoreOOp storeO;
  StoreLseOp storeLse; // may be null
  /// The memrefs the nest's index arithmetic reads, where the attention
  /// has them: the packed forms' offsets and the K/V lengths.
  Value cuSeqlensQ, cuSeqlensK, kvLens;
  /// The memrefs the score_mod / mask_mod regions read (the attention's
  /// captures, which qk and mask both carry), in the attention's order.
  SmallVector<Value> captures;

  /// Whether V's tiles are K's leading columns (attn.attention's
  /// v_from_k, MLA): read from K's buffer under K's scale.
  bool vFromK() const;
};

/// Recognizes the nest rooted at `forall`; `pass` names the caller in
/// diagnostics.
FailureOr<L1Nest> matchL1Nest(scf::ForallOp forall, StringRef pass);

/// The memrefs a kernel reads for `nest`, in the order every target passes
/// them: q, k, v, [k_scale], [v_scale], [cu_seqlens_q], [cu_seqlens_k],
/// [block_table], [kv_lens], captures.
SmallVector<Value> inputOperands(const L1Nest &nest);

} // namespace mlir::attn

#endif // ATTN_LIB_TRANSFORMS_L1NEST_H
