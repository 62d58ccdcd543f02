// A soft-cap of 0.1 at scale 1: tanh's argument, score / 0.1, passes 45 for
// a good part of the keys (scores reach about 15 with the tests' inputs),
// where Metal's fast tanh returns NaN. fast-math.test runs it.
func.func @softcap_large_f32(%q: memref<?x2x?x64xf32>, %k: memref<?x2x?x64xf32>,
                             %v: memref<?x2x?x32xf32>, %o: memref<?x2x?x32xf32>,
                             %lse: memref<?x2x?xf32>) {
  attn.attention q(%q : memref<?x2x?x64xf32>) k(%k : memref<?x2x?x64xf32>)
                 v(%v : memref<?x2x?x32xf32>) -> o(%o : memref<?x2x?x32xf32>)
                 lse(%lse : memref<?x2x?xf32>)
                 scale = 1.0 mask = <causal, bottom_right> softcap = 0.1
  return
}
