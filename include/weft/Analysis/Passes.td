//===- Passes.td - analyses made visible -------------------*- tablegen -*-===//
//
// Passes that print what an analysis concluded, for the analysis's tests
// and for anyone asking why an access was or was not vectorised.
//
//===----------------------------------------------------------------------===//
#ifndef WEFT_ANALYSIS_PASSES_TD
#define WEFT_ANALYSIS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WeftPrintAxisInfo : Pass<"weft-print-axis-info", "mlir::ModuleOp"> {
  let summary = "Report the contiguity, divisibility and constancy of values";
  let description = [{
    Runs the axis analysis (weft/Analysis/AxisInfo.h) over the module and
    emits a remark on every operation with one integer or pointer result,
    scalar or tile, of the form
    `contiguity = [..], divisibility = [..], constancy = [..]`
    (one entry per dimension; scalars have one). The IR is unchanged.
  }];
}

#endif // WEFT_ANALYSIS_PASSES_TD
