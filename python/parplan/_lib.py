"""Finding and loading libparplan.so, and the ctypes signatures used.

Where the library is looked for, in order:
  1. PARPLAN_LIB: the path of libparplan.so (or of the folder holding it);
  2. pkg-config: the libdir of the installed `parplan` package (make install);
  3. the build tree: BUILD/libparplan.so of the checkout this package was
     installed from (recorded at install time), or of the checkout it is
     imported from;
  4. the system's library path (ldconfig).
The first that exists is loaded; when none does, LibraryNotFound says what
was tried and how to fix it.
"""
import ctypes
import ctypes.util
import os
import shutil
import subprocess

try:
    from . import _build_info  # written by the installer: the source checkout
    _SOURCE_DIR = _build_info.SOURCE_DIR
except ImportError:  # imported from the source tree itself
    _SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_NAMES = ("libparplan.so", "libparplan.so.0")
_lib = None


class LibraryNotFound(OSError):
    """libparplan.so was not found or could not be loaded."""


def _in_dir(d):
    for n in _NAMES:
        p = os.path.join(d, n)
        if os.path.exists(p):
            return p
    return None


def _pkg_config():
    if not shutil.which("pkg-config"):
        return None, "pkg-config is not installed"
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "parplan"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "pkg-config failed: %s" % e
    if out.returncode != 0:
        return None, "pkg-config knows no parplan (not installed with make install)"
    d = out.stdout.strip()
    return _in_dir(d), "pkg-config libdir %s holds no libparplan.so" % d


def _candidates():
    """(path or None, what was tried) in the documented order."""
    env = os.environ.get("PARPLAN_LIB")
    if env:
        path = _in_dir(env) if os.path.isdir(env) else env
        yield (path if path and os.path.exists(path) else None), "PARPLAN_LIB=%s does not exist" % env
        return
    yield None, "PARPLAN_LIB is not set"
    yield _pkg_config()
    builds = ["build"]
    if os.environ.get("PARPLAN_BUILD_DIR"):  # another build folder (absolute, or under the checkout)
        builds.insert(0, os.environ["PARPLAN_BUILD_DIR"])
    for build in builds:
        d = os.path.join(_SOURCE_DIR, build)
        yield _in_dir(d), "no libparplan.so in the build tree %s" % d
    found = ctypes.util.find_library("parplan")
    yield found, "not on the system library path"


def _declare(lib):
    c_int_p = ctypes.POINTER(ctypes.c_int)
    lib.pp_version.restype = ctypes.c_char_p
    lib.pp_version.argtypes = []
    lib.pp_free.restype = None
    lib.pp_free.argtypes = [ctypes.c_void_p]
    for f in (lib.pp_plan_request, lib.pp_estimate_request):
        f.restype = ctypes.c_void_p  # char *, freed with pp_free
        f.argtypes = [ctypes.c_char_p, c_int_p]
    lib.pp_status_exit_code.restype = ctypes.c_int
    lib.pp_status_exit_code.argtypes = [ctypes.c_int]
    lib.pp_error_field.restype = ctypes.c_char_p
    lib.pp_error_field.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.pp_framework_name.restype = ctypes.c_char_p
    lib.pp_framework_name.argtypes = [ctypes.c_int]
    lib.pp_sweep_count.restype = ctypes.c_int
    lib.pp_sweep_count.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, c_int_p, ctypes.c_char_p]
    lib.pp_sweep_run.restype = ctypes.c_int
    lib.pp_sweep_run.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(SweepOpts), c_int_p,
                                 ctypes.c_char_p]
    return lib


EMIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p)
PROGRESS = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)
ERR_LEN = 512  # PP_ERR_LEN: the message, the first member of pp_error
ERR_BUF = 4096  # bytes handed over as a pp_error: the struct (about 600 bytes) with room to grow


class SweepOpts(ctypes.Structure):
    """pp_sweep_opts of include/parplan.h, field for field."""
    _fields_ = [("jobs", ctypes.c_int), ("shard_k", ctypes.c_int), ("shard_n", ctypes.c_int),
                ("format", ctypes.c_int), ("top", ctypes.c_int), ("frameworks", ctypes.c_uint),
                ("window", ctypes.c_int),
                ("skip", ctypes.POINTER(ctypes.c_int)), ("nskip", ctypes.c_int),
                ("emit", EMIT), ("progress", PROGRESS), ("user", ctypes.c_void_p)]


def lib():
    """The loaded library (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path, why in _candidates():
        if not path:
            tried.append(why)
            continue
        try:
            _lib = _declare(ctypes.CDLL(path))
            return _lib
        except (OSError, AttributeError) as e:
            tried.append("%s cannot be loaded: %s" % (path, e))
    raise LibraryNotFound(
        "libparplan.so not found. Tried: " + "; ".join(tried) +
        ". Set PARPLAN_LIB=/path/to/libparplan.so, or run `make install` (pkg-config then finds it), "
        "or `make build` in the checkout this package came from.")


def library_path():
    """The file the library was loaded from."""
    return lib()._name
