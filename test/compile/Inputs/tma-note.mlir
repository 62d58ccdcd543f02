// Prefill specs whose K/V no tensor map can read (tma-note.test).
func.func @paged(%q: memref<?x32x?x128xf16>, %k: memref<?x8x16x128xf16>,
                 %v: memref<?x8x16x128xf16>, %bt: memref<?x?xi32>,
                 %lens: memref<?xi32>, %o: memref<?x32x?x128xf16>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x16x128xf16>)
                 v(%v : memref<?x8x16x128xf16>) block_table(%bt : memref<?x?xi32>)
                 kv_lens(%lens : memref<?xi32>) -> o(%o : memref<?x32x?x128xf16>)
                 mask = <causal, bottom_right>
  return
}
func.func @lens(%q: memref<?x32x?x128xf16>, %k: memref<?x8x?x128xf16>,
                %v: memref<?x8x?x128xf16>, %lens: memref<?xi32>,
                %o: memref<?x32x?x128xf16>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) kv_lens(%lens : memref<?xi32>)
                 -> o(%o : memref<?x32x?x128xf16>)
  return
}
// Q by TMA where K/V come by TMA: its box of 128 rows is whole queries of
// a 4-head group, or (128 of 256 heads) part of one query's group; a
// 3-head group's queries do not tile 128 rows, so Q comes by cp.async.
func.func @gqa4(%q: memref<?x32x?x128xf16>, %k: memref<?x8x?x128xf16>,
                %v: memref<?x8x?x128xf16>, %o: memref<?x32x?x128xf16>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x32x?x128xf16>)
  return
}
func.func @group256(%q: memref<?x256x?x128xf16>, %k: memref<?x1x?x128xf16>,
                    %v: memref<?x1x?x128xf16>, %o: memref<?x256x?x128xf16>) {
  attn.attention q(%q : memref<?x256x?x128xf16>) k(%k : memref<?x1x?x128xf16>)
                 v(%v : memref<?x1x?x128xf16>) -> o(%o : memref<?x256x?x128xf16>)
  return
}
func.func @gqa3(%q: memref<?x24x?x128xf16>, %k: memref<?x8x?x128xf16>,
                %v: memref<?x8x?x128xf16>, %o: memref<?x24x?x128xf16>) {
  attn.attention q(%q : memref<?x24x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x24x?x128xf16>)
  return
}
// O leaves by a TMA store where Q comes by TMA and O's elements are
// 16-bit, as Q's staging layout holds them; an f32 O is stored by rows.
func.func @out_f32(%q: memref<?x32x?x128xf16>, %k: memref<?x8x?x128xf16>,
                   %v: memref<?x8x?x128xf16>, %o: memref<?x32x?x128xf32>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x32x?x128xf32>)
  return
}
// A spec's own pipeline choices: one warp role at 128 rows, and Q and O by
// the threads' copies; the note names the spec's fields.
func.func @one_role(%q: memref<?x32x?x128xf16>, %k: memref<?x8x?x128xf16>,
                    %v: memref<?x8x?x128xf16>, %o: memref<?x32x?x128xf16>) {
  attn.attention q(%q : memref<?x32x?x128xf16>) k(%k : memref<?x8x?x128xf16>)
                 v(%v : memref<?x8x?x128xf16>) -> o(%o : memref<?x32x?x128xf16>)
                 schedule = <block_q = 128, block_kv = 128, producer = off, q_load = threads>
  return
}
