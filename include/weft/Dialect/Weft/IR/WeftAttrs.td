//===- WeftAttrs.td - weft enums ---------------------------*- tablegen -*-===//
#ifndef WEFT_ATTRS_TD
#define WEFT_ATTRS_TD

include "mlir/IR/EnumAttr.td"

// Memory orders, a superset for every op; each op's verifier says which it
// accepts (a load cannot release, a store cannot acquire). `weak` is a
// plain, non-atomic access.
def Weft_MemOrder : I32EnumAttr<"MemOrder", "memory order", [
    I32EnumAttrCase<"weak", 0>, I32EnumAttrCase<"relaxed", 1>,
    I32EnumAttrCase<"acquire", 2>, I32EnumAttrCase<"release", 3>,
    I32EnumAttrCase<"acq_rel", 4>, I32EnumAttrCase<"seq_cst", 5>]> {
  let cppNamespace = "::weft";
}

// Which threads an ordered access synchronises with: the program (CTA),
// the device, or the whole system (every GPU and the CPU: needed for peers).
def Weft_MemScope : I32EnumAttr<"MemScope", "memory scope", [
    I32EnumAttrCase<"cta", 0>, I32EnumAttrCase<"gpu", 1>,
    I32EnumAttrCase<"sys", 2>]> {
  let cppNamespace = "::weft";
}

def Weft_RMWKind : I32EnumAttr<"RMWKind", "atomic read-modify-write", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"fadd", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"umax", 4>, I32EnumAttrCase<"umin", 5>,
    I32EnumAttrCase<"and_", 6, "and">, I32EnumAttrCase<"or_", 7, "or">,
    I32EnumAttrCase<"xor_", 8, "xor">, I32EnumAttrCase<"xchg", 9>]> {
  let cppNamespace = "::weft";
}

def Weft_SignalKind : I32EnumAttr<"SignalKind", "signal update", [
    I32EnumAttrCase<"set", 0>, I32EnumAttrCase<"add", 1>]> {
  let cppNamespace = "::weft";
}

// The values are part of the runtime ABI: weft_wait_error.cmp reports them.
def Weft_WaitPredicate : I32EnumAttr<"WaitPredicate", "wait condition", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"ge", 2>, I32EnumAttrCase<"gt", 3>,
    I32EnumAttrCase<"le", 4>, I32EnumAttrCase<"lt", 5>]> {
  let cppNamespace = "::weft";
}

// Integer min/max are signed; umin/umax unsigned. Floats use add/min/max.
def Weft_MultimemReduce : I32EnumAttr<"MultimemReduce", "multimem reduction", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"min", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"umin", 3>,
    I32EnumAttrCase<"umax", 4>]> {
  let cppNamespace = "::weft";
}

// Cache hints of a weak global access, as PTX spells them (Triton's
// cache_modifier): loads ca, cg, cv, cs; stores wb, cg, cs, wt. Targets
// without the cache level ignore them.
def Weft_CacheModifier : I32EnumAttr<"CacheModifier", "cache modifier", [
    I32EnumAttrCase<"ca", 1>, I32EnumAttrCase<"cg", 2>, I32EnumAttrCase<"cs", 3>,
    I32EnumAttrCase<"cv", 4>, I32EnumAttrCase<"wb", 5>, I32EnumAttrCase<"wt", 6>]> {
  let cppNamespace = "::weft";
}

// Eviction priority of a weak global access (L1::evict_first/last).
def Weft_EvictionPolicy : I32EnumAttr<"EvictionPolicy", "eviction policy", [
    I32EnumAttrCase<"evict_first", 1>, I32EnumAttrCase<"evict_last", 2>]> {
  let cppNamespace = "::weft";
}

def Weft_Axis : I32EnumAttr<"Axis", "grid axis", [
    I32EnumAttrCase<"x", 0>, I32EnumAttrCase<"y", 1>, I32EnumAttrCase<"z", 2>]> {
  let cppNamespace = "::weft";
}

#endif // WEFT_ATTRS_TD
