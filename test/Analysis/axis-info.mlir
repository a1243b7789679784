// The axis analysis (lib/Analysis/AxisInfo.cpp) per rule: what it proves
// about contiguity, divisibility and constancy, which decide the vector
// width of tile accesses (AssignLayouts, TileMemoryToLLVM). Divisibility
// 1073741824 (2^30) is the cap, "a multiple of anything".
//
// RUN: weft-opt %s --weft-print-axis-info -split-input-file -verify-diagnostics -o /dev/null

// Kernel pointers are assumed 16-byte aligned unless weft.divisibility says
// otherwise; integers are what weft.divisibility says, else unknown.
func.func @ranges(%p: !weft.ptr<f32>, %q: !weft.ptr<f16> {weft.divisibility = 4 : i32},
                  %n: i32 {weft.divisibility = 8 : i32}, %m: i32) attributes {weft.kernel} {
  // expected-remark @below {{contiguity = [1], divisibility = [1073741824], constancy = [1]}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %c12 = arith.constant 12 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [64], constancy = [128]}}
  %c64 = arith.constant dense<64> : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %r = weft.make_range 0, 128 : tensor<128xi32>
  // A range's runs start at its start.
  // expected-remark @below {{contiguity = [8], divisibility = [4], constancy = [1]}}
  %r4 = weft.make_range 4, 12 : tensor<8xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [64], constancy = [1]}}
  %off = arith.addi %r, %c64 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [128]}}
  %ns = weft.splat %n : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [8], constancy = [1]}}
  %offn = arith.addi %ns, %r : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [128]}}
  %ms = weft.splat %m : i32 -> tensor<128xi32>
  // Still contiguous, but from an unknown start.
  // expected-remark @below {{contiguity = [128], divisibility = [1], constancy = [1]}}
  %offm = arith.addi %r, %ms : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [8], constancy = [1]}}
  %back = arith.subi %r, %ns : tensor<128xi32>
  // n - i runs down: nothing is contiguous.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %neg = arith.subi %ns, %r : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [64], constancy = [1]}}
  %twice = arith.muli %r, %c64 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [512], constancy = [128]}}
  %scaled = arith.muli %ns, %c64 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [128]}}
  %lo = arith.minsi %ns, %c64 : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %wide = arith.extsi %r : tensor<128xi32> to tensor<128xi64>
  // Offsets scale by the pointee's bytes: f32 from a 16-byte base.
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128]}}
  %ps = weft.splat %p : !weft.ptr<f32> -> tensor<128x!weft.ptr<f32>>
  // expected-remark @below {{contiguity = [128], divisibility = [16], constancy = [1]}}
  %pp = weft.addptr %ps, %r : tensor<128x!weft.ptr<f32>>, tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [128]}}
  %qs = weft.splat %q : !weft.ptr<f16> -> tensor<128x!weft.ptr<f16>>
  // expected-remark @below {{contiguity = [128], divisibility = [4], constancy = [1]}}
  %qp = weft.addptr %qs, %offn : tensor<128x!weft.ptr<f16>>, tensor<128xi32>
  // n + i < n holds for whole runs of 8 (n is a multiple of 8); against an
  // unknown bound only elementwise.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8]}}
  %mask = arith.cmpi slt, %offn, %ns : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %maskm = arith.cmpi slt, %offn, %ms : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %both = arith.andi %mask, %maskm : tensor<128xi1>
  // One of two multiples of 8, chosen per run of 8.
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [8]}}
  %sel = arith.select %mask, %ns, %c64 : tensor<128xi1>, tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %x = arith.addi %n, %c12 : i32
  return
}

// -----

