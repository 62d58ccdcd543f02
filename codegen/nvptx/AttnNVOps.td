//===- AttnNVOps.td - attn_nv: the NVIDIA tile instructions -*- tablegen -*-===//
//
// The instruction level of the NVIDIA tiers: one op per tensor-core step
// that upstream's nvgpu and nvvm ops do not spell the way the kernels need
// it (a 16x16 mma.sync tile product on packed registers, ldmatrix packed
// into the registers mma.sync reads, wgmma with A in registers, operand
// fences). The tier passes build them; attn-nv-to-nvvm expands each with
// one pattern into nvvm, nvgpu, vector and inline PTX, so the struct
// extracts and register pins appear only after that lowering.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_NVPTX_ATTNNVOPS_TD
#define ATTN_CODEGEN_NVPTX_ATTNNVOPS_TD

include "dialect/AttnBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def AttnNV_Dialect : Dialect {
  let name = "attn_nv";
  let cppNamespace = "::mlir::attn::nv";
  let summary = "attn's NVIDIA tile instructions";
  let description = [{
    The tensor-core instructions of attn's NVIDIA tiers, on the register
    fragments the PTX ISA documents:

    - an *A or B fragment* is `vector<4xi32>`: the four 32-bit registers
      of a 16x16 tile of 16-bit elements (f16 or bf16 pairs) that
      `ldmatrix.x4` loads and `mma.sync` reads;
    - an *accumulator* is `vector<8xf32>`: a thread's eight elements of a
      16x16 f32 tile in mma.sync's m16n8 C layout (element `e` at row
      `lane / 4 + 8 * ((e / 2) % 2)`, column
      `2 * (lane % 4) + 8 * (e / 4) + e % 2`). wgmma's 64 x N accumulators
      are the same tiles, N / 16 of them per thread (warp `w` of the
      warpgroup holding rows 16w..16w+15).

    The tier passes (attn-to-mma, attn-to-wgmma, attn-to-decode) build
    these ops; `attn-nv-to-nvvm` expands each into nvvm, nvgpu, vector and
    inline PTX.
  }];
}

class AttnNV_Op<string mnemonic, list<Trait> traits = []>
    : Op<AttnNV_Dialect, mnemonic, traits>;

def AttnNV_Fragment : VectorOfLengthAndType<[4], [I32]>,
    BuildableType<"::mlir::VectorType::get({4}, $_builder.getI32Type())">;
def AttnNV_Accumulator : VectorOfLengthAndType<[8], [F32]>,
    BuildableType<"::mlir::VectorType::get({8}, $_builder.getF32Type())">;
def AttnNV_InputType : TypeAttrOf<AnyTypeOf<[F16, BF16]>>;

def AttnNV_TileLayout : I32EnumAttr<"TileLayout",
    "how a tile's rows sit in shared memory", [
      I32EnumAttrCase<"Plain", 0, "plain">,
      I32EnumAttrCase<"Swizzled", 1, "swizzled">,
      I32EnumAttrCase<"Blocked", 2, "blocked">,
      I32EnumAttrCase<"Bytes", 3, "bytes">]> {
  let cppNamespace = "::mlir::attn::nv";
  let description = [{
    `plain`: row r, column c at [r, c] (rows may be padded past the
    tile's width). `swizzled`: each 128 bytes of a row have their 16-byte
    chunks permuted by the row, element (r, c) at column c ^ 8 (r % 8),
    so ldmatrix and cp.async hit distinct banks. `blocked`: 64-column
    blocks of the tile's rows one after another (wgmma's 128-byte swizzle
    atoms), element (r, c) at [(c / 64) * rows + r, (c % 64) ^ 8 (r % 8)].
    `bytes`: a quantized cache's one-byte elements, rows unpadded, 16-byte
    chunk k of row r at chunk k ^ byteChunkSwizzle(r) (TileMMA.h), so the
    mma.sync fragments decoded from it (ByteFragments.h) read distinct
    banks.
  }];
}

