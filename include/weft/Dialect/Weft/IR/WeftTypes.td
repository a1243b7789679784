//===- WeftTypes.td - weft types ---------------------------*- tablegen -*-===//
#ifndef WEFT_TYPES_TD
#define WEFT_TYPES_TD

include "weft/Dialect/Weft/IR/WeftDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypes.td"

def Weft_PtrType : TypeDef<Weft_Dialect, "Ptr"> {
  let mnemonic = "ptr";
  let summary = "pointer to global (heap) memory";
  let description = [{
    `!weft.ptr<f32>` points at global memory of this rank: a local
    allocation or a symmetric-heap object. `!weft.ptr<f32, multicast>`
    is a multicast address made by `weft.multicast`; only the multimem ops
    accept it, and no other op may dereference it.
  }];
  let parameters = (ins "::mlir::Type":$pointee, "bool":$multicast);
  let builders = [
    TypeBuilderWithInferredContext<(ins "::mlir::Type":$pointee,
                                        CArg<"bool", "false">:$multicast), [{
      return $_get(pointee.getContext(), pointee, multicast);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
}

def Weft_SharedType : TypeDef<Weft_Dialect, "Shared", [ShapedTypeInterface]> {
  let mnemonic = "shared";
  let summary = "a buffer for one tile in the program's shared memory";
  let description = [{
    `!weft.shared<64x32xbf16>` holds one 64x32 tile in the program's shared
    memory (LDS; on the host, where a program is one thread, its stack),
    row-major with rows padded as `weft.dot` reads them by `ldmatrix`;
    `!weft.shared<64x32xbf16, #weft.swizzled<...>>` holds it in the layout
    warpgroup MMA reads (`#weft.swizzled`). The compiler makes them
    (weft-pipeline-dot-operands): `weft.alloc_shared` gives one,
    `weft.async_copy` fills it from global memory and `weft.dot` reads its
    operands from it.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType,
                        "SwizzledSharedAttr":$layout);
  let builders = [
    TypeBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape, "::mlir::Type":$elementType,
                     CArg<"SwizzledSharedAttr", "{}">:$layout), [{
      return $_get($_ctxt, shape, elementType, layout);
    }]>
  ];
  let skipDefaultBuilders = 1;
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool hasRank() const { return true; }
    ::mlir::ShapedType cloneWith(std::optional<::llvm::ArrayRef<int64_t>> shape,
                                 ::mlir::Type elementType) const {
      return SharedType::get(getContext(), shape ? *shape : getShape(), elementType,
                             getLayout());
    }
  }];
}

def Weft_TensorDescType : TypeDef<Weft_Dialect, "TensorDesc"> {
  let mnemonic = "tensordesc";
  let summary = "a strided tensor in global memory, read and written in blocks";
  let description = [{
    `!weft.tensordesc<128x64xbf16>` names a tensor of bf16 (its base,
    shape and strides, known when the kernel is launched) that
    `weft.desc_load` and `weft.desc_store` move in 128x64 blocks; elements
    outside the tensor read as zero and are not written. It is a kernel
    argument passed by value (abi.h, `weft_tensor_desc`), so on sm_90 the
    block copies of a pipelined K loop are bulk tensor copies (TMA) from
    the tensor map the runtime encoded; elsewhere they become masked tile
    accesses of the plain fields (weft-expand-tensor-descs).
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$blockShape, "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The tile one block is: tensor<blockShape x elementType>.
    ::mlir::RankedTensorType getBlockType() const {
      return ::mlir::RankedTensorType::get(getBlockShape(), getElementType());
    }
    unsigned getRank() const { return getBlockShape().size(); }
  }];
}

def Weft_MBarrierType : TypeDef<Weft_Dialect, "MBarrier"> {
  let mnemonic = "mbarrier";
  let summary = "a barrier in shared memory that completes in phases";
  let description = [{
    A phase completes when its expected arrivals have arrived and the
    bytes of the bulk copies that arrive at it have landed; threads wait
    for a phase by its parity. The compiler makes them for its copy
    pipelines (weft-pipeline-dot-operands).
  }];
}

// A pointer or a tile of pointers.
def Weft_PtrLike : AnyTypeOf<[Weft_PtrType, RankedTensorOf<[Weft_PtrType]>],
                             "weft pointer or tensor of weft pointers">;
def Weft_ScalarPtr : Type<
    And<[Weft_PtrType.predicate,
         CPred<"!::llvm::cast<::weft::PtrType>($_self).getMulticast()">]>,
    "unicast weft pointer", "::weft::PtrType">;
def Weft_MulticastPtr : Type<
    And<[Weft_PtrType.predicate,
         CPred<"::llvm::cast<::weft::PtrType>($_self).getMulticast()">]>,
    "multicast weft pointer", "::weft::PtrType">;
def Weft_IntLike : AnyTypeOf<[AnySignlessInteger, RankedTensorOf<[AnySignlessInteger]>],
                             "integer or tensor of integers">;
def Weft_BoolLike : AnyTypeOf<[I1, RankedTensorOf<[I1]>], "i1 or tensor of i1">;
def Weft_ValueLike : AnyTypeOf<[AnySignlessInteger, AnyFloat, Weft_PtrType,
                                RankedTensorOf<[AnySignlessInteger, AnyFloat,
                                                Weft_PtrType]>],
                               "scalar or tensor value">;

#endif // WEFT_TYPES_TD