// Two dimensions: row offsets i * ld broadcast along the columns plus the
// column range give runs of 64 along the fast dimension; a peer's copy of
// a tile keeps its alignment.
func.func @grid(%p: !weft.ptr<bf16>, %ld: i32 {weft.divisibility = 16 : i32},
                %peer: i32, %k: i32, %flags: !weft.ptr<i32>) attributes {weft.kernel} {
  // expected-remark @below {{contiguity = [16], divisibility = [1073741824], constancy = [1]}}
  %rows = weft.make_range 0, 16 : tensor<16xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %cols = weft.make_range 0, 64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 1]}}
  %rc = weft.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 1]}}
  %lds = weft.splat %ld : i32 -> tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 1]}}
  %rowoff = arith.muli %rc, %lds : tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [1, 64]}}
  %rowb = weft.broadcast %rowoff : tensor<16x1xi32> -> tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1]}}
  %cr = weft.expand_dims %cols axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [16, 1]}}
  %colb = weft.broadcast %cr : tensor<1x64xi32> -> tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 16], constancy = [1, 1]}}
  %off = arith.addi %rowb, %colb : tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 64]}}
  %ps = weft.splat %p : !weft.ptr<bf16> -> tensor<16x64x!weft.ptr<bf16>>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
  %pp = weft.addptr %ps, %off : tensor<16x64x!weft.ptr<bf16>>, tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
  %remote = weft.translate %pp, %peer : tensor<16x64x!weft.ptr<bf16>>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [16, 64]}}
  %ks = weft.splat %k : i32 -> tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [16, 1]}}
  %inside = arith.cmpi slt, %colb, %ks : tensor<16x64xi32>
  // An induction variable is a multiple of what divides its start and step.
  // expected-remark @below {{contiguity = [1], divisibility = [1073741824], constancy = [1]}}
  %c0 = arith.constant 0 : index
  // expected-remark @below {{contiguity = [1], divisibility = [32], constancy = [1]}}
  %c32 = arith.constant 32 : index
  // expected-remark @below {{contiguity = [1], divisibility = [32], constancy = [1]}}
  %c96 = arith.constant 96 : index
  scf.for %i = %c0 to %c96 step %c32 {
    // expected-remark @below {{contiguity = [1], divisibility = [32], constancy = [1]}}
    %i32 = arith.index_cast %i : index to i32
    // expected-remark @below {{contiguity = [1, 1], divisibility = [32, 32], constancy = [16, 64]}}
    %is = weft.splat %i32 : i32 -> tensor<16x64xi32>
    // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 32], constancy = [16, 1]}}
    %kk = arith.addi %colb, %is : tensor<16x64xi32>
    // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 32], constancy = [16, 1]}}
    %narrow = arith.trunci %kk : tensor<16x64xi32> to tensor<16x64xi16>
    // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 64]}}
    %ldb = weft.splat %ld : i32 -> tensor<16x64xi32>
    // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [16, 16]}}
    %kin = arith.cmpi slt, %kk, %ldb : tensor<16x64xi32>
  }
  // What memory holds is unknown.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %flag = weft.load %flags : !weft.ptr<i32>
  return
}

// -----

// A select or an scf.if gives one of two values: what holds of both (the
// pointer a conditional expression chooses stays aligned, so its tiles'
// loads stay vectors). Runs survive where both have them and the choice
// spans them.
func.func @either(%p: !weft.ptr<bf16>, %q: !weft.ptr<bf16> {weft.divisibility = 4 : i32},
                  %c: i1, %n: i32 {weft.divisibility = 8 : i32}) attributes {weft.kernel} {
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %pn = weft.addptr %p, %n : !weft.ptr<bf16>, i32
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %aligned = arith.select %c, %p, %pn : !weft.ptr<bf16>
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %less = arith.select %c, %p, %q : !weft.ptr<bf16>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %branch = scf.if %c -> !weft.ptr<bf16> {
    scf.yield %p : !weft.ptr<bf16>
  } else {
    scf.yield %pn : !weft.ptr<bf16>
  }
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = weft.make_range 0, 64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [64]}}
  %ns = weft.splat %n : i32 -> tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [8], constancy = [1]}}
  %rn = arith.addi %r, %ns : tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [8], constancy = [1]}}
  %runs = arith.select %c, %r, %rn : tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [8], constancy = [1]}}
  %runs_if = scf.if %c -> tensor<64xi32> {
    scf.yield %r : tensor<64xi32>
  } else {
    scf.yield %rn : tensor<64xi32>
  }
  // A run against a constant: element by element only.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %mixed = arith.select %c, %r, %ns : tensor<64xi32>
  // A choice per 8 elements breaks the runs of 64.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8]}}
  %odd = arith.cmpi slt, %r, %ns : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %split = arith.select %odd, %r, %rn : tensor<64xi1>, tensor<64xi32>
  return
}

