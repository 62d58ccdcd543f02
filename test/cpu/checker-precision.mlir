// attn-run's checker holds each kernel to what its types can carry
// (issue 15): f32 inputs with an f16 O get the f16 tolerance (1e-2), not
// f32's 1e-4, which such an O can never meet; and the LSE is compared
// relative to its size, so a huge scale (LSE ~ 1e19, carried by f32 to
// about 7 digits) passes when O is right.
// RUN: attn-run %s --func=f32_in_f16_out --batch=2 --q-len=77 --kv-len=129 | FileCheck %s --check-prefix=MIXED
// MIXED: (tol 1.000000e-02) {{.*}} PASS
// The tolerance is still the f32 one when everything is f32.
// RUN: attn-run %s --func=huge_scale --batch=1 --q-len=40 --kv-len=65 | FileCheck %s --check-prefix=HUGE
// HUGE: (tol 1.000000e-04) {{.*}} PASS
func.func @f32_in_f16_out(%q: memref<?x4x?x32xf32>, %k: memref<?x2x?x32xf32>,
                          %v: memref<?x2x?x32xf32>, %o: memref<?x4x?x32xf16>,
                          %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x32xf32>) k(%k : memref<?x2x?x32xf32>)
                 v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x4x?x32xf16>)
                 lse(%lse : memref<?x4x?xf32>)
  return
}
func.func @huge_scale(%q: memref<?x2x?x32xf32>, %k: memref<?x2x?x32xf32>,
                      %v: memref<?x2x?x32xf32>, %o: memref<?x2x?x32xf32>,
                      %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x32xf32>) k(%k : memref<?x2x?x32xf32>)
                 v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x2x?x32xf32>)
                 lse(%lse : memref<?x2x?xf32>) scale = 1.0e+19
  return
}
