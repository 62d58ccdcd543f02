// Multi-head latent attention (DeepSeek-V3's absorbed decode) on the CPU:
// one latent K/V head of 576 values a token (512 "no-position" values,
// then 64 rotary ones), V = the first 512 columns of the same buffer
// (`v_from_k`), O [.., Hq, 512] and the LSE, the model's own scale.
// attn-run fills the one latent buffer, poisons O and the LSE and compares
// them with the float64 reference, whose V is each latent row's first 512
// values; it exits 1 otherwise.
//
// Paged (64-row pages, FlashMLA's), Hq 16 (DeepSeek-V3 under 8-way tensor
// parallelism), Sq 1-4 per sequence (multi-token prediction) under the
// bottom-right causal mask; sequences of 1 and 0 keys and one ending
// mid-page; split-K and not.
// RUN: attn-run %s --func=paged_mla --batch=4 --q-len=1 --kv-len=300 --kv-lens=300,1,0,130 | FileCheck %s --check-prefixes=CHECK,PAGED
// RUN: attn-run %s --func=paged_mla --batch=3 --q-len=4 --kv-len=200 --kv-lens=200,3,77 --num-splits=3 | FileCheck %s --check-prefixes=CHECK,PAGED
// Contiguous latent cache, f32, Sq 2, split-K.
// RUN: attn-run %s --func=contiguous_mla --batch=2 --q-len=2 --kv-len=150 --num-splits=4 | FileCheck %s --check-prefixes=CHECK,F32
// Packed queries (a varlen batch of 1-4 tokens each) over a paged cache.
// RUN: attn-run %s --func=packed_mla --batch=4 --q-len=4 --kv-len=180 --q-lens=1,4,2,3 --kv-lens=180,4,64,65 | FileCheck %s --check-prefixes=CHECK,PACKED
// FlashMLA's fp8 latent cache: e4m3 with one scale a token, which
// dequantizes V (the same bytes) too; f32 Q and O, so to 1e-4.
// RUN: attn-run %s --func=fp8_mla --batch=3 --q-len=2 --kv-len=260 --kv-lens=260,64,1 | FileCheck %s --check-prefixes=CHECK,FP8
// RUN: attn-run %s --func=fp8_mla --batch=3 --q-len=2 --kv-len=260 --num-splits=2 | FileCheck %s --check-prefixes=CHECK,FP8
// The shipped examples: DeepSeek-V3's absorbed decode and its prefill
// before absorption (D192, Dv128, causal).
// RUN: attn-run %attn_src_root/examples/deepseek_v3_mla_decode.mlir --batch=3 --kv-len=400 --kv-lens=400,1,65 --num-splits=2 | FileCheck %s --check-prefixes=CHECK,PAGED
// RUN: attn-run %attn_src_root/examples/deepseek_v3_prefill.mlir --batch=2 --q-len=100 --kv-len=130 | FileCheck %s --check-prefixes=CHECK,PREFILL
// The benchmark's 128-head decode (two 64-row tiles of query heads).
// RUN: attn-run %attn_src_root/bench/deepseek_v3.mlir --func=mla_decode_h128 --batch=2 --kv-len=130 --kv-lens=130,1 | FileCheck %s --check-prefixes=CHECK,H128
//
// PAGED: Hq=16 Hkv=1
// PAGED-SAME: D=576 Dv=512 bf16 paged bs=64 v_from_k
// F32: D=576 Dv=512 f32 v_from_k
// PACKED: D=576 Dv=512 bf16 paged bs=64 packed_q={{[0-9]+}} v_from_k
// H128: Hq=128 Hkv=1 Sq=1 Sk=130 D=576 Dv=512 bf16 paged bs=64 v_from_k
// PREFILL: Hq=16 Hkv=16 Sq=100 Sk=130 D=192 Dv=128 bf16
// FP8: D=576 Dv=512 f32 paged bs=64 v_from_k kv=f8E4M3FN k_scale=token v_scale=none
// CHECK-SAME: seed={{[0-9]+}}: rel_err=
// CHECK-SAME: lse_err={{[0-9.e+-]+}}
// CHECK-SAME: unwritten=0 PASS

func.func @paged_mla(%q: memref<?x16x?x576xbf16>, %ckv: memref<?x1x64x576xbf16>,
                     %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                     %o: memref<?x16x?x512xbf16>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x?x512xbf16>) lse(%lse : memref<?x16x?xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}

func.func @contiguous_mla(%q: memref<?x16x?x576xf32>, %ckv: memref<?x1x?x576xf32>,
                          %o: memref<?x16x?x512xf32>, %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x576xf32>)
                 k(%ckv : memref<?x1x?x576xf32>) v_from_k
              -> o(%o : memref<?x16x?x512xf32>) lse(%lse : memref<?x16x?xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}

func.func @packed_mla(%q: memref<?x16x576xbf16>, %cu: memref<?xi32>,
                      %ckv: memref<?x1x64x576xbf16>, %bt: memref<?x?xi32>,
                      %lens: memref<?xi32>, %o: memref<?x16x512xbf16>,
                      %lse: memref<?x16xf32>) {
  attn.attention q(%q : memref<?x16x576xbf16>)
                 k(%ckv : memref<?x1x64x576xbf16>) v_from_k
                 cu_seqlens_q(%cu : memref<?xi32>)
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
              -> o(%o : memref<?x16x512xbf16>) lse(%lse : memref<?x16xf32>)
                 scale = 0.1352 mask = <causal, bottom_right> max_q_len = 4
  return
}

func.func @fp8_mla(%q: memref<?x16x?x576xf32>, %ckv: memref<?x1x64x576xf8E4M3FN>,
                   %bt: memref<?x?xi32>, %lens: memref<?xi32>,
                   %ks: memref<?x1x64xf32>, %o: memref<?x16x?x512xf32>,
                   %lse: memref<?x16x?xf32>) {
  attn.attention q(%q : memref<?x16x?x576xf32>)
                 k(%ckv : memref<?x1x64x576xf8E4M3FN>) v_from_k
                 block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 k_scale(%ks : memref<?x1x64xf32>)
              -> o(%o : memref<?x16x?x512xf32>) lse(%lse : memref<?x16x?xf32>)
                 scale = 0.1352 mask = <causal, bottom_right>
  return
}
