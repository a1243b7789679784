"""weft.Buffer.__dlpack__ / __dlpack_device__ on the host backend, with numpy."""
import ctypes
import gc

import numpy as np
import pytest

import weft
import weft.language as wl
from devices import BACKEND
from weft import _runtime

pytestmark = pytest.mark.skipif(BACKEND != "host", reason="numpy consumes host "
                                "memory only; test_torch.py covers GPU backends")


def _capsule_name(capsule):
    get = ctypes.pythonapi.PyCapsule_GetName
    get.restype, get.argtypes = ctypes.c_char_p, [ctypes.py_object]
    return get(capsule)


def test_dlpack_device_host():
    buf = weft.empty((4,), wl.float32)
    assert buf.__dlpack_device__() == (1, 0)  # kDLCPU, device 0
    buf.free()


@pytest.mark.parametrize("dtype,shape", [(wl.float32, (37,)), (wl.int64, (5,)),
                                         (wl.float16, (9,)), (wl.float32, (6, 7)),
                                         (wl.int64, (3, 4))])
def test_from_dlpack_shares_memory(dtype, shape):
    buf = weft.zeros(shape, dtype)
    view = np.from_dlpack(buf)
    assert view.shape == shape and view.dtype == np.dtype(dtype.numpy)
    assert view.ctypes.data == buf.ptr
    assert view.flags.c_contiguous
    values = np.arange(np.prod(shape)).reshape(shape).astype(view.dtype) + weft.rank()
    buf.numpy()[...] = values  # write through the buffer, read through dlpack
    np.testing.assert_array_equal(view, values)
    if view.flags.writeable:  # numpy >= 2 (1.x marks dlpack imports read-only)
        view[...] = values + 1  # write through dlpack, read through the buffer
        np.testing.assert_array_equal(buf.numpy(), values + 1)
    del view
    gc.collect()
    _runtime._dl_sweep()
    assert not _runtime._dl_live  # the consumer called the deleter
    buf.free()


def test_dlpack_keeps_buffer_object_alive():
    buf = weft.zeros((8,), wl.float32)
    buf.numpy()[:] = 3
    ptr = buf.ptr
    view = np.from_dlpack(buf)
    del buf  # the capsule's manager holds the Buffer object, not only its pointer
    gc.collect()
    assert any(b.ptr == ptr for _, _, b in _runtime._dl_live.values())
    np.testing.assert_array_equal(view, 3)
    live = next(b for _, _, b in _runtime._dl_live.values() if b.ptr == ptr)
    del view
    gc.collect()
    _runtime._dl_sweep()
    assert not _runtime._dl_live
    live.free()


def test_bf16_capsule_unconsumed():
    """numpy has no bfloat16: the capsule reports kDLBfloat (code 4), 16
    bits; dropped without a consumer, it is released by the next sweep."""
    buf = weft.zeros((2, 3), wl.bfloat16)
    gc.collect()
    _runtime._dl_sweep()
    assert not _runtime._dl_live
    capsule = buf.__dlpack__()
    assert type(capsule).__name__ == "PyCapsule"
    assert _capsule_name(capsule) == b"dltensor"
    (managed, _, owner), = _runtime._dl_live.values()
    t = managed.dl_tensor
    assert owner is buf and t.data == buf.ptr
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (4, 16, 1)
    assert (t.device.device_type, t.device.device_id) == (1, 0)
    assert t.ndim == 2 and [t.shape[0], t.shape[1]] == [2, 3]
    assert not t.strides and t.byte_offset == 0
    with pytest.raises((RuntimeError, BufferError, TypeError)):
        np.from_dlpack(buf)  # numpy cannot take bfloat16 (and drops the capsule)
    gc.collect()
    _runtime._dl_sweep()
    assert len(_runtime._dl_live) == 1  # the refused one is released, ours is held
    assert _capsule_name(capsule) == b"dltensor"
    del capsule, t, managed, owner
    gc.collect()
    _runtime._dl_sweep()
    assert not _runtime._dl_live and not _runtime._dl_capsules
    buf.free()


def test_dlpack_of_freed_buffer_raises():
    buf = weft.empty((4,), wl.float32)
    buf.free()
    with pytest.raises(weft.WeftError):
        buf.__dlpack__()
