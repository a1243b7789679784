/* weft-compile: the tool's body is in libWeftCAPI.so (weft/compiler.h), so
 * that one copy of LLVM and MLIR serves every program. */
#include "weft/compiler.h"

int main(int argc, char **argv) { return weft_compile_main(argc, argv); }
