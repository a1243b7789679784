// A host kernel end to end: the exported entry has the weft_host_kernel_fn
// signature (void **args, const weft_kernel_context *ctx,
// const weft_host_program *program) with the body inlined; the atomics keep
// their orderings down to x86 (lock-prefixed RMW and CAS; acquire loads and
// release stores are plain moves on x86-TSO; a seq_cst fence is a locked
// no-op RMW); a wait yields the CPU between polls with sched_yield, since a
// launch's programs are threads that can outnumber the cores; --emit=so is
// an x86-64 ELF shared object exporting only the entry.
//
// RUN: weft-compile %s --target=host --emit=llir -o %t.ll
// RUN: FileCheck %s --check-prefix=LLIR --implicit-check-not=@__weft_impl < %t.ll
// RUN: weft-compile %s --target=host --emit=asm -o %t.s
// RUN: FileCheck %s --check-prefix=ASM < %t.s
// RUN: weft-compile %s --target=host --emit=so -o %t.so
// RUN: llvm-readelf -h --dyn-syms %t.so | FileCheck %s --check-prefix=SO --implicit-check-not=__weft_impl

// LLIR-DAG:   declare i32 @sched_yield()
// LLIR-DAG:   declare i32 @clock_gettime(i32, ptr)
// LLIR-LABEL: define void @ring_step(
// LLIR-SAME:    ptr {{.*}}%[[ARGS:[0-9]+]], ptr {{.*}}%[[CTX:[0-9]+]], ptr {{.*}}%[[PROG:[0-9]+]])
// args[0..3] point at the arguments' values.
// LLIR:       load ptr, ptr %[[ARGS]], align 8
// LLIR:       getelementptr i8, ptr %[[ARGS]], i64 8
// LLIR:       getelementptr i8, ptr %[[ARGS]], i64 16
// LLIR:       getelementptr i8, ptr %[[ARGS]], i64 24
// The program id is weft_host_program.id[0].
// LLIR:       load i32, ptr %[[PROG]], align 4
// LLIR:       atomicrmw add ptr %{{[a-z0-9_]+}}, i64 %{{[a-z0-9_]+}} release, align 8
// LLIR:       load atomic i64, ptr %{{[a-z0-9_]+}} monotonic, align 8
// LLIR:       call i32 @sched_yield()
// LLIR:       fence acquire
// LLIR-NEXT:  atomicrmw add ptr %{{[a-z0-9_]+}}, i32 %{{[a-z0-9_]+}} acq_rel, align 4
// LLIR-NEXT:  cmpxchg ptr %{{[a-z0-9_]+}}, i64 %{{[a-z0-9_]+}}, i64 %{{[a-z0-9_]+}} acq_rel acquire, align 8
// LLIR-NEXT:  fence seq_cst
// LLIR-NEXT:  store atomic i32 %{{[a-z0-9_]+}}, ptr %{{[a-z0-9_]+}} release, align 4

// ASM-LABEL: {{^}}ring_step:
// ASM:       lock addq
// ASM:       callq sched_yield@PLT
// ASM:       lock xaddl
// ASM:       lock cmpxchgq
// ASM-NEXT:  lock orl $0, -64(%rsp)
// ASM-NOT:   mfence
// ASM:       movl %{{[a-z0-9]+}}, (%{{[a-z0-9,%]+}})
// ASM:       retq

// SO:       Type: DYN (Shared object file)
// SO:       Machine: Advanced Micro Devices X86-64
// SO-DAG:   UND sched_yield
// SO-DAG:   FUNC GLOBAL DEFAULT {{.*}} ring_step{{$}}
func.func @ring_step(%flag: !weft.ptr<i64>, %data: !weft.ptr<i32>, %v: i32, %epoch: i64)
    attributes {weft.kernel} {
  %pid = weft.program_id x : i32
  %slot = weft.addptr %data, %pid : !weft.ptr<i32>, i32
  weft.store %slot, %v : !weft.ptr<i32>
  weft.signal add release sys %flag, %epoch : !weft.ptr<i64>
  %seen = weft.wait ge acquire sys %flag, %epoch : !weft.ptr<i64>
  %old = weft.atomic_rmw add acq_rel gpu %data, %v : !weft.ptr<i32>
  %x = weft.atomic_cas acq_rel sys %flag, %seen, %epoch : !weft.ptr<i64>
  weft.fence seq_cst sys
  weft.store release sys %slot, %old : !weft.ptr<i32>
  return
}
