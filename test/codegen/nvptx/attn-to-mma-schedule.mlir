// The schedule's warps and stages on the mma tier.
//
// warps = 8 on 32-row tiles: two warps split the rows and four groups of
// them the 128 keys of each K/V tile (32 each). After the loop the groups
// past the first write their states to shared memory (16-byte chunks)
// between two barriers, and the first group reads them back and merges.
//
// stages = 3: the prologue starts two K/V tiles and waits for Q (all but
// two groups); the loop waits for its tile (all but one) and starts the
// tile two ahead.
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK: // attn.kernel key_groups_mma host=key_groups tier=mma threads=256 smem={{[0-9]+}} block_q=32
// CHECK: // attn.kernel three_stages_mma host=three_stages tier=mma threads=128 smem={{[0-9]+}} block_q=64

// CHECK-LABEL: .entry key_groups_mma(
// CHECK: cp.async.wait_group 1;
// CHECK: bar.sync 0;
// CHECK: cp.async.wait_group 0;
// CHECK: bar.sync 0;
// CHECK: mma.sync.aligned.m16n8k16
// CHECK: bar.sync 0;
// CHECK-COUNT-9: st.shared.v4.b32
// CHECK: bar.sync 0;
// CHECK-COUNT-27: ld.shared.v4.b32
// CHECK-NOT: bar.sync
// CHECK: st.global.v4.b32
func.func @key_groups(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                      %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 mask = <causal>
                 schedule = <block_q = 32, block_kv = 128, warps = 8>
  return
}

// CHECK-LABEL: .entry three_stages_mma(
// CHECK-COUNT-3: cp.async.commit_group;
// CHECK-NEXT: cp.async.wait_group 2;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK-NOT: cp.async.wait_group
// CHECK: cp.async.commit_group;
func.func @three_stages(%q: memref<?x8x?x64xf16>, %k: memref<?x2x?x64xf16>,
                        %v: memref<?x2x?x64xf16>, %o: memref<?x8x?x64xf16>) {
  attn.attention q(%q : memref<?x8x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x8x?x64xf16>)
                 schedule = <block_q = 64, block_kv = 64, stages = 3>
  return
}
