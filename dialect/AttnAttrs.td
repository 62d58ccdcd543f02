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
    static MaskAttr getNone(::mlir::MLIRContext *ctx);
    bool isNone() const { return getKind() == MaskKind::None; }
    bool isBottomRight() const { return getAlign() == MaskAlign::BottomRight; }
    bool hasLeftBound() const { return getLeft() != kUnbounded; }
    bool hasRightBound() const { return getRight() != kUnbounded; }
  }];
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

    A value of 0 leaves the choice to the passes (options, the target GPU).

    ```mlir
    #attn.schedule<block_q = 64, block_kv = 32>
    #attn.schedule<block_q = 64, block_kv = 128, warps = 8, stages = 2>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"int64_t", "0">:$block_q,
    DefaultValuedParameter<"int64_t", "0">:$block_kv,
    DefaultValuedParameter<"int64_t", "0">:$warps,
    DefaultValuedParameter<"int64_t", "0">:$stages);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // ATTN_ATTRS_TD