// -----

// Outside a kernel nothing is assumed about arguments.
func.func @helper(%p: !weft.ptr<f32>, %i: i32) {
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %q = weft.addptr %p, %i : !weft.ptr<f32>, i32
  return
}

// -----

// What the runtime's descriptor encoder guarantees: a 16-byte base and
// 16-byte row pitches; extents only with weft.shape_divisibility.
func.func @descs(%d: !weft.tensordesc<16x32xf32>,
                 %e: !weft.tensordesc<16x32xf32> {weft.shape_divisibility = array<i64: 64, 8>})
    attributes {weft.kernel} {
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %base = weft.desc_base %d : !weft.tensordesc<16x32xf32> -> !weft.ptr<f32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %rows = weft.desc_dim %d, 0 : !weft.tensordesc<16x32xf32>
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %pitch = weft.desc_stride %d, 0 : !weft.tensordesc<16x32xf32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %unit = weft.desc_stride %d, 1 : !weft.tensordesc<16x32xf32>
  // expected-remark @below {{contiguity = [1], divisibility = [64], constancy = [1]}}
  %erows = weft.desc_dim %e, 0 : !weft.tensordesc<16x32xf32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1]}}
  %ecols = weft.desc_dim %e, 1 : !weft.tensordesc<16x32xf32>
  return
}

// -----

// Division and shifts by a power of two are exact on its multiples: half of
// a multiple of 16 is a multiple of 8 (the zigzag layout's half shard, whose
// key blocks stay 16-byte copies); by anything else, or of a run, the
// quotient is unknown. A remainder keeps what divides both operands.
func.func @divide(%n: i32 {weft.divisibility = 16 : i32}, %m: i32, %s: i32) attributes {weft.kernel} {
  // expected-remark @below {{contiguity = [1], divisibility = [2], constancy = [1]}}
  %c2 = arith.constant 2 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %c3 = arith.constant 3 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [64], constancy = [1]}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1]}}
  %half = arith.divsi %n, %c2 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1]}}
  %halfu = arith.divui %n, %c2 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %third = arith.divsi %n, %c3 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %past = arith.divsi %n, %c64 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %unknown = arith.divsi %n, %m : i32
  // 2^30 is the cap ("a multiple of anything"): shifted, only what is sure.
  // expected-remark @below {{contiguity = [1], divisibility = [1073741824], constancy = [1]}}
  %big = arith.constant 1073741824 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [2], constancy = [1]}}
  %c26 = arith.constant 26 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %bigdown = arith.shrui %big, %c26 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %quarter = arith.shrsi %n, %c2 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %quarteru = arith.shrui %n, %c2 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [64], constancy = [1]}}
  %up = arith.shli %n, %c2 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %upm = arith.shli %n, %s : i32
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %rem = arith.remsi %n, %c64 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %remm = arith.remui %n, %m : i32
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = weft.make_range 0, 64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [2], constancy = [64]}}
  %twos = arith.constant dense<2> : tensor<64xi32>
  // A run's elements are not multiples of anything.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %rhalf = arith.divsi %r, %twos : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %ns = weft.splat %n : i32 -> tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [64]}}
  %nhalf = arith.divsi %ns, %twos : tensor<64xi32>
  return
}