def AttnNV_CopyTileOp : AttnNV_Op<"copy_tile"> {
  let summary = "a block's threads copy a tile of rows into shared memory, "
                "16 bytes at a time";
  let description = [{
    `rows` rows of `width` elements go from `src` into `dst`, laid out as
    `layout` says, in 16-byte chunks (8 two-byte elements or 16 one-byte
    ones, `n`): chunk `c` (row `c / (width / n)`)
    is thread `thread`'s for `c = thread + i * threads`; threads past the
    last chunk copy nothing. The region maps a row of the tile to its
    source: whether it exists, then `src`'s indices but the last (the
    column). A row that does not exist, and the columns past
    `src_width` (padding), are written as zeros. With `async` each chunk
    is a `cp.async` (zero-filled by a 0-byte source; the caller commits
    and waits), else a 16-byte load and store.

    ```mlir
    attn_nv.copy_tile %k -> %kTile swizzled async thread %tid
        {rows = 64 : i64, src_width = 128 : i64, threads = 128 : i64,
         width = 128 : i64}
        : memref<?x8x?x128xf16> -> memref<64x128xf16, 3> {
    ^bb0(%row: index):
      ...
      attn_nv.yield %exists, %batch, %head, %key : i1, index, index, index
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$src,
                   Arg<MemRefRankOf<[F16, BF16, I8, F8E4M3FN, F8E5M2], [2]>,
                       "", [MemWrite]>:$dst,
                   Index:$thread, I64Attr:$threads, I64Attr:$rows,
                   I64Attr:$width, I64Attr:$src_width,
                   AttnNV_TileLayout:$layout, UnitAttr:$async);
  let regions = (region SizedRegion<1>:$source);
  let assemblyFormat = [{
    $src `->` $dst $layout (`async` $async^)? `thread` $thread attr-dict `:`
    type($src) `->` type($dst) $source
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let extraClassDeclaration = [{
    /// Elements a 16-byte chunk: 8 or 16.
    int64_t chunkElements() {
      return 128 / getDst().getType().getElementType()
                       .getIntOrFloatBitWidth();
    }
  }];
  let builders = [
    OpBuilder<(ins "Value":$src, "Value":$dst, "Value":$thread,
                   "int64_t":$threads, "int64_t":$rows, "int64_t":$width,
                   "int64_t":$srcWidth, "TileLayout":$layout, "bool":$async)>
  ];
}

def AttnNV_ForEachChunkOp : AttnNV_Op<"for_each_chunk"> {
  let summary = "a thread's share of a tile's chunks: the body once per chunk";
  let description = [{
    A tile of `rows` rows from `first_row`, `width` columns, is cut into
    chunks of `chunk` columns (16 bytes of its elements), dealt to
    `threads` threads: chunk `c = thread + i * threads` (for each i some
    thread has) is row `first_row + c / (width / chunk)`, column
    `(c % (width / chunk)) * chunk`. The body runs, with that row and
    column, for each of this thread's chunks whose row exists
    (`row_base + row < row_limit`) and, on the last round, that exists
    at all.

    ```mlir
    attn_nv.for_each_chunk thread %lane of 32 rows(%warp_row, 32)
        width 128 chunk 8 limit(%row0, %rows) {
    ^bb0(%row: index, %col: index):
      ...
      attn_nv.yield
    }
    ```
  }];
  let arguments = (ins Index:$thread, I64Attr:$threads, Index:$first_row,
                   I64Attr:$rows, I64Attr:$width, I64Attr:$chunk,
                   Index:$row_base, Index:$row_limit);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `thread` $thread `of` $threads `rows` `(` $first_row `,` $rows `)`
    `width` $width `chunk` $chunk `limit` `(` $row_base `,` $row_limit `)`
    attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def AttnNV_YieldOp : AttnNV_Op<"yield",
    [Pure, ReturnLike, Terminator,
     ParentOneOf<["CopyTileOp", "ForEachChunkOp"]>]> {
  let summary = "ends a copy_tile's source (whether the row exists, its "
                "indices) or a for_each_chunk's body (nothing)";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def AttnNV_MmaTileOp : AttnNV_Op<"mma_tile", [Pure]> {
  let summary = "a 16x16x16 warp tile product: two mma.sync m16n8k16";
  let description = [{
    `d = a * b + c` for a 16x16 tile: `a` row-major and `b` column-major
    fragments of `inputs` (f16 or bf16) elements, `c` and `d` f32
    accumulators. It is two `mma.sync.aligned.m16n8k16` (columns 0-7 from
    b's registers 0-1, columns 8-15 from 2-3), which every lane of the
    warp runs together.

    ```mlir
    %d = attn_nv.mma_tile %a, %b, %c : f16
    ```
  }];
  let arguments = (ins AttnNV_Fragment:$a, AttnNV_Fragment:$b,
                   AttnNV_Accumulator:$c, AttnNV_InputType:$inputs);
  let results = (outs AttnNV_Accumulator:$d);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict `:` $inputs";
}

def AttnNV_LdMatrixOp : AttnNV_Op<"ldmatrix", [AttrSizedOperandSegments]> {
  let summary = "four 8x8 matrices from shared memory, as an A or B fragment";
  let description = [{
    `ldmatrix.sync.aligned.x4` (optionally `.trans`): each lane gives the
    address of row `lane % 8` of matrix `lane / 8`, and gets register `i`
    of the fragment from matrix `i`. `src` is a 2-D memref of 16-bit
    elements in shared memory (address space 3).

    Without `lane`, `indices` is the lane's own address. With
    `lane [%r, %c]`, `indices` is the 16x16 tile's first row and column
    and the lane's address is `src[row + r][col + c]`; `swizzle %mask`
    then reads the mma tier's swizzled layout, the column XORed with
    `mask` (8 (row % 8), inside each 64-element group of a row whose width
    is a multiple of 64). A constant `col` keeps its 64-element group out
    of the XOR, so it stays an address immediate.

    ```mlir
    %a = attn_nv.ldmatrix %tile[%row, %col] : memref<64x128xf16, 3>
    %b = attn_nv.ldmatrix %tile[%row, %col] transpose : memref<64x128xf16, 3>
    %c = attn_nv.ldmatrix %tile[%row, %c16] lane [%r, %c] swizzle %mask
         : memref<64x128xf16, 3>
    ```
  }];
  let arguments = (ins Arg<MemRefRankOf<[F16, BF16], [2]>, "", [MemRead]>:$src,
                   Variadic<Index>:$indices, Variadic<Index>:$lane,
                   Optional<Index>:$swizzle, UnitAttr:$transpose);
  let results = (outs AttnNV_Fragment:$fragment);
  let assemblyFormat =
      "$src `[` $indices `]` (`lane` ` ` `[` $lane^ `]`)? "
      "(`swizzle` $swizzle^)? (`transpose` $transpose^)? attr-dict `:` "
      "type($src)";
  let hasVerifier = 1;
}

def AttnNV_WgmmaOp : AttnNV_Op<"wgmma",
                               [AttrSizedOperandSegments]> {
  let summary = "a warpgroup's 64 x N product, issued as one wgmma group";
  let description = [{
    `wgmma.fence`, then `k / 16` chained `wgmma.mma_async.m64nNk16` (f32
    accumulators, `inputs` operands, N = 16 * the number of results), then
    `wgmma.commit_group`. The results are in flight: they may be read only
    after `nvvm.wgmma.wait.group.sync.aligned` and an
    `attn_nv.fence_registers` that pins them.

    B is a shared tile in the tier's 128-byte-swizzled blocks of 64
    columns at byte offset `b_tile` from the shared window whose address is
    `base`, read through matrix descriptors:
    - without `a`, B is K-major (Q·Kᵀ's K: rows of k elements) and so is
      A, at byte offset `a_tile` (its first row), its 64-column blocks
      `a_rows` rows apart; the result starts from zero.
    - with `a` (k / 16 A fragments, mma.sync's A layout: P), B is
      MN-major (V: k rows of N elements), and the product adds to `acc`
      (N / 16 accumulators).

    ```mlir
    %s:4 = attn_nv.wgmma %base a_tile %q b_tile %k {a_rows = 128 : i64, k = 128 : i64}
        : f16 -> vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
    %o:4 = attn_nv.wgmma %base a(%p0, %p1, %p2, %p3) acc(%o0, %o1, %o2, %o3)
        b_tile %v {k = 64 : i64}
        : f16 -> vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>
    ```
  }];
  let arguments = (ins I64:$base, Optional<Index>:$a_tile, Index:$b_tile,
                   Variadic<AttnNV_Fragment>:$a,
                   Variadic<AttnNV_Accumulator>:$acc,
                   I64Attr:$k, OptionalAttr<I64Attr>:$a_rows,
                   AttnNV_InputType:$inputs);
  let results = (outs Variadic<AttnNV_Accumulator>:$d);
  let assemblyFormat = [{
    $base (`a_tile` $a_tile^)? (`a` `(` $a^ `)`)? (`acc` `(` $acc^ `)`)?
    `b_tile` $b_tile attr-dict `:` $inputs `->` type($d)
  }];
  let hasVerifier = 1;
}

def AttnNV_OnlineSoftmaxOp : AttnNV_Op<"online_softmax",
    [Pure, AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "one K/V tile's online-softmax step on a warp's 16 rows, "
                "in registers";
  let description = [{
    The register score stage's step for one 16-row m-tile: `scores` are
    the thread's accumulators of the tile's N / 16 column tiles (its two
    rows, `top` = lane / 4 and `bottom` = lane / 4 + 8, two columns per 8
    keys), masked (a hidden key is -inf). With `scale` they are raw dot
    products and the base-2 logit is `scale * dot` (scale > 0, so the
    mask and the maximum work on the dots); without, they are base-2
    logits. `m_*` and `l_*` are the rows' running state.

    For each row: the tile's maximum over the quad's lanes (xor shuffles
    1 and 2); a lazy rescale, the reference `m` moving to that maximum
    only where it passes `m + 8` (p = 2^(s - m) stays at most 256,
    which f16, bf16 and the f32 sums hold); `p = 2^(s - m')`;
    `alpha = 2^(m - m')` where m moved (0 from -inf), else exactly 1;
    `l' = l * alpha + sum(p)` over the thread's own columns (the quad's
    sum is taken once, in the epilogue).

    With `weights` (one accumulator-layout tile per score tile: a
    quantized cache's V scale of each key), P V's fragments hold `p`
    times its weight, rounded once; `l` sums the unweighted `p`.

    Results: P rounded to `inputs` as A fragments of P V (the accumulator
    and A layouts agree), the new state, `alpha` broadcast in accumulator
    layout (rows top and bottom), and `moved`: whether either row's
    reference moved, or `moved_before` was true (the warp's earlier
    m-tiles'), so one branch skips every rescale of O.

    ```mlir
    %p:8, %m0, %m1, %l0, %l1, %alpha, %moved = attn_nv.online_softmax
        %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7
        state(%m_top, %m_bottom, %l_top, %l_bottom)
        {scale = 0.1275 : f64} : f16
    ```
  }];
  let arguments = (ins Variadic<AttnNV_Accumulator>:$scores, F32:$m_top,
                   F32:$m_bottom, F32:$l_top, F32:$l_bottom,
                   Optional<I1>:$moved_before,
                   Variadic<AttnNV_Accumulator>:$weights,
                   OptionalAttr<F64Attr>:$scale,
                   AttnNV_InputType:$inputs);
  let results = (outs Variadic<AttnNV_Fragment>:$p, F32:$new_m_top,
                 F32:$new_m_bottom, F32:$new_l_top, F32:$new_l_bottom,
                 AttnNV_Accumulator:$alpha, I1:$moved);
  let assemblyFormat = [{
    $scores `state` `(` $m_top `,` $m_bottom `,` $l_top `,` $l_bottom `)`
    (`moved` $moved_before^)? (`weights` `(` $weights^ `)`)? attr-dict `:`
    $inputs
  }];
  let hasVerifier = 1;
}

def AttnNV_MaskAttr : Attr<CPred<"::llvm::isa<::mlir::attn::MaskAttr>($_self)">,
                            "an #attn.mask"> {
  let storageType = "::mlir::attn::MaskAttr";
  let returnType = "::mlir::attn::MaskAttr";
  let convertFromStorage = "$_self";
}

def AttnNV_MaskTileOp : AttnNV_Op<"mask_tile",
    [AttrSizedOperandSegments, IsolatedFromAbove, RecursiveMemoryEffects,
     Attn_HoldsModRegion, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a mask on a warp's 16-row score tile in registers";
  let description = [{
    Hides (sets to -inf) each element of the thread's score accumulators
    whose query does not see its key under `mask` (attn.mask's rules, plus
    key < `kv_len`), in mma.sync's C layout: element `e` of tile `t` is
    flat row `row + 8 * ((e / 2) % 2)` of the K/V head's rows (query
    `row / group`: `group` query heads share the K/V head) and key
    `key_base + (lane_column + 16 t + 8 * (e / 4) + e % 2)`. `q_len` and
    `kv_len` are the sequence's (a bottom-right mask aligns the last
    query with the last key).

    With a `mask_mod` region (attn.attention's, its rules and arguments:
    `(b, h, q_idx, kv_idx, captures...) -> i1`), an element the built-in
    mask shows is hidden too where the region yields false, evaluated at
    batch `batch`, query head `kv_head * group + row % group`, query
    `row / group` and the key, its captures the op's `captures`; q_idx
    and kv_idx are clamped to 0 outside the sequence where the region
    addresses memory with them.

    ```mlir
    %m:2 = attn_nv.mask_tile %s0, %s1 rows(%row) keys(%j, %col)
        sizes(%q_len, %kv_len) {group = 4 : i64, mask = #attn.mask<causal>}
    %d = attn_nv.mask_tile %s0 rows(%row) keys(%j, %col)
        sizes(%q_len, %kv_len) at(%b, %kvh) captures(%doc : memref<4096xi32>)
        {group = 4 : i64, mask = #attn.mask<causal>} mask_mod {
    ^bb0(%bb: index, %h: index, %i: index, %jj: index, %ids: memref<4096xi32>):
      ...
      attn.yield %same : i1
    }
    ```
  }];
  let arguments = (ins Variadic<AttnNV_Accumulator>:$scores, Index:$row,
                   Index:$key_base, Index:$lane_column, Index:$q_len,
                   Index:$kv_len, Optional<Index>:$batch,
                   Optional<Index>:$kv_head, Variadic<AnyMemRef>:$captures,
                   AttnNV_MaskAttr:$mask, I64Attr:$group);
  let results = (outs Variadic<AttnNV_Accumulator>:$masked);
  let regions = (region AnyRegion:$mask_mod);
  let assemblyFormat = [{
    $scores `rows` `(` $row `)` `keys` `(` $key_base `,` $lane_column `)`
    `sizes` `(` $q_len `,` $kv_len `)`
    (`at` `(` $batch^ `,` $kv_head `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    (`mask_mod` $mask_mod^)?
  }];
  let hasVerifier = 1;
}

def AttnNV_ScoreTileOp : AttnNV_Op<"score_tile",
    [AttrSizedOperandSegments, IsolatedFromAbove, RecursiveMemoryEffects,
     Attn_HoldsModRegion, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a score_mod on a warp's 16-row tile of dot products";
  let description = [{
    The scores of the thread's dot-product accumulators (mma.sync's C
    layout) under attn.qk's transform and a `score_mod` region
    (attn.attention's, `(score, b, h, q_idx, kv_idx, captures...) -> f32`),
    in base-2 units: `log2(e) * score_mod(cap(scale * dot), ...)`, with
    `cap(x) = softcap * tanh(x / softcap)` where `softcap` is given.
    Element `e` of tile `t` is flat row
    `row0 + (warp_row + (lane_row + (m_offset + 8 * ((e / 2) % 2))))` of
    the K/V head's rows (query head `kv_head * group + row % group`, query
    `row / group`) and key
    `key_base + (lane_column + (16 t + 8 * (e / 4) + e % 2))`; the region
    runs at batch `batch` with the op's `captures`, q_idx and kv_idx
    clamped to 0 outside the sequence (`q_len`, `kv_len`) where it
    addresses memory with them.

    ```mlir
    %s:2 = attn_nv.score_tile %d0, %d1 rows(%row0, %warp_row, %lane_row)
        keys(%j, %col) sizes(%q_len, %kv_len) at(%b, %kvh)
        captures(%slopes : memref<8xf32>)
        {group = 1 : i64, m_offset = 0 : i64, scale = 0.125 : f64} score_mod {
    ^bb0(%s: f32, %bb: index, %h: index, %i: index, %jj: index, %sl: memref<8xf32>):
      ...
      attn.yield %r : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AttnNV_Accumulator>:$dots, Index:$row0,
                   Index:$warp_row, Index:$lane_row, Index:$key_base,
                   Index:$lane_column, Index:$q_len, Index:$kv_len,
                   Index:$batch, Index:$kv_head,
                   Variadic<AnyMemRef>:$captures, F64Attr:$scale,
                   OptionalAttr<F64Attr>:$softcap, I64Attr:$group,
                   I64Attr:$m_offset);
  let results = (outs Variadic<AttnNV_Accumulator>:$scores);
  let regions = (region SizedRegion<1>:$score_mod);
  let assemblyFormat = [{
    $dots `rows` `(` $row0 `,` $warp_row `,` $lane_row `)`
    `keys` `(` $key_base `,` $lane_column `)`
    `sizes` `(` $q_len `,` $kv_len `)` `at` `(` $batch `,` $kv_head `)`
    (`captures` `(` $captures^ `:` type($captures) `)`)? attr-dict
    `score_mod` $score_mod
  }];
  let hasVerifier = 1;
}

def AttnNV_StoreAccumulatorOp : AttnNV_Op<"store_accumulator"> {
  let summary = "a thread's accumulator of a 16x16 tile into shared memory";
  let description = [{
    Writes the thread's eight elements of `acc` (mma.sync's C layout) to
    `dst`'s 16x16 tile at [`row`, `col`], rounded to `dst`'s element type
    (f32, f16 or bf16), as four 2-element stores: elements 4h + 2s and
    4h + 2s + 1 at row `row + lane_row + 8 s`, column
    `col + lane_column + 8 h` (`lane_row` = lane / 4, `lane_column` =
    2 (lane % 4)). With `swizzled`, the column is permuted by the row as
    in a swizzled tile (c ^ 8 (r % 8)).

    ```mlir
    attn_nv.store_accumulator %acc -> %stage[%row, %col] lanes(%g, %t2)
        swizzled : memref<256x64xf16, 3>
    ```
  }];
  let arguments = (ins AttnNV_Accumulator:$acc,
                   Arg<MemRefRankOf<[F32, F16, BF16], [2]>, "",
                       [MemWrite]>:$dst,
                   Index:$row, Index:$col, Index:$lane_row,
                   Index:$lane_column, UnitAttr:$swizzled);
  let assemblyFormat = [{
    $acc `->` $dst `[` $row `,` $col `]` `lanes` `(` $lane_row `,`
    $lane_column `)` (`swizzled` $swizzled^)? attr-dict `:` type($dst)
  }];
}

def AttnNV_FenceRegistersOp : AttnNV_Op<"fence_registers",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "pins register values across a wgmma fence or wait";
  let description = [{
    Returns its operands unchanged through one empty inline asm with side
    effects that reads and writes every element, so the compiler computes
    them before this point and reads the results after it (CUTLASS's
    `warpgroup_fence_operand`): wgmma reads its register operands and
    writes its accumulators asynchronously, outside the data flow LLVM
    sees. The operands are vectors of one type, of f32 or i32.

    ```mlir
    %acc:2 = attn_nv.fence_registers %a0, %a1 : vector<8xf32>, vector<8xf32>
    ```
  }];
  let arguments = (ins Variadic<VectorOfRankAndType<[1], [F32, I32]>>:$values);
  let results = (outs Variadic<VectorOfRankAndType<[1], [F32, I32]>>:$pinned);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

#endif // ATTN_CODEGEN_NVPTX_ATTNNVOPS_TD
