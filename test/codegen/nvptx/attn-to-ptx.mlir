// attn-to-ptx produces PTX that ptxas accepts for each chip attn targets,
// with the instructions that matter. The wmma tier (sm_75, or prefill=wmma):
// WMMA m16n16k16 with f32 accumulation (K loaded column-major for Q.K^T,
// the rescale loaded as a C fragment). The mma tier (sm_80+ by default):
// ldmatrix (.trans for V), mma.sync m16n8k16, quad shuffles, and no score
// tile in shared memory; ex2.approx.ftz. 16-byte cp.async on sm_80+, 16-byte global loads
// on sm_75.
// REQUIRES: ptxas
// RUN: attn-opt %s --attn-to-ptx="chip=sm_80" | attn-translate --attn-ptx -o %t.sm80.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,ASYNC,MMA < %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=EPILOGUE < %t.sm80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90 prefill=wmma" | attn-translate --attn-ptx -o %t.sm90.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,ASYNC,WMMA < %t.sm90.ptx
// RUN: %ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_75" | attn-translate --attn-ptx -o %t.sm75.ptx
// RUN: FileCheck %s --check-prefixes=CHECK,SYNC,WMMA < %t.sm75.ptx
// RUN: %ptxas -arch=sm_75 %t.sm75.ptx -o %t.sm75.cubin
// Blackwell targets need a newer PTX ISA (8.6 for sm_100, 8.7 for sm_120).
// RUN: attn-opt %s --attn-to-ptx="chip=sm_100" | attn-translate --attn-ptx -o %t.sm100.ptx
// RUN: FileCheck %s --check-prefix=SM100 < %t.sm100.ptx
// RUN: %ptxas -arch=sm_100 %t.sm100.ptx -o %t.sm100.cubin
// RUN: attn-opt %s --attn-to-ptx="chip=sm_120" | attn-translate --attn-ptx -o %t.sm120.ptx
// RUN: FileCheck %s --check-prefix=SM120 < %t.sm120.ptx
// RUN: %ptxas -arch=sm_120 %t.sm120.ptx -o %t.sm120.cubin
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_75 prefill=mma" 2>&1 | FileCheck %s --check-prefix=TURING
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_80 prefill=flash" 2>&1 | FileCheck %s --check-prefix=BADTIER

// SM100: .version 8.6
// SM100: .target sm_100
// SM120: .version 8.7
// SM120: .target sm_120
// TURING: attn-to-ptx: the mma tier needs sm_80 or newer; got sm_75
// BADTIER: attn-to-ptx: option 'prefill' must be mma, wmma or wgmma, got 'flash'

// MMA: // attn.kernel window_softcap_mma host=window_softcap tier=mma threads=128 smem={{[0-9]+}} block_q=128 group=8 args=5 role=prefill grid=[ceildiv(group_rows,128),kv_heads,batch] params=[q,k,v,o,lse]{{$}}
// WMMA: // attn.kernel window_softcap_wmma host=window_softcap tier=wmma threads=128 smem={{[0-9]+}} block_q=64 group=8 args=5
// Dynamic shared memory is the extern array PTX expects (not a demoted
// one-byte variable).
// CHECK: .extern .shared .align 16 .b8 __dynamic_shmem__0[];
// MMA: .visible .entry window_softcap_mma(
// WMMA: .visible .entry window_softcap_wmma(
// ASYNC: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16, {{.*}};
// ASYNC: cp.async.commit_group;
// ASYNC: cp.async.wait_group 1;
// SYNC-NOT: cp.async
// SYNC: ld.global.v4.b32
// WMMA: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// WMMA: wmma.load.b.sync.aligned.col.m16n16k16.shared.f16
// WMMA: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// WMMA: wmma.store.d.sync.aligned.row.m16n16k16.shared.f32
// WMMA: shfl.sync.bfly.b32
// WMMA: wmma.load.c.sync.aligned.row.m16n16k16.shared.f32
// WMMA: wmma.load.b.sync.aligned.row.m16n16k16.shared.f16
// WMMA: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// MMA-NOT: wmma.
// MMA-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// MMA-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// MMA-DAG: shfl.sync.bfly.b32
// MMA-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// ex2 flushes subnormals: no fix-up around every exponential.
// MMA-DAG: ex2.approx.ftz.f32
// MMA-NOT: wmma.
// Both tiers store O in 16-byte chunks.
// CHECK: st.global.v4.b32
// The mma tier's epilogue stages each warp's rows of O over its own rows
// of Q: no block barrier beyond the prologue's and the loop's.
// EPILOGUE-COUNT-2: bar.sync
// EPILOGUE-NOT: bar.sync
// EPILOGUE: st.global.v4.b32
// EPILOGUE-NOT: bar.sync
func.func @window_softcap(%q: memref<?x8x?x128xf16>, %k: memref<?x1x?x128xf16>,
                          %v: memref<?x1x?x128xf16>, %o: memref<?x8x?x128xf16>,
                          %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xf16>) k(%k : memref<?x1x?x128xf16>)
                 v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x8x?x128xf16>)
                 lse(%lse : memref<?x8x?xf32>)
                 mask = <window 256, 0, bottom_right> softcap = 30.0
  return
}
