// A mask_mod attn-fold-mods cannot turn into a built-in mask gets a block
// mask: the host function gains the mask's workspace argument, launches
// the block-mask kernel (role block_mask) and then the prefill kernel,
// which reads the count and the list of its Q block and unmasks full
// blocks. Per-sequence lengths (kv_lens, paged, a packed batch) give it a
// row per batch.
// RUN: attn-opt %s --attn-select-tier --attn-tile --attn-to-mma=chip=sm_80 | FileCheck %s --check-prefix=MMA
// RUN: attn-opt %s "--attn-select-tier=prefill=wmma" --attn-tile --attn-to-wmma=chip=sm_80 | FileCheck %s --check-prefix=WMMA
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx

// Documents from ids [B, S]: the mask reads b (a row per batch), not h.
// MMA-LABEL: func.func @documents(
// MMA-SAME: %[[MASK:[^:]*]]: memref<?x?x2x?xi32>)
// MMA: gpu.launch_func @attn_kernels::@documents_mma_block_mask
// MMA-SAME: args({{.*}}%[[MASK]] : memref<?x?x2x?xi32>)
// MMA-SAME: #attn.launch<block_mask, tier = mma, threads = 256, shared = 0, grid = [ceildiv(q_len, 128), 1, batch], params = [q, k, v, capture(0), workspace], workspace = [batch, ceildiv(q_len, 128), 2, ceildiv(kv_len, 128)] : i32>
// MMA: gpu.launch_func @attn_kernels::@documents_mma
// MMA-SAME: params = [q, k, v, capture(0), o, workspace], workspace = [batch, ceildiv(q_len, 128), 2, ceildiv(kv_len, 128)] : i32
// The second spec's mask reads h but not b: a row per K/V head. The
// third is packed: positions and lengths are per sequence, so a row per
// sequence (batch: cu_seqlens_q's length - 1), over the longest one's Q
// blocks (the workspace's dim 1).
// MMA-LABEL: func.func @heads(
// MMA: #attn.launch<block_mask, {{.*}}grid = [ceildiv(q_len, 128), kv_heads, 1]{{.*}}workspace = [kv_heads, ceildiv(q_len, 128), 2, ceildiv(kv_len, 128)] : i32>
// MMA-LABEL: func.func @packed(
// MMA-SAME: %[[CQ:[^:]*]]: memref<?xi32>, %{{[^:]*}}: memref<?xi32>, %{{[^:]*}}: memref<?x8x64xf16>, %[[PMASK:[^:]*]]: memref<?x?x2x?xi32>)
// MMA: %[[NCQ:.*]] = memref.dim %[[CQ]], %c0
// MMA: %[[NB:.*]] = arith.subi %[[NCQ]], %c1
// MMA: %[[QB:.*]] = memref.dim %[[PMASK]], %c1
// MMA: gpu.launch_func @attn_kernels::@packed_mma_block_mask blocks in (%[[QB]], %{{.*}}, %[[NB]])
// MMA-SAME: #attn.launch<block_mask, tier = mma, threads = 256, shared = 0, grid = [ceildiv(q_len, 128), 1, batch], params = [q, k, v, cu_seqlens_q, cu_seqlens_k, workspace], workspace = [batch, ceildiv(q_len, 128), 2, ceildiv(kv_len, 128)] : i32>
// MMA: gpu.launch_func @attn_kernels::@packed_mma
// MMA: return
// Over a paged cache with kv_lens, the same h-only mask gets a row per
// (batch, K/V head): each sequence has its own length. The block-mask
// kernel reads kv_lens (its length arithmetic) and not K/V.
// MMA-LABEL: func.func @paged_lens(
// MMA: #attn.launch<block_mask, {{.*}}grid = [ceildiv(q_len, 128), kv_heads, batch], params = [q, k, v, block_table, kv_lens, workspace]{{.*}}workspace = [batch * kv_heads, ceildiv(q_len, 128), 2, ceildiv(kv_len, 128)] : i32>
// The block-mask kernel: the region's loads at guarded positions (a key
// past kv_len reads position 0), two reducing barriers, thread 0
// appending.
// MMA-LABEL: gpu.func @documents_mma_block_mask(
// MMA: scf.for
// MMA: scf.for
// MMA: %[[KEY:.*]] = arith.select %{{.*}}, %{{.*}}, %c0{{.*}} : index
// MMA: memref.load %{{.*}}[%{{.*}}, %[[KEY]]] : memref<?x?xi32>
// MMA: nvvm.barrier #nvvm.reduction<or>
// MMA: nvvm.barrier #nvvm.reduction<and>
// MMA: memref.store
// MMA: memref.store
// The prefill kernel: the list's length, then one entry per tile
// (block << 1 | full), its full bit choosing the unmasked path.
// MMA-LABEL: gpu.func @documents_mma(
// MMA: %[[COUNT:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}, %c1{{.*}}, %c0{{.*}}] : memref<?x?x2x?xi32>
// MMA: scf.for
// MMA: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %c0{{.*}}, %{{.*}}] : memref<?x?x2x?xi32>
// MMA: arith.shrui
// MMA: arith.andi %{{.*}}, %c1
// The paged spec's block-mask kernel: kv_lens of its batch (grid z).
// MMA-LABEL: gpu.func @paged_lens_mma_block_mask(
// MMA-SAME: %[[LENS:[^:]*]]: memref<?xi32>, %[[LIST:[^:]*]]: memref<?x?x2x?xi32>)
// MMA: %[[B:.*]] = gpu.block_id z
// MMA: memref.load %[[LENS]][%[[B]]] : memref<?xi32>
// MMA: %[[ROW:.*]] = arith.muli %[[B]], %{{.*}} : index
// The list's length bounds the blocks it writes, whatever kv_lens says.
// MMA: memref.dim %[[LIST]], %c3
// MMA: arith.minui
// WMMA: gpu.func @documents_wmma_block_mask(
// WMMA: gpu.func @documents_wmma(
// PTX-LABEL: .entry documents_mma_block_mask(
// PTX: bar.red.or.pred
// PTX: bar.red.and.pred
// PTX-LABEL: .entry documents_mma(
func.func @documents(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                     %v: memref<?x2x?x64xf16>, %ids: memref<?x?xi32>,
                     %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
                 captures(%ids : memref<?x?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index, %d: memref<?x?xi32>):
    %di = memref.load %d[%b, %i] : memref<?x?xi32>
    %dj = memref.load %d[%b, %j] : memref<?x?xi32>
    %r = arith.cmpi eq, %di, %dj : i32
    attn.yield %r : i1
  }
  return
}

