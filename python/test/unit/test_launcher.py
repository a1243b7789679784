"""The generated launch path (weft/_launcher.py) against the generic one
(JITFunction.run): the same results and the same errors, whatever the
kernel's parameters are called. In a process of its own (one host rank)."""
import subprocess
import sys
import textwrap

KERNELS = textwrap.dedent('''
    import weft
    import weft.language as wl

    @weft.jit
    def shadowing(x, len, type, BLOCK: wl.constexpr):
        """Parameters named like the builtins the launcher uses."""
        o = wl.arange(0, BLOCK)
        wl.store(x + o, wl.load(x + o, mask=o < len) + type, mask=o < len)

    @weft.jit
    def constexprs_only(B: wl.constexpr):
        """No run-time argument (a helper's usual shape): its launcher is
        made and launches."""
        wl.static_assert(B > 0)
''')

SCRIPT = textwrap.dedent(r'''
    import sys
    sys.path.insert(0, {where!r})
    import numpy as np
    import pytest
    import weft
    import weft.language as wl
    from kernels import constexprs_only, shadowing
    weft.init("host")
    assert shadowing._launcher is not None
    x = weft.zeros((16,), wl.int32)
    for i in range(3):  # the first launch is the generic path's, the rest the fast one's
        shadowing[(1,)](x, 10, 2, BLOCK=16)
    shadowing[(1,)](x, len=10, type=1, BLOCK=16, num_warps=4, num_stages=3)
    shadowing[lambda meta: (16 // meta["BLOCK"],)](x, 10, 1, BLOCK=16, cluster=1)
    assert x.to_numpy().tolist() == [8] * 10 + [0] * 6
    with pytest.raises(TypeError, match=r"shadowing\(\) missing 1 required .*'BLOCK'"):
        shadowing[(1,)](x, 10, 2, BLOCKS=16)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        shadowing[(1,)](x, 10, 2, BLOCK=16, colour=1)
    y = weft.zeros((16,), wl.int32)
    y.free()
    with pytest.raises(TypeError, match="shadowing: a freed weft.Buffer"):
        shadowing[(1,)](y, 10, 2, BLOCK=16)
    with pytest.raises(TypeError, match="shadowing: .*host memory|cannot be"):
        shadowing[(1,)]([1, 2], 10, 2, BLOCK=16)

    class DeviceTensor:
        """Like a torch tensor on a GPU: memory host kernels cannot reach."""
        dtype, is_cuda = "torch.int32", True

        def data_ptr(self):
            return x.ptr
    with pytest.raises(TypeError, match="argument x is device memory, which kernels on "
                                        "the host backend cannot reach"):
        shadowing[(1,)](DeviceTensor(), 10, 2, BLOCK=16)
    for i in range(2):
        constexprs_only[(1,)](B=4)
    print("OK")
''')


def test_fast_and_generic_paths_agree(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    script = SCRIPT.format(where=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.stdout.strip().endswith("OK"), done.stdout + done.stderr
