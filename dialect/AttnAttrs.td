//===- AttnAttrs.td - attn attributes ----------------------*- tablegen -*-===//

#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "dialect/AttnBase.td"

def Attn_MaskKind : I32EnumAttr<"MaskKind", "which key positions a query sees", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Causal", 1, "causal">,
    I32EnumAttrCase<"Window", 2, "window">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskAlign : I32EnumAttr<"MaskAlign",
    "where query row 0 sits on the key axis when Sq != Sk", [
    I32EnumAttrCase<"TopLeft", 0, "top_left">,
    I32EnumAttrCase<"BottomRight", 1, "bottom_right">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_MaskAttr : Attn_Attr<"Mask", "mask"> {
  let summary = "attention mask: none, causal or sliding window";
  let description = [{
    Query row `i` sees key column `j` when

        i + shift - left <= j <= i + shift + right

    with `shift = 0` for `top_left` alignment and `shift = Sk - Sq` for
    `bottom_right` (Sk is the sequence's own K/V length when the op has
    `kv_lens`). `causal` is `left = inf, right = 0`; `window` gives both
    extents explicitly (FlashAttention's `window_size=(left, right)`).

    Syntax:

    ```mlir
    #attn.mask<none>
    #attn.mask<causal>                          // top-left aligned
    #attn.mask<causal, bottom_right>
    #attn.mask<window 4096, 0, bottom_right>    // left 4096, right 0
    ```
  }];
  let parameters = (ins
    "::mlir::attn::MaskKind":$kind,
    "::mlir::attn::MaskAlign":$align,
    "int64_t":$left,
    "int64_t":$right);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Unbounded extent: `causal` and `none` use it for their open sides.
    static constexpr int64_t kUnbounded = -1;
    /// Largest window extent: the longest sequence (dims are < 2^31).
    static constexpr int64_t kMaxWindow = 2147483647;
    static MaskAttr getNone(::mlir::MLIRContext *ctx);
    bool isNone() const { return getKind() == MaskKind::None; }
    bool isBottomRight() const { return getAlign() == MaskAlign::BottomRight; }
    bool hasLeftBound() const { return getLeft() != kUnbounded; }
    bool hasRightBound() const { return getRight() != kUnbounded; }
  }];
}

