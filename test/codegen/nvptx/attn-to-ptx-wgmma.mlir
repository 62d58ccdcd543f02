// attn-to-ptx with prefill=wgmma on sm_90a: each prefill becomes a wgmma
// kernel whose PTX ptxas assembles for sm_90a. The default tiles: past
// D64 a producer warpgroup and two consumer warpgroups of 64 rows against
// 128 keys (64 at D256; WS, below); at D64 one warpgroup of 64 rows
// against 64 keys, as every kernel with a default schedule of
// producer=off (CHECK, QK, PV; two warpgroups against 64 keys at D256).
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90a prefill=wgmma default-schedule=#attn.schedule<producer=off>" | attn-translate --attn-ptx -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// Each kernel's two product chains, one prefix each: LLVM lays the loop
// out with P V's block before Q K^T's.
// RUN: FileCheck %s --check-prefix=QK < %t.ptx
// RUN: FileCheck %s --check-prefix=PV < %t.ptx
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90a prefill=wgmma" | attn-translate --attn-ptx -o %t.ws.ptx
// RUN: FileCheck %s --check-prefix=WS < %t.ws.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ws.ptx -o %t.ws.cubin %}
// With o_store = threads each warp stores its staged rows of O itself.
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90a prefill=wgmma default-schedule=#attn.schedule<o_store=threads>" | attn-translate --attn-ptx | FileCheck %s --check-prefix=NO-OTMA
// NO-OTMA-NOT: tensor_map(o)
// NO-OTMA-NOT: cp.async.bulk.tensor.{{.*}}.global.shared::cta
// NO-OTMA: st.global.v4.b32
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90a prefill=wgmma default-schedule=#attn.schedule<kv_load=threads>" | attn-translate --attn-ptx | FileCheck %s --check-prefix=NO-TMA
// NO-TMA-NOT: .b8 causal_d128_wgmma_param_0[128]
// NO-TMA-NOT: cp.async.bulk.tensor
// NO-TMA-NOT: mbarrier
// NO-TMA: wgmma.mma_async
// RUN: %if ptxas %{ %ptxas -arch=sm_90a %t.ptx -o %t.cubin %}
// The tier needs the arch-specific target.
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_90 prefill=wgmma" 2>&1 | FileCheck %s --check-prefix=NOT-A
// NOT-A: attn-to-ptx: the wgmma tier needs chip=sm_90a (wgmma is arch-specific); got sm_90

// CHECK: .target sm_90a
// The swizzle atoms are 1024 bytes: so is the dynamic shared memory's
// alignment.
// CHECK: .extern .shared .align 1024 .b8

