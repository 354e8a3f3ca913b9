"""The fused program's way to the host while it runs: ``host_poll`` calls a Python function from inside a
compiled jax program.

On a CPU it is an XLA FFI handler (``jax.ffi``) that ctypes makes of the function, which jax's C++ dispatch
calls like any other program: a program holding one of jax's own host callbacks (``io_callback``,
``pure_callback``) is dispatched from Python, which costs several hundred microseconds a call after a
generation's program (``bench/evosax_race.py`` prints both). Elsewhere (a GPU, whose buffers the host does not
read in place, or a jax without ``jax.ffi``) it is an ``io_callback``.

The handler reads the few fields of XLA's FFI C API (``xla/ffi/api/c_api.h``, whose ABI XLA keeps stable)
that it needs: the call frame's stage, argument and result buffers, and the metadata query by which XLA
asks a handler's API version, answered with the version of the headers that jaxlib ships.
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: A poll: the rows done and the loop's checks done so far -> whether to stop, and the checks to the next poll.
Poll = Callable[[Any, Any], tuple[np.bool_, np.int32]]

_METADATA_EXTENSION = 1  # XLA_FFI_Extension_Metadata
_EXECUTE = 3  # XLA_FFI_ExecutionStage_EXECUTE


class _Extension(ctypes.Structure):  # XLA_FFI_Extension_Base
    _fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int), ("next", ctypes.c_void_p)]


class _Version(ctypes.Structure):  # XLA_FFI_Api_Version
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.c_void_p),
        ("major_version", ctypes.c_int),
        ("minor_version", ctypes.c_int),
    ]


class _Metadata(ctypes.Structure):  # XLA_FFI_Metadata (up to the fields written)
    _fields_ = [("struct_size", ctypes.c_size_t), ("api_version", _Version), ("traits", ctypes.c_uint32)]


class _MetadataExtension(ctypes.Structure):  # XLA_FFI_Metadata_Extension
    _fields_ = [("extension_base", _Extension), ("metadata", ctypes.POINTER(_Metadata))]


class _Values(ctypes.Structure):  # XLA_FFI_Args and XLA_FFI_Rets, alike
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.c_void_p),
        ("size", ctypes.c_int64),
        ("types", ctypes.c_void_p),
        ("values", ctypes.POINTER(ctypes.c_void_p)),
    ]


class _CallFrame(ctypes.Structure):  # XLA_FFI_CallFrame (up to the fields read)
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.POINTER(_Extension)),
        ("api", ctypes.c_void_p),
        ("ctx", ctypes.c_void_p),
        ("stage", ctypes.c_int),
        ("args", _Values),
        ("rets", _Values),
    ]


class _Buffer(ctypes.Structure):  # XLA_FFI_Buffer
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("data", ctypes.c_void_p),
        ("rank", ctypes.c_int64),
        ("dims", ctypes.c_void_p),
    ]


_Handler = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_CallFrame))

#: Each poll's FFI target and its ctypes handler (kept alive while the process lives: programs call it).
_TARGETS: dict[Poll, tuple[str, Any]] = {}


def host_poll(poll: Poll, rows_done: Any, checks_done: Any, platform: str) -> tuple[Any, Any]:
    """``poll(rows_done, checks_done)`` called on the host from a jax program being traced for ``platform``
    (two int32 scalars in, a bool and an int32 scalar out). Nothing may raise in ``poll``: the FFI handler has
    no error to hand XLA, so ``poll`` keeps its errors for the caller to raise once the program is done, and
    the caller runs the program within ``vecrl.interrupts.sigint_watched``, which keeps a Ctrl-C's
    KeyboardInterrupt for the block's end (XLA may call the handler on the main thread).

    Example:
        >>> import jax, jax.numpy as jnp, numpy as np
        >>> ask = lambda rows, checks: (np.bool_(rows > 2), np.int32(checks + 1))
        >>> jax.jit(lambda n: host_poll(ask, n, n, "cpu"))(jnp.int32(3))
        (Array(True, dtype=bool), Array(4, dtype=int32))
    """
    import jax
    import jax.numpy as jnp

    answer = (jax.ShapeDtypeStruct((), jnp.bool_), jax.ShapeDtypeStruct((), jnp.int32))
    target = _ffi_target(poll) if platform == "cpu" else None
    if target is not None:
        stop, interval = jax.ffi.ffi_call(target, answer)(rows_done, checks_done)
        return stop, interval
    from jax.experimental import io_callback

    stop, interval = io_callback(poll, answer, rows_done, checks_done, ordered=False)
    return stop, interval


def _ffi_target(poll: Poll) -> str | None:
    """The name of the CPU FFI target that calls ``poll``, registered with jax on first use; None where jax
    has no FFI or ships no headers to read its version from."""
    import jax

    if poll not in _TARGETS:
        version = _api_version()
        if version is None:
            return None
        handler = _Handler(functools.partial(_handle, poll, version))
        name = f"vecrl_evaluate_poll_{len(_TARGETS)}"
        capsule = jax.ffi.pycapsule(ctypes.cast(handler, ctypes.c_void_p).value)
        jax.ffi.register_ffi_target(name, capsule, platform="cpu")
        _TARGETS[poll] = (name, handler)
    return _TARGETS[poll][0]


@functools.cache
def _api_version() -> tuple[int, int] | None:
    """The XLA FFI API version of the installed jaxlib's headers (None: no ``jax.ffi`` or no headers)."""
    import jax

    ffi = getattr(jax, "ffi", None)
    if ffi is None or not all(hasattr(ffi, name) for name in ("ffi_call", "include_dir", "pycapsule")):
        return None
    try:
        header = (Path(ffi.include_dir()) / "xla" / "ffi" / "api" / "c_api.h").read_text()
    except OSError:
        return None
    major = re.search(r"#define XLA_FFI_API_MAJOR (\d+)", header)
    minor = re.search(r"#define XLA_FFI_API_MINOR (\d+)", header)
    return (int(major[1]), int(minor[1])) if major and minor else None


def _handle(poll: Poll, version: tuple[int, int], frame_pointer: Any) -> None:
    """The FFI handler: XLA's metadata query answered, else ``poll`` called on the frame's two arguments and
    its answer written to the two results (None: no error)."""
    frame = frame_pointer.contents
    extension = frame.extension_start
    if extension and extension.contents.type == _METADATA_EXTENSION:
        metadata = ctypes.cast(extension, ctypes.POINTER(_MetadataExtension)).contents.metadata.contents
        metadata.api_version.major_version, metadata.api_version.minor_version = version
        metadata.traits = 0
        return None
    if frame.stage != _EXECUTE:
        return None
    rows_done, checks_done = (_scalar(frame.args, index, ctypes.c_int32)[0] for index in (0, 1))
    stop, interval = poll(np.int32(rows_done), np.int32(checks_done))
    _scalar(frame.rets, 0, ctypes.c_bool)[0] = bool(stop)
    _scalar(frame.rets, 1, ctypes.c_int32)[0] = int(interval)
    return None


def _scalar(values: _Values, index: int, kind: type) -> Any:
    """The memory of the ``index``-th buffer of ``values``, as a pointer to ``kind``."""
    buffer = ctypes.cast(values.values[index], ctypes.POINTER(_Buffer)).contents
    return ctypes.cast(buffer.data, ctypes.POINTER(kind))
