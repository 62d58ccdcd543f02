// attn-run's check can fail: an impossible tolerance must give FAIL and exit
// code 1, and bad sizes must be refused with a message, not a crash.
// RUN: not attn-run %s --batch=1 --q-len=20 --kv-len=30 --tolerance=1e-12 | FileCheck %s --check-prefix=TIGHT
// RUN: not attn-run %s --batch=1 --kv-len=30 2>&1 | FileCheck %s --check-prefix=NOQ
// RUN: not attn-run %s --batch=0 --q-len=4 --kv-len=30 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not attn-run %s --func=nope --q-len=4 --kv-len=30 2>&1 | FileCheck %s --check-prefix=NOFUNC

// TIGHT: @f16_causal B=1 Hq=2 Hkv=1 Sq=20 Sk=30 D=64 Dv=64 f16 seed={{[0-9]+}}: rel_err={{.*}} FAIL
// NOQ: attn-run: error: query length (--q-len) is dynamic in the spec; give it on the command line
// RANGE: attn-run: error: --batch and --q-len must be in [1, 4096] and [1, 65536]
// NOFUNC: attn-run: error: no func.func @nope with an attn.attention

func.func @f16_causal(%q: memref<?x2x?x64xf16>, %k: memref<?x1x?x64xf16>,
                      %v: memref<?x1x?x64xf16>, %o: memref<?x2x?x64xf16>) {
  attn.attention q(%q : memref<?x2x?x64xf16>) k(%k : memref<?x1x?x64xf16>)
                 v(%v : memref<?x1x?x64xf16>) -> o(%o : memref<?x2x?x64xf16>)
                 mask = <causal>
  return
}
