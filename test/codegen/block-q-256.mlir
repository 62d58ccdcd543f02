// A schedule of block_q = 256 is legal L0 (issue 15): the CPU path runs it,
// and every GPU target refuses it with its own limit, naming the tier.
// RUN: attn-run %s --batch=1 --q-len=300 --kv-len=200 | FileCheck %s --check-prefix=CPU
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_80 prefill=wmma" 2>&1 | FileCheck %s --check-prefix=WMMA
// RUN: not attn-opt %s --attn-to-ptx="chip=sm_75" 2>&1 | FileCheck %s --check-prefix=WMMA
// RUN: not attn-translate --attn-to-msl %s 2>&1 | FileCheck %s --check-prefix=MSL
// CPU: PASS
// MMA: error: the mma tier needs tile sizes that are multiples of 16 up to 128; got block_q = 256
// WMMA: error: the wmma tier needs tile sizes that are multiples of 16 up to 128; got block_q = 256
// MSL: error: the msl tier needs block_q in {8, 16, 32, 64} and block_kv in {8, 16, 32, 64}; got block_q = 256
func.func @f(%q: memref<?x4x?x64xf16>, %k: memref<?x4x?x64xf16>,
             %v: memref<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x4x?x64xf16>)
                 v(%v : memref<?x4x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 schedule = <block_q = 256>
  return
}
