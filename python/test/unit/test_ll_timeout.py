"""An LL or LL128 collective whose peer never calls fails with
WEFT_WAIT_TIMEOUT instead of hanging (collectives/_ll.py, _ll128.py: the
receivers' polls end in wl.wait, which gives up). Two host ranks under
weft-run: rank 1 skips the second call that rank 0 makes."""
import os
import subprocess
import sys
import textwrap

import pytest

from weft import _libs

SCRIPT = textwrap.dedent("""
    import sys
    import weft
    from weft import collectives as C
    weft.init("host")
    x, out = weft.zeros((1000,)), weft.zeros((2000,))
    C.{call}  # both: the collectives' state and LL buffer are made collectively
    if weft.rank() == 0:
        try:
            C.{call}
        except weft.WeftError as e:
            print("rank 0:", e.status, flush=True)
            sys.exit(7)
    weft.barrier()
""")


@pytest.mark.parametrize("call", ['all_reduce(x, algorithm="ll")',
                                  'all_gather(x, out, algorithm="ll")',
                                  'all_reduce(x, algorithm="ll128")'])
def test_ll_wait_gives_up(tmp_path, call):
    script = tmp_path / "ll.py"
    script.write_text(SCRIPT.format(call=call))
    run = os.path.join(_libs.bin_dir(), "weft-run")
    env = dict(os.environ, WEFT_WAIT_TIMEOUT="2", WEFT_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([run, "-n", "2", "--timeout", "120", "--", sys.executable,
                           str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert "rank 0: WEFT_ERROR_TIMEOUT" in done.stdout, done.stdout + done.stderr
    assert done.returncode != 0
