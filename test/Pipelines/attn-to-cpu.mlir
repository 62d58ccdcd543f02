// attn-to-cpu lowers a spec all the way to the LLVM dialect: nothing of attn,
// linalg, tensor, scf or memref is left; exp2, log2 and the soft-cap's tanh
// are libm calls.
// RUN: attn-opt %s --attn-to-cpu="block-q=16 block-kv=16 num-splits=2" | FileCheck %s
// RUN: attn-opt %s --attn-to-cpu | FileCheck %s

// CHECK-NOT: attn.
// CHECK-DAG: llvm.func @tanhf(f32) -> f32
// CHECK-DAG: llvm.func @softcap_gqa(
// CHECK-DAG: llvm.call @exp2f
// CHECK-DAG: llvm.call @log2f
// CHECK-DAG: llvm.call @tanhf
// CHECK-NOT: linalg.
// CHECK-NOT: tensor.
// CHECK-NOT: scf.
// CHECK-NOT: memref.
func.func @softcap_gqa(%q: memref<?x4x?x32xbf16>, %k: memref<?x1x?x32xbf16>,
                       %v: memref<?x1x?x32xbf16>, %o: memref<?x4x?x32xbf16>,
                       %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xbf16>) k(%k : memref<?x1x?x32xbf16>)
                 v(%v : memref<?x1x?x32xbf16>) -> o(%o : memref<?x4x?x32xbf16>)
                 lse(%lse : memref<?x4x?xf32>) mask = <causal> softcap = 20.0
  return
}
