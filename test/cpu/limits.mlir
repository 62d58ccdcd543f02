// attn-run on issue 15's hostile but legal specs: windows at the 2^31-1
// limit (2^63-1 overflowed and gave rel_err 1.0, or left rows empty that
// should see key 0) give the right answer; runs whose buffers or reference
// work are too large for a CPU check are refused before anything is
// allocated, with the option that raises the limit.
// RUN: attn-run %s --func=window_right_max --batch=2 --q-len=33 --kv-len=70 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s --func=window_both_max --batch=2 --q-len=33 --kv-len=70 | FileCheck %s --check-prefix=PASS
// RUN: attn-run %s --func=window_left_max_br --kv-lens=full | FileCheck %s --check-prefix=PASS
// PASS: PASS
//
// A static head count of 2^31-1 ran out of memory; 1,000,000 heads ran for
// minutes.
// RUN: not attn-run %s --func=huge_heads --kv-len=16 2>&1 | FileCheck %s --check-prefix=WORK
// RUN: not attn-run %s --func=million_heads --kv-len=100 2>&1 | FileCheck %s --check-prefix=WORK
// WORK: attn-run: error: the run needs {{.*}} multiply-adds (B*Hq*Sq*Sk*(D+Dv)), more than --max-work=
//
// A paged cache of block size 2^20 at --kv-len=100: 20 GiB of K and V.
// RUN: not attn-run %s --func=huge_block --batch=2 --kv-len=100 2>&1 | FileCheck %s --check-prefix=MEM
// MEM: attn-run: error: the run's buffers need {{[0-9]+}} MiB, more than --max-memory-mib=4096
//
// The limit is an option: a small one refuses an ordinary run.
// RUN: not attn-run %s --func=window_right_max --batch=2 --q-len=33 --kv-len=70 --max-memory-mib=0 2>&1 | FileCheck %s --check-prefix=OPT
// OPT: the run's buffers need 0 MiB, more than --max-memory-mib=0
func.func @window_right_max(%q: memref<?x4x?x64xf32>, %k: memref<?x2x?x64xf32>,
                            %v: memref<?x2x?x64xf32>, %o: memref<?x4x?x64xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf32>) k(%k : memref<?x2x?x64xf32>)
                 v(%v : memref<?x2x?x64xf32>) -> o(%o : memref<?x4x?x64xf32>)
                 mask = <window 0, 2147483647>
  return
}
func.func @window_both_max(%q: memref<?x4x?x64xf16>, %k: memref<?x2x?x64xf16>,
                           %v: memref<?x2x?x64xf16>, %o: memref<?x4x?x64xf16>,
                           %lse: memref<?x4x?xf32>) {
  attn.attention q(%q : memref<?x4x?x64xf16>) k(%k : memref<?x2x?x64xf16>)
                 v(%v : memref<?x2x?x64xf16>) -> o(%o : memref<?x4x?x64xf16>)
                 lse(%lse : memref<?x4x?xf32>)
                 mask = <window 2147483647, 2147483647>
  return
}
// Sq 9 and Sk 1, bottom-right: every query sees key 0.
func.func @window_left_max_br(%q: memref<1x2x9x32xf32>, %k: memref<1x2x1x32xf32>,
                              %v: memref<1x2x1x32xf32>, %o: memref<1x2x9x32xf32>,
                              %lse: memref<1x2x9xf32>) {
  attn.attention q(%q : memref<1x2x9x32xf32>) k(%k : memref<1x2x1x32xf32>)
                 v(%v : memref<1x2x1x32xf32>) -> o(%o : memref<1x2x9x32xf32>)
                 lse(%lse : memref<1x2x9xf32>)
                 mask = <window 2147483647, 0, bottom_right>
  return
}
func.func @huge_heads(%q: memref<1x2147483647x1x64xf16>, %k: memref<1x1x?x64xf16>,
                      %v: memref<1x1x?x64xf16>, %o: memref<1x2147483647x1x64xf16>) {
  attn.attention q(%q : memref<1x2147483647x1x64xf16>) k(%k : memref<1x1x?x64xf16>)
                 v(%v : memref<1x1x?x64xf16>) -> o(%o : memref<1x2147483647x1x64xf16>)
  return
}
func.func @million_heads(%q: memref<1x1000000x1x64xf16>, %k: memref<1x1x?x64xf16>,
                         %v: memref<1x1x?x64xf16>, %o: memref<1x1000000x1x64xf16>) {
  attn.attention q(%q : memref<1x1000000x1x64xf16>) k(%k : memref<1x1x?x64xf16>)
                 v(%v : memref<1x1x?x64xf16>) -> o(%o : memref<1x1000000x1x64xf16>)
  return
}
func.func @huge_block(%q: memref<?x8x1x128xf16>, %k: memref<?x8x1048576x128xf16>,
                      %v: memref<?x8x1048576x128xf16>, %table: memref<?x?xi32>,
                      %lens: memref<?xi32>, %o: memref<?x8x1x128xf16>) {
  attn.attention q(%q : memref<?x8x1x128xf16>) k(%k : memref<?x8x1048576x128xf16>)
                 v(%v : memref<?x8x1048576x128xf16>)
                 block_table(%table : memref<?x?xi32>) kv_lens(%lens : memref<?xi32>)
                 -> o(%o : memref<?x8x1x128xf16>)
  return
}
