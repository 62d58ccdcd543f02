// attn.merge_states on the CPU. Each RUN compiles one kernel with
// attn-to-cpu and runs it on fresh random parts: about one (part, row) in
// five is empty (LSE -inf, its O NaN, which must not be read) and every
// part of the rows r % 11 == 5 is, so rows with one, some and no
// non-empty part all occur. O and the LSE are NaN-poisoned first and
// compared with the float64 reference merge; an empty row must be O = 0,
// LSE = -inf exactly (attn-run prints PASS and exits 0 only then).
// --batch is the part count N and --q-len the row count T where dynamic.
// attn-run fails a run of more than 5 rows that has no empty row.
//
// RUN: attn-run %s --func=two_f32 --q-len=37 | FileCheck %s
// RUN: attn-run %s --func=two_f32 --q-len=1 --seed=3 | FileCheck %s
// RUN: attn-run %s --func=dynamic_f16 --batch=5 --q-len=23 | FileCheck %s
// RUN: attn-run %s --func=dynamic_f16 --batch=1 --q-len=12 | FileCheck %s
// RUN: attn-run %s --func=f32_into_bf16 --batch=3 --q-len=19 | FileCheck %s
// RUN: attn-run %s --func=flashinfer_layout --batch=4 --q-len=15 | FileCheck %s
// RUN: attn-run %s --func=heads_as_rows --q-len=6 | FileCheck %s

// CHECK: empty_rows={{[0-9]+}} rel_err={{.*}} empty_wrong=0 unwritten=0 PASS

func.func @two_f32(%op: memref<2x?x4x64xf32>, %lp: memref<2x?x4xf32>,
                   %o: memref<?x4x64xf32>, %l: memref<?x4xf32>) {
  attn.merge_states o_parts(%op : memref<2x?x4x64xf32>) lse_parts(%lp : memref<2x?x4xf32>)
                 -> o(%o : memref<?x4x64xf32>) lse(%l : memref<?x4xf32>)
  return
}

func.func @dynamic_f16(%op: memref<?x?x8x128xf16>, %lp: memref<?x?x8xf32>,
                       %o: memref<?x8x128xf16>, %l: memref<?x8xf32>) {
  attn.merge_states o_parts(%op : memref<?x?x8x128xf16>) lse_parts(%lp : memref<?x?x8xf32>)
                 -> o(%o : memref<?x8x128xf16>) lse(%l : memref<?x8xf32>)
  return
}

// f32 partials into a bf16 result, no LSE out.
func.func @f32_into_bf16(%op: memref<?x?x2x96xf32>, %lp: memref<?x?x2xf32>,
                         %o: memref<?x2x96xbf16>) {
  attn.merge_states o_parts(%op : memref<?x?x2x96xf32>) lse_parts(%lp : memref<?x?x2xf32>)
                 -> o(%o : memref<?x2x96xbf16>)
  return
}

// FlashInfer's layout: parts [T, N, H, Dv] and LSE [T, N, H], seen as
// [N, T, H, Dv] through strides; the LSE out [H, T] (vLLM's).
func.func @flashinfer_layout(%op: memref<?x?x4x32xf16, strided<[128, ?, 32, 1]>>,
                             %lp: memref<?x?x4xf32, strided<[4, ?, 1]>>,
                             %o: memref<?x4x32xf16>,
                             %l: memref<?x4xf32, strided<[1, ?]>>) {
  attn.merge_states o_parts(%op : memref<?x?x4x32xf16, strided<[128, ?, 32, 1]>>)
                    lse_parts(%lp : memref<?x?x4xf32, strided<[4, ?, 1]>>)
                 -> o(%o : memref<?x4x32xf16>) lse(%l : memref<?x4xf32, strided<[1, ?]>>)
  return
}

// attn.attention's [B, Hq, Sq, Dv] O seen as [B * Hq, Sq, Dv]: T = B * Hq
// rows of Sq = 16 "heads".
func.func @heads_as_rows(%op: memref<3x?x16x64xbf16>, %lp: memref<3x?x16xf32>,
                         %o: memref<?x16x64xbf16>, %l: memref<?x16xf32>) {
  attn.merge_states o_parts(%op : memref<3x?x16x64xbf16>) lse_parts(%lp : memref<3x?x16xf32>)
                 -> o(%o : memref<?x16x64xbf16>) lse(%l : memref<?x16xf32>)
  return
}
