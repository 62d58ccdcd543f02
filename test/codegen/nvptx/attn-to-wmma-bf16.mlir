// bf16 prefill: gpu.subgroup_mma has no bf16, so the tier's tile products
// run on mma.sync m16n8k16 with ldmatrix loads (.trans for V) and the
// accumulators in the PTX ISA's fragment layout; sm_75 lacks bf16 mma.sync.
// RUN: attn-opt %s --attn-tile="block-q=64 block-kv=32" --attn-to-wmma="chip=sm_80" | FileCheck %s
// RUN: attn-opt %s --attn-to-ptx="chip=sm_90" | attn-translate --attn-ptx -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}
// RUN: not attn-opt %s --attn-tile --attn-to-wmma="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=TURING

// CHECK-LABEL: gpu.func @bf16_prefill_wmma
// CHECK-NOT:     gpu.subgroup_mma
// CHECK:         attn_nv.ldmatrix {{.*}} : memref<{{.*}}xbf16, #gpu.address_space<workgroup>>
// CHECK:         scf.for
// CHECK:           attn_nv.mma_tile {{.*}} : bf16
// CHECK:           attn_nv.ldmatrix {{.*}} transpose : memref<{{.*}}xbf16, #gpu.address_space<workgroup>>
// CHECK-NOT:     gpu.subgroup_mma

// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16

// TURING: error: bf16 inputs need sm_80 or newer (mma.sync bf16); got sm_75

func.func @bf16_prefill(%q: memref<?x8x?x128xbf16>, %k: memref<?x2x?x128xbf16>,
                        %v: memref<?x2x?x128xbf16>, %o: memref<?x8x?x128xbf16>,
                        %lse: memref<?x8x?xf32>) {
  attn.attention q(%q : memref<?x8x?x128xbf16>) k(%k : memref<?x2x?x128xbf16>)
                 v(%v : memref<?x2x?x128xbf16>) -> o(%o : memref<?x8x?x128xbf16>)
                 lse(%lse : memref<?x8x?xf32>) mask = <causal>
  return
}
