//===- AttnBase.td - attn dialect definition ---------------*- tablegen -*-===//
//
// The attn dialect describes attention problems (L0) and the tiled
// online-softmax algorithm that computes them (L1).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_BASE_TD
#define ATTN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention problems and the FlashAttention algorithm as IR";
  let description = [{
    `attn.attention` states what to compute: shapes, dtypes, masks, GQA and
    paged K/V caches. Passes lower it to the tiled online-softmax loop (L1),
    which is target independent and executable on the CPU, and then to GPU
    kernels.
  }];
  let useDefaultAttributePrinterParser = 1;
  // Discardable `attn.*` attributes are declared: a misspelled name or a
  // mistyped value is an error (AttnDialect.cpp).
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Defined beside the attribute storage classes (AttnAttrs.cpp).
    void registerAttributes();
  }];
}

// An op whose regions are score_mod / mask_mod bodies ended by attn.yield
// (AttnDialect.h); other dialects' ops that carry one declare it too.
def Attn_HoldsModRegion : NativeOpTrait<"HoldsModRegion"> {
  let cppNamespace = "::mlir::OpTrait::attn";
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

class Attn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // ATTN_BASE_TD
