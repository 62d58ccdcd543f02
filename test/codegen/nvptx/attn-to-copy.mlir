// attn.cache_append becomes the copy tier's kernel: one block per (chunk of
// new tokens, K/V head, batch), 16-byte pieces, every load (block-table
// entries included) before the first store, and a launch whose
// #attn.launch<append, tier = copy> contract libattnrt follows.
// RUN: attn-opt %s --attn-to-copy | FileCheck %s
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_75" | attn-translate --attn-ptx -o %t75.ptx
// RUN: %ptxas -arch=sm_75 %t75.ptx -o %t75.cubin

// A decode step: one token, so one token per block and one warp (16 lanes
// take a K row of 128 f16, 16 a V row).
// CHECK-LABEL: func.func @decode
// CHECK: gpu.launch_func @attn_kernels::@decode_append blocks in (%{{.*}}, %c8, %{{.*}}) threads in (%c32,
// CHECK-SAME: {attn.launch = #attn.launch<append, tier = copy, threads = 32, shared = 0, grid = [new_len, kv_heads, batch], params = [k_new, v_new, kv_lens, k, v]>}
// CHECK-NOT: attn.cache_append
func.func @decode(%kn: memref<?x8x1x128xf16>, %vn: memref<?x8x1x128xf16>,
                  %lens: memref<?xi32>, %kc: memref<?x8x?x128xf16>,
                  %vc: memref<?x8x?x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x1x128xf16>) v_new(%vn : memref<?x8x1x128xf16>)
                    kv_lens(%lens : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x?x128xf16>) v_cache(%vc : memref<?x8x?x128xf16>)
  return
}

// A ragged chunk into a paged cache: 32 tokens per block of 128 threads,
// 8 pieces per thread (4 of K, 4 of V).
// CHECK-LABEL: func.func @paged
// CHECK: %[[CHUNKS:.*]] = arith.ceildivsi %{{.*}}, %c32
// CHECK: gpu.launch_func @attn_kernels::@paged_append blocks in (%[[CHUNKS]], %{{.*}}, %{{.*}}) threads in (%c128,
// CHECK-SAME: {attn.launch = #attn.launch<append, tier = copy, threads = 128, shared = 0, grid = [ceildiv(new_len, 32), kv_heads, batch], params = [k_new, v_new, block_table, kv_lens, new_lens, k, v]>}
func.func @paged(%kn: memref<?x8x?x128xf16>, %vn: memref<?x8x?x128xf16>,
                 %bt: memref<?x?xi32>, %lens: memref<?xi32>, %n: memref<?xi32>,
                 %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x?x128xf16>) v_new(%vn : memref<?x8x?x128xf16>)
                    block_table(%bt : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                    new_lens(%n : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// vLLM's reshape_and_cache: packed tokens, one block per (32 tokens, K/V
// head).
// CHECK-LABEL: func.func @slots
// CHECK: gpu.launch_func @attn_kernels::@slots_append blocks in (%{{.*}}, %c8, %c1{{.*}}) threads in (%c128,
// CHECK-SAME: {attn.launch = #attn.launch<append, tier = copy, threads = 128, shared = 0, grid = [ceildiv(new_len, 32), kv_heads, 1], params = [k_new, v_new, slot_mapping, k, v]>}
func.func @slots(%kn: memref<?x8x128xf16>, %vn: memref<?x8x128xf16>,
                 %s: memref<?xi32>,
                 %kc: memref<?x8x16x128xf16>, %vc: memref<?x8x16x128xf16>) {
  attn.cache_append k_new(%kn : memref<?x8x128xf16>) v_new(%vn : memref<?x8x128xf16>)
                    slot_mapping(%s : memref<?xi32>)
                 -> k_cache(%kc : memref<?x8x16x128xf16>) v_cache(%vc : memref<?x8x16x128xf16>)
  return
}

// CHECK: gpu.func @decode_append({{.*}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>}
// CHECK-COUNT-2: vector.load {{.*}} {alignment = 16 : i64} : memref<?x8x1x128xf16>, vector<8xf16>
// CHECK-COUNT-2: vector.store {{.*}} {alignment = 16 : i64} : memref<?x8x?x128xf16>, vector<8xf16>
// CHECK: gpu.func @paged_append({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// The sequence's new tokens: new_lens clamped to [0, S_new], then to the
// block table's reach.
// CHECK: memref.load %{{.*}} : memref<?xi32>
// CHECK: memref.load %{{.*}} : memref<?xi32>
// CHECK: arith.minsi
// CHECK-COUNT-4: vector.load {{.*}} : memref<?x8x?x128xf16>, vector<8xf16>
// CHECK-NOT: vector.store
// CHECK-COUNT-4: vector.load {{.*}} : memref<?x8x?x128xf16>, vector<8xf16>
// CHECK-COUNT-8: vector.store {{.*}} : memref<?x8x16x128xf16>, vector<8xf16>

// PTX: // attn.kernel decode_append host=decode tier=append threads=32 smem=0 args=5 role=append grid=[new_len,kv_heads,batch] params=[k_new,v_new,kv_lens,k,v]
// PTX: // attn.kernel paged_append host=paged tier=append threads=128
// PTX: .entry paged_append(
// PTX-COUNT-8: ld.global.v4.b32
// PTX-NOT: ld.global
// PTX: st.global.v4.b32
// Each piece loads its token's slot and its row; every load comes before
// the first store.
// CHECK: gpu.func @slots_append
// CHECK: memref.load %{{.*}} : memref<?xi32>
// CHECK-COUNT-8: vector.load {{.*}} : memref<?x8x128xf16>, vector<8xf16>
// CHECK-NOT: memref.load
// CHECK: vector.store {{.*}} : memref<?x8x16x128xf16>, vector<8xf16>
