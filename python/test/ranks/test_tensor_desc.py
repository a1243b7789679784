"""weft._runtime.tensor_desc (weft_tensor_desc_encode): the fields of the
descriptor, tensor maps as views of the tensor, and TMA's rules refused on
every backend. Needs no compiler."""
import ctypes

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND
from weft import WeftError, _runtime


def test_layout_is_the_c_struct():
    assert ctypes.sizeof(_runtime.TensorDesc) == 256
    assert _runtime.TensorDesc.base.offset == 128
    assert _runtime.TensorDesc.strides.offset == 176
    assert ctypes.sizeof(_runtime.TensorMapDim) == 16
    assert [getattr(_runtime.TensorMapDim, f).offset
            for f in ("dim", "step", "size", "box")] == [0, 4, 8, 12]


def test_buffer_fields():
    buf = weft.empty((4, 24), wl.float32)  # rows of 96 bytes
    d = _runtime.tensor_desc(buf, 4, (4, 24), (24, 1))
    assert d.base == buf.ptr
    assert list(d.shape) == [4, 24, 0, 0, 0]
    assert list(d.strides) == [24, 1, 0, 0, 0]
    assert not any(d.tensor_map)  # no map, no tensor map
    # A plain map, 2 x 8 boxes: only the cuda backend makes bulk copies, so
    # only it encodes one.
    d = _runtime.tensor_desc(buf.ptr, 4, (4, 24), (24, 1), map=[(0, 1, 0, 2), (1, 1, 0, 8)],
                             swizzle=32)
    assert list(d.shape[:2]) == [4, 24]
    assert any(d.tensor_map) == (BACKEND == "cuda")
    buf.free()


def test_split_view():
    # 128 rows of a 256 x 64 bf16 tensor per box, in the order 0-7, 64-71,
    # 8-15, 72-79, ...: dimensions i, t, g (rows) and k (columns).
    buf = weft.empty((256, 64), wl.bfloat16)
    split = [(0, 8, 8, 8), (0, 64, 0, 2), (0, 1, 8, 8), (1, 1, 0, 64)]
    d = _runtime.tensor_desc(buf, 2, (256, 64), (64, 1), map=split, swizzle=128)
    assert list(d.shape[:3]) == [256, 64, 0] and list(d.strides[:2]) == [64, 1]
    assert any(d.tensor_map) == (BACKEND == "cuda")
    # 192 rows: three 64-row steps, still inside the tensor.
    _runtime.tensor_desc(buf, 2, (192, 64), (64, 1), map=split)
    with pytest.raises(WeftError, match=r"map\[1\] steps shape\[0\] = 100 in steps of 64: "
                       r"not whole"):
        _runtime.tensor_desc(buf, 2, (100, 64), (64, 1), map=split)
    buf.free()


@pytest.mark.skipif(BACKEND != "host", reason="numpy arrays are host memory")
def test_numpy_fields():
    a = np.zeros((3, 5, 8), np.float16)  # malloc'ed: 16-byte aligned
    d = _runtime.tensor_desc(a, a.itemsize, a.shape, [s // a.itemsize for s in a.strides],
                             map=[(0, 1, 0, 1), (1, 1, 0, 1), (2, 1, 0, 8)])
    assert d.base == a.ctypes.data
    assert list(d.shape) == [3, 5, 8, 0, 0]
    assert list(d.strides) == [40, 8, 1, 0, 0]
    assert not any(d.tensor_map)


def test_rejected():
    buf = weft.empty((4, 6), wl.float32)  # rows of 24 bytes
    with pytest.raises(WeftError, match=r"^weft_tensor_desc_encode: strides\[0\] = 6 "
                       r"elements of 4 bytes \(24 bytes\) is not a multiple of 16 bytes"
                       r" \(WEFT_ERROR_INVALID_ARGUMENT\)$") as e:
        _runtime.tensor_desc(buf, 4, (4, 6), (6, 1))
    assert e.value.status == "WEFT_ERROR_INVALID_ARGUMENT"
    with pytest.raises(WeftError, match=r"map\[1\]\.box = 64 elements of 4 bytes \(256 "
                       r"bytes\) is wider than the 128-byte swizzle"):
        _runtime.tensor_desc(buf, 4, (4, 64), (64, 1), map=[(0, 1, 0, 1), (1, 1, 0, 64)],
                             swizzle=128)
    with pytest.raises(WeftError, match=r"the map reaches index 15 of dimension 0, beyond "
                       r"shape\[0\] = 4"):
        _runtime.tensor_desc(buf, 4, (4, 8), (8, 1), map=[(0, 1, 16, 8), (1, 1, 0, 8)])
    with pytest.raises(WeftError, match=r"map\[1\] \(the innermost\) walks dimension 0"):
        _runtime.tensor_desc(buf, 4, (4, 8), (8, 1), map=[(1, 1, 0, 8), (0, 1, 0, 4)])
    with pytest.raises(ValueError, match="1 strides for 2 dimensions"):
        _runtime.tensor_desc(buf, 4, (4, 6), (1,))
    with pytest.raises(ValueError, match=r"map dimension \(0, 1, 0\) is not"):
        _runtime.tensor_desc(buf, 4, (4, 8), (8, 1), map=[(0, 1, 0), (1, 1, 0, 8)])
    buf.free()