def Attn_Tier : I32EnumAttr<"Tier", "the NVIDIA tier that lowers an L1 nest", [
    I32EnumAttrCase<"WMMA", 0, "wmma">,
    I32EnumAttrCase<"MMA", 1, "mma">,
    I32EnumAttrCase<"Decode", 2, "decode">,
    I32EnumAttrCase<"Copy", 3, "copy">,
    I32EnumAttrCase<"WGMMA", 4, "wgmma">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_TierAttr : EnumAttr<Attn_Dialect, Attn_Tier, "tier"> {
  let summary = "which NVIDIA tier lowers an attention op's loop nest";
  let description = [{
    `attn-select-tier` sets `attn.tier` on each `attn.attention`;
    `attn-tile` copies it onto the op's loop nest, and each tier's pass
    (`attn-to-wmma`, `attn-to-mma`, `attn-to-wgmma`, `attn-to-decode`) lowers the nests
    marked with its own tier.

    - `wmma`: WMMA m16n16k16 tensor cores with the scores staged through
      shared memory (sm_75+);
    - `mma`: mma.sync m16n8k16 and ldmatrix with the scores and the online
      softmax in registers (sm_80+);
    - `wgmma`: Hopper's warpgroup MMA (wgmma.mma_async) with Q, K and V
      read from shared memory through matrix descriptors, P from registers,
      and the register score stage (sm_90a only);
    - `decode`: split-K SIMT kernels for few query rows per K/V head;
    - `copy`: the memory-bound vector kernels of `attn.cache_append` and
      `attn.merge_states` (the tier of their launch contracts; no attention
      op is lowered by it).

    ```mlir
    attn.attention ... {attn.tier = #attn.tier<mma>}
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Attn_Toggle : I32EnumAttr<"Toggle",
    "a schedule choice that is on, off, or left to the passes", [
    I32EnumAttrCase<"Auto", 0, "auto">,
    I32EnumAttrCase<"Off", 1, "off">,
    I32EnumAttrCase<"On", 2, "on">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_Transfer : I32EnumAttr<"Transfer",
    "what moves a tile between global and shared memory", [
    I32EnumAttrCase<"Auto", 0, "auto">,
    I32EnumAttrCase<"Threads", 1, "threads">,
    I32EnumAttrCase<"Tma", 2, "tma">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

// An enum field of the schedule whose default, `auto`, is not printed.
class Attn_ScheduleChoice<EnumAttrInfo info> : EnumParameter<info> {
  let defaultValue = info.cppNamespace # "::" # info.className # "::Auto";
}

def Attn_ScheduleAttr : Attn_Attr<"Schedule", "schedule"> {
  let summary = "how attn-tile tiles one attention op, and how a GPU tier runs it";
  let description = [{
    `block_q` query rows and `block_kv` key rows per tile step. Under GQA a
    Q tile's rows are (query, head-in-group) pairs, query-major, so the heads
    of a group share every K/V tile.

    For the NVIDIA prefill tiers, `warps` per block and `stages` of K/V
    tiles in flight (cp.async buffers). Warps first split the Q tile's rows
    (16 rows at least, two 16-row m-tiles at most per warp on the mma tier);
    warps beyond one per 16 rows split each K/V tile's keys among groups of
    warps, whose softmax states are merged at the end (mma tier), which
    shortens each warp's chain of tiles on grids too small to fill the GPU.

    The decode tier's SIMT split kernel (few rows a K/V head) takes
    `warps` x 32 threads, `stages` trips of K/V slices in flight
    (cp.async, sm_80+; 1 loads them directly) and `unroll` keys per key
    group per trip (1 to 8).

    The wgmma tier's pipeline (sm_90a):
    - `kv_load`, `q_load`: `tma` (the tensor memory accelerator, from
      tensor maps; Q's only where K/V's are) or `threads` (cp.async);
    - `o_store`: `tma` (a TMA store of O's staged tile, where Q comes by
      TMA) or `threads` (16-byte stores);
    - `producer`: `on`, a producer warpgroup issues every K/V copy and
      two or more consumer warpgroups compute (K/V by TMA, two or more
      stages);
    - `qk_ahead`: Q K^T a tile ahead of the softmax (under a producer up
      to D128; without one, three or more stages);
    - `ping_pong`: the two consumer warpgroups take turns (under a
      producer with Q K^T ahead).

    A value of 0 or `auto` leaves the choice to the passes (the target
    GPU, measured defaults). attn-select-tier writes every field its tier
    reads, so the IR after it says what the kernel does; a choice the spec
    makes that the tier cannot honour is a remark saying why, and the field
    then says what the tier does instead.

    ```mlir
    #attn.schedule<block_q = 64, block_kv = 32>
    #attn.schedule<block_q = 64, block_kv = 128, warps = 8, stages = 2>
    #attn.schedule<block_q = 128, block_kv = 128, producer = off>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "0">:$block_q,
    DefaultValuedParameter<"int64_t", "0">:$block_kv,
    DefaultValuedParameter<"int64_t", "0">:$warps,
    DefaultValuedParameter<"int64_t", "0">:$stages,
    DefaultValuedParameter<"int64_t", "0">:$unroll,
    Attn_ScheduleChoice<Attn_Toggle>:$producer,
    Attn_ScheduleChoice<Attn_Toggle>:$qk_ahead,
    Attn_ScheduleChoice<Attn_Toggle>:$ping_pong,
    Attn_ScheduleChoice<Attn_Transfer>:$kv_load,
    Attn_ScheduleChoice<Attn_Transfer>:$q_load,
    Attn_ScheduleChoice<Attn_Transfer>:$o_store);
  let builders = [
    // Tiles, warps and stages, the pipeline left to the passes.
    AttrBuilder<(ins "int64_t":$blockQ, "int64_t":$blockKv,
                     "int64_t":$warps, "int64_t":$stages), [{
      return $_get($_ctxt, blockQ, blockKv, warps, stages, 0, Toggle::Auto,
                   Toggle::Auto, Toggle::Auto, Transfer::Auto,
                   Transfer::Auto, Transfer::Auto);
    }]>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let extraClassDeclaration = [{
    /// This schedule with every pipeline field `auto`.
    ScheduleAttr withoutPipeline() const {
      return get(getContext(), getBlockQ(), getBlockKv(), getWarps(),
                 getStages(), getUnroll(), Toggle::Auto, Toggle::Auto,
                 Toggle::Auto, Transfer::Auto, Transfer::Auto,
                 Transfer::Auto);
    }
    /// This schedule with `unroll` = `keys` (0: unset).
    ScheduleAttr withUnroll(int64_t keys) const {
      return get(getContext(), getBlockQ(), getBlockKv(), getWarps(),
                 getStages(), keys, getProducer(), getQkAhead(),
                 getPingPong(), getKvLoad(), getQLoad(), getOStore());
    }
    /// Whether any pipeline field (producer ... o_store) is set.
    bool hasPipeline() const {
      return getProducer() != Toggle::Auto || getQkAhead() != Toggle::Auto ||
             getPingPong() != Toggle::Auto || getKvLoad() != Transfer::Auto ||
             getQLoad() != Transfer::Auto || getOStore() != Transfer::Auto;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Launch contract
//===----------------------------------------------------------------------===//

def Attn_LaunchRole : I32EnumAttr<"LaunchRole",
    "what a launch is to the host function that makes it", [
    I32EnumAttrCase<"Prefill", 0, "prefill">,
    I32EnumAttrCase<"DecodeSplit", 1, "decode_split">,
    I32EnumAttrCase<"DecodeCombine", 2, "decode_combine">,
    I32EnumAttrCase<"Append", 3, "append">,
    I32EnumAttrCase<"BlockMask", 4, "block_mask">,
    I32EnumAttrCase<"DecodeUnsplit", 5, "decode_unsplit">,
    I32EnumAttrCase<"Merge", 6, "merge">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

// The values are part of no ABI: attn-compile writes the C tables with the
// runtime's own names (ATTNRT_SIZE_*).
def Attn_LaunchSize : I32EnumAttr<"LaunchSize",
    "a problem size a launch's grid or workspace is a function of", [
    I32EnumAttrCase<"Constant", 0, "constant">,
    I32EnumAttrCase<"Batch", 1, "batch">,
    I32EnumAttrCase<"QHeads", 2, "q_heads">,
    I32EnumAttrCase<"KVHeads", 3, "kv_heads">,
    I32EnumAttrCase<"QLen", 4, "q_len">,
    I32EnumAttrCase<"KVLen", 5, "kv_len">,
    I32EnumAttrCase<"GroupRows", 6, "group_rows">,
    I32EnumAttrCase<"Rows", 7, "rows">,
    I32EnumAttrCase<"Splits", 8, "splits">,
    I32EnumAttrCase<"NewLen", 9, "new_len">,
    I32EnumAttrCase<"PackedQTiles", 10, "packed_q_tiles">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_LaunchOperand : I32EnumAttr<"LaunchOperand",
    "an operand of attn.attention a kernel parameter passes", [
    I32EnumAttrCase<"Q", 0, "q">,
    I32EnumAttrCase<"K", 1, "k">,
    I32EnumAttrCase<"V", 2, "v">,
    I32EnumAttrCase<"BlockTable", 3, "block_table">,
    I32EnumAttrCase<"KVLens", 4, "kv_lens">,
    I32EnumAttrCase<"O", 5, "o">,
    I32EnumAttrCase<"Lse", 6, "lse">,
    I32EnumAttrCase<"KNew", 7, "k_new">,
    I32EnumAttrCase<"VNew", 8, "v_new">,
    I32EnumAttrCase<"NewLens", 9, "new_lens">,
    I32EnumAttrCase<"SlotMapping", 10, "slot_mapping">,
    I32EnumAttrCase<"CuSeqlensQ", 11, "cu_seqlens_q">,
    I32EnumAttrCase<"CuSeqlensK", 12, "cu_seqlens_k">,
    I32EnumAttrCase<"Sinks", 13, "sinks">,
    I32EnumAttrCase<"OParts", 14, "o_parts">,
    I32EnumAttrCase<"LseParts", 15, "lse_parts">,
    I32EnumAttrCase<"KScale", 16, "k_scale">,
    I32EnumAttrCase<"VScale", 17, "v_scale">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_LaunchParamKind : I32EnumAttr<"LaunchParamKind",
    "how the host passes one kernel parameter", [
    I32EnumAttrCase<"Memref", 0, "memref">,
    I32EnumAttrCase<"Workspace", 1, "workspace">,
    I32EnumAttrCase<"TensorMap", 2, "tensor_map">,
    I32EnumAttrCase<"Capture", 3, "capture">]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

def Attn_LaunchAttr : Attn_Attr<"Launch", "launch"> {
  let summary = "everything a host needs to launch one GPU kernel";
  let description = [{
    The launch contract of one `gpu.launch_func`, set by the tier that
    builds the kernel under the name `attn.launch`. attn-translate prints it
    beside the PTX, attn-compile copies it into the generated C tables, and
    libattnrt launches from those tables alone: it is the one owner of the
    launch ABI.

    - `role`: what the launch is to its host function. `prefill` launches
      are alternatives (attn-compile may lower several tilings of one
      kernel; the runtime launches one); `decode_split` then
      `decode_combine` run in that order, unless the call has one K/V
      split and the code has a `decode_unsplit` launch: that kernel (the
      split kernel's tile, writing O and the LSE itself) then runs alone,
      in place of both; `append` is the one launch of an
      `attn.cache_append` kernel, `merge` the one launch of an
      `attn.merge_states` kernel; `block_mask` classifies the (Q block,
      K/V block) pairs of a `mask_mod` into the workspace, which the
      prefill launch then reads (it runs first, or alone, when the caller
      computes the block mask once for several calls).
    - `tier`: the tier that built the kernel (`wmma`, `mma`, `wgmma`,
      `decode`, or `copy` for an append or a merge; informational: headers and logs
      name it).
    - `threads` per block (x; y = z = 1) and `shared`: the dynamic shared
      memory in bytes.
    - `grid`: x, y, z, each a product of terms. A term is a named size,
      `ceildiv(size, N)` or a constant. Sizes: `batch`, `q_heads`,
      `kv_heads`, `q_len`, `kv_len` (paged: the longest sequence the block
      table can name), `group_rows` = q_len * q_heads / kv_heads,
      `rows` = batch * q_heads * q_len (O's rows: total_q * q_heads for a
      packed Q; T * H for a merge), `splits`, the count of K/V splits the runtime picks for
      the GPU (1 for code that has none), `new_len`, the new tokens per
      sequence of an append (S_new), and `packed_q_tiles`, the Q tiles of
      a packed batch: `ceildiv(packed_q_tiles, N)` is
      floor(total_q * group / N) + batch, the blocks of N rows that cover
      every sequence when sequence b's tiles start at
      floor(cu_seqlens_q[b] * group / N) + b.
    - `params`: the kernel parameters in order. `q` ... `lse` pass that
      operand as an expanded memref descriptor (allocated and aligned
      pointer, offset, sizes, strides); `workspace` passes the caller's
      workspace as a row-major memref of shape `workspace`;
      `tensor_map(operand)` is a TMA tensor map (CUtensorMap, 128 bytes
      passed by value) of a `[B, H, S, D]` f16/bf16 operand, with the
      operand's strides, the 128-byte swizzle, and zeros for reads past
      the edges (the host encodes it with the driver's
      cuTensorMapEncodeTiled). K and V (the wgmma tier's K/V tiles): 4-D,
      dims innermost first (D, S, H, B), boxes of 64 x 64 elements (64
      columns of 128 bytes, 64 rows). Q (the wgmma tier's Q tile): the
      5-D view (D, group, S, H / group, B), whose group dim has the head
      stride and whose H / group dim `group` times it, so the K/V head's
      query rows run query-major with the group's heads inner; boxes of
      64 columns by min(group, block_q) heads by block_q / min(group,
      block_q) queries (block_q and group below). O (the wgmma tier's
      TMA store of the output tile): Q's view and boxes, of O; the store
      writes nothing past the edges;
      `capture(N)` passes the attention's N-th capture (the memrefs
      its score_mod / mask_mod regions read) as a memref descriptor.
    - `workspace`: the shape (terms as in `grid`) and element type of the
      workspace, when a parameter is the workspace.
    - `programmatic` (a `decode_combine` launch on sm_90+): the launch may
      start while the launch before it still runs (CUDA's programmatic
      dependent launch): the kernel before it lets it start
      (`griddepcontrol.launch_dependents`) and its own kernel waits for
      that one's writes (`griddepcontrol.wait`) before it reads them. A
      host without such launches makes an ordinary one, after which the
      wait passes at once.
    - `block_q`, `group`: the tile's query rows and the query heads per K/V
      head, where the tier has them (0: none); attn-compile orders prefill
      alternatives by `block_q`, and Q's tensor map takes its boxes from
      them.
    - `max_kv_len` (a `prefill` alternative): libattnrt launches this one,
      rather than any larger-tiled alternative before it, when the K/V
      length (`kv_len`) is at most N; 0 (the default) says nothing. The
      compiler sets it where it measured a smaller tile to win on short
      sequences even on a grid that fills the GPU (wgmma's one-role 64 x 64
      tile against its 128-row producer tile: the first K/V tiles' latency
      is paid by fewer rows).

    ```mlir
    #attn.launch<prefill, tier = mma, threads = 128, shared = 68096,
                 grid = [ceildiv(group_rows, 64), kv_heads, batch],
                 params = [q, k, v, o, lse], block_q = 64, group = 4>
    #attn.launch<prefill, tier = wgmma, threads = 128, shared = 65664,
                 grid = [ceildiv(group_rows, 64), kv_heads, batch],
                 params = [tensor_map(q), tensor_map(k), tensor_map(v),
                           q, k, v, o],
                 block_q = 64, group = 1>
    #attn.launch<decode_split, tier = decode, threads = 128, shared = 16640,
                 grid = [splits, kv_heads, batch * ceildiv(group_rows, 4)],
                 params = [q, k, v, block_table, kv_lens, workspace],
                 workspace = [rows, splits, 130] : f32, block_q = 4, group = 4>
    ```
  }];
  let parameters = (ins
    "::mlir::attn::LaunchRole":$role,
    "::mlir::attn::Tier":$tier,
    "int64_t":$threads,
    "int64_t":$shared,
    ArrayRefParameter<"::mlir::attn::LaunchTerm", "grid terms, by dim">:$grid,
    ArrayRefParameter<"::mlir::attn::LaunchParam", "kernel parameters">:$params,
    ArrayRefParameter<"::mlir::attn::LaunchTerm",
                      "workspace terms, by dim">:$workspace,
    OptionalParameter<"::mlir::Type">:$workspace_type,
    DefaultValuedParameter<"int64_t", "0">:$block_q,
    DefaultValuedParameter<"int64_t", "0">:$group,
    DefaultValuedParameter<"bool", "false">:$programmatic,
    DefaultValuedParameter<"int64_t", "0">:$max_kv_len);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The terms of grid dimension `dim` (0: x, 1: y, 2: z).
    ::llvm::SmallVector<::mlir::attn::LaunchTerm> getGridDim(unsigned dim) const;
    /// The workspace's rank; 0 without one.
    unsigned getWorkspaceRank() const;
    /// The terms of workspace dimension `dim`.
    ::llvm::SmallVector<::mlir::attn::LaunchTerm>
    getWorkspaceDim(unsigned dim) const;
    bool hasWorkspace() const { return getWorkspaceRank() > 0; }
  }];
}

#endif // ATTN_ATTRS_TD