// A mask reading h but not b.
func.func @heads(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                 %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %few = arith.cmpi ult, %h, %c3 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %few, %causal : i1
    attn.yield %r : i1
  }
  return
}

// Packed (varlen).
func.func @packed(%q: memref<?x8x64xf16>, %k: memref<?x2x64xf16>,
                  %v: memref<?x2x64xf16>, %cq: memref<?xi32>,
                  %ck: memref<?xi32>, %o: memref<?x8x64xf16>) {
  attn.attention q(%q : memref<?x8x64xf16>) k(%k : memref<?x2x64xf16>)
                 v(%v : memref<?x2x64xf16>) cu_seqlens_q(%cq : memref<?xi32>)
                 cu_seqlens_k(%ck : memref<?xi32>)
              -> o(%o : memref<?x8x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c16 = arith.constant 16 : index
    %prefix = arith.cmpi slt, %j, %c16 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %prefix, %causal : i1
    attn.yield %r : i1
  }
  return
}

// The mask of @heads over a paged cache of 16-key blocks with kv_lens.
func.func @paged_lens(%q: memref<?x8x?x64xf16>, %k: memref<?x2x16x64xf16>,
                      %v: memref<?x2x16x64xf16>, %bt: memref<?x?xi32>,
                      %lens: memref<?xi32>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x16x64xf16>)
                 v(%v : memref<?x2x16x64xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x8x?x64xf16>)
                 mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c3 = arith.constant 3 : index
    %few = arith.cmpi ult, %h, %c3 : index
    %causal = arith.cmpi sle, %j, %i : index
    %r = arith.ori %few, %causal : i1
    attn.yield %r : i1
  }
  return
}