// Q, K and V come by TMA: their tensor maps are the first three
// parameters, passed by value (__grid_constant__); four mbarriers track
// the copies. Q's map is 5-D (column, head in group, query, K/V head,
// batch), two boxes of 64 columns; K's 4-D. Every thread waits for Q's
// mbarrier after the barrier; each chain is fenced, committed and waited
// for.
// CHECK-LABEL: .entry causal_d128_wgmma(
// CHECK-NEXT: .param .align 64 .b8 causal_d128_wgmma_param_0[128],
// CHECK-NEXT: .param .align 64 .b8 causal_d128_wgmma_param_1[128],
// CHECK-NEXT: .param .align 64 .b8 causal_d128_wgmma_param_2[128],
// CHECK-NOT: cp.async.cg.shared.global
// CHECK-COUNT-4: mbarrier.init.shared.b64
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK-COUNT-2: cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: bar.sync 0;
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 0;
// CHECK: ex2.approx.ftz.f32
// A producer warpgroup: a register cap at entry (384 threads, one block
// an SM), then warpgroup 0 gives registers up and its thread 0 sends the
// tiles (waiting on each stage's empty mbarrier); the consumers take the
// registers, meet on named barrier 1 and run 64 x 128 products.
// WS-LABEL: .entry causal_d128_wgmma(
// WS: .maxntid 384, 1, 1
// WS-NEXT: .minnctapersm 1
// WS-COUNT-8: mbarrier.init.shared.b64
// WS: fence.mbarrier_init.release.cluster;
// WS: bar.sync 0;
// WS: setmaxnreg.dec.sync.aligned.u32 24;
// WS: mbarrier.try_wait.parity.shared.b64
// WS: mbarrier.arrive.expect_tx.shared.b64
// WS: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// WS: setmaxnreg.inc.sync.aligned.u32 240;
// WS: bar.sync 1, 256;
// WS: mbarrier.try_wait.parity.shared.b64
// WS: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// WS: mbarrier.arrive.shared.b64
// WS: mbarrier.arrive.shared.b64
// WS: bar.sync 1, 256;
// O leaves by TMA: the consumers fence their staging writes, meet, and
// one thread stores O's two 64-column blocks, then waits for the reads.
// WS: fence.proxy.async.shared::cta;
// WS-NEXT: bar.sync 1, 256;
// WS-NOT: st.global
// WS: cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [__dynamic_shmem__0];
// WS-NEXT: mov.b32
// WS-NEXT: cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%rd{{[0-9]+}}, {{.*}}], [__dynamic_shmem__0+16384];
// WS-NEXT: cp.async.bulk.commit_group;
// WS-NEXT: cp.async.bulk.wait_group.read 0;
// WS-LABEL: .entry gqa_bf16_d64_wgmma(
// WS-NOT: setmaxnreg
// WS: .entry mha_d256_wgmma(
// WS: .maxntid 384, 1, 1
// WS: setmaxnreg.dec.sync.aligned.u32 24;
// WS: setmaxnreg.inc.sync.aligned.u32 240;
// WS: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// S = Q K^T, both through descriptors (K-major, not transposed); O += P V
// with P in four registers and V transposed (MN-major).
// QK-LABEL: .entry causal_d128_wgmma(
// QK-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PV-LABEL: .entry causal_d128_wgmma(
// PV-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
func.func @causal_d128(%q: memref<?x8x?x128xf16>, %k: memref<?x8x?x128xf16>,
                       %v: memref<?x8x?x128xf16>, %o: memref<?x8x?x128xf16>,
                       %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x8x?x128xf16>)
                 lse(%lse : memref<?x8x?xf32>) mask = <causal>
  return
}

// bf16 at D64: S = Q K^T in 4 steps of 16, O += P V (n = 64) in 4.
// QK-LABEL: .entry gqa_bf16_d64_wgmma(
// QK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// PV-LABEL: .entry gqa_bf16_d64_wgmma(
// PV-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
func.func @gqa_bf16_d64(%q: memref<?x8x?x64xbf16>, %k: memref<?x2x?x64xbf16>,
                        %v: memref<?x2x?x64xbf16>, %o: memref<?x8x?x64xbf16>) {
  attn.attention q(%q : memref<?x8x?x64xbf16>) k(%k : memref<?x2x?x64xbf16>)
                 v(%v : memref<?x2x?x64xbf16>) -> o(%o : memref<?x8x?x64xbf16>)
  return
}

// D256: 64 keys a tile, S in 16 steps, O (n = 256) in 4.
// QK-LABEL: .entry mha_d256_wgmma(
// QK-COUNT-16: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
// PV-LABEL: .entry mha_d256_wgmma(
// PV-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
func.func @mha_d256(%q: memref<?x4x?x256xf16>, %k: memref<?x4x?x256xf16>,
                    %v: memref<?x4x?x256xf16>, %o: memref<?x4x?x256xf16>) {
  attn.attention q(%q : memref<?x4x?x256xf16>) k(%k : memref<?x4x?x256xf16>)
                 v(%v : memref<?x4x?x256xf16>) -> o(%o : memref<?x4x?x256xf16>)
  return
}
