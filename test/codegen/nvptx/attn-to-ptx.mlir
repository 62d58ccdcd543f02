// attn-to-ptx produces PTX that ptxas accepts for each chip attn targets,
// with the instructions that matter: WMMA m16n16k16 with f32 accumulation
// (K loaded column-major for Q.K^T, the rescale loaded as a C fragment),
// 16-byte cp.async on sm_80+, 16-byte global loads on sm_75.
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" | attn-translate --attn-ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,ASYNC < %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.sm90.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,ASYNC < %t.sm90.ptx
// RUN: %ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_75" | attn-translate --attn-ptx -o %t.sm75.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SYNC < %t.sm75.ptx
// RUN: %ptxas -arch=sm_75 %t.sm75.ptx -o %t.sm75.cubin

// CHECK: // attn.kernel window_softcap_wmma host=window_softcap tier=wmma threads=128 smem={{[0-9]+}} block_q=64 group=8 args=5
// Dynamic shared memory is the extern array PTX expects (not a demoted
// one-byte variable).
// CHECK: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// CHECK: .visible .entry window_softcap_wmma(
// ASYNC: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// ASYNC: cp.async.commit_group;
// ASYNC: cp.async.wait_group 1;
// SYNC-NOT: cp.async
// SYNC: ld.global.v4.b32
// CHECK: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// CHECK: wmma.load.b.sync.aligned.col.m16n16k16.shared.f16
// CHECK: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// CHECK: wmma.store.d.sync.aligned.row.m16n16k16.shared.f32
// CHECK: shfl.sync.bfly.b32
// CHECK: wmma.load.c.sync.aligned.row.m16n16k16.shared.f32
// CHECK: wmma.load.b.sync.aligned.row.m16n16k16.shared.f16
// CHECK: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
func.func @window_softcap(%q: memref<?x8x?x128xf16>, %k: memref<?x1x?x128xf16>,
                          %v: memref<?x1x?x128xf16>, %o: memref<?x8x?x128xf16>,
                          %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x1x?x128xf16>)
                 v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x8x?x128xf16>)
                 lse(%lse : memref<?x8x?xf32>)
                 mask = <window 256, 0, bottom_right> softcap = 30.0
  return
}
