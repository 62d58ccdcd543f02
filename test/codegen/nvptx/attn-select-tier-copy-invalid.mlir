// #attn.tier<copy> is attn.cache_append's tier: an attention op that asks
// for it is refused by name.
// RUN: attn-opt %s --attn-select-tier -verify-diagnostics

func.func @f(%q: memref<1x8x16x64xf16>, %k: memref<1x8x16x64xf16>,
             %v: memref<1x8x16x64xf16>, %o: memref<1x8x16x64xf16>) {
  // expected-error @+1 {{'attn.attention' op 'attn.tier' is #attn.tier<copy>, the tier of attn.cache_append; attention needs wmma, mma, wgmma or decode}}
  attn.attention q(%q : memref<1x8x16x64xf16>) k(%k : memref<1x8x16x64xf16>)
                 v(%v : memref<1x8x16x64xf16>) -> o(%o : memref<1x8x16x64xf16>)
                 {attn.tier = #attn.tier<copy>}
  return
}
