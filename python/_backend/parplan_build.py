"""PEP 517 build backend for the parplan package, standard library only.

`pip install ./python` must work offline on a plain Debian python3: with a
build requirement such as setuptools, pip would try to fetch it from PyPI
into an isolated build environment. This backend needs nothing: the package
is pure Python (ctypes over the installed libparplan.so), so a wheel is a
zip of parplan/*.py, a generated parplan/_build_info.py (the checkout it
came from, so the library can be found in its build tree), and the
.dist-info files of the wheel format (PEP 427, core metadata 2.1).
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # python/
NAME = "parplan"
SUMMARY = "Parallelism planner for transformer training: ctypes binding of libparplan"


def _version():
    with open(os.path.join(HERE, NAME, "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nRequires-Python: >=3.8\n"
            "License: see the parplan repository\n" % (NAME, _version(), SUMMARY))


def _files():
    """(archive name, bytes) of the package."""
    pkg = os.path.join(HERE, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py") and name != "_build_info.py":
            with open(os.path.join(pkg, name), "rb") as f:
                yield "%s/%s" % (NAME, name), f.read()
    source = os.path.dirname(HERE)  # the checkout holding python/ and build/
    yield "%s/_build_info.py" % NAME, ("# written by python/_backend/parplan_build.py at install time\n"
                                       "SOURCE_DIR = %r\n" % source).encode()


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _dist_info(name):
    return "%s-%s.dist-info/%s" % (NAME, _version(), name)


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    d = os.path.join(metadata_directory, "%s-%s.dist-info" % (NAME, _version()))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return os.path.basename(d)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = "%s-%s-py3-none-any.whl" % (NAME, _version())
    entries = list(_files())
    entries.append((_dist_info("METADATA"), _metadata().encode()))
    entries.append((_dist_info("WHEEL"), b"Wheel-Version: 1.0\nGenerator: parplan_build\nRoot-Is-Purelib: true\n"
                                         b"Tag: py3-none-any\n"))
    entries.append((_dist_info("top_level.txt"), (NAME + "\n").encode()))
    record = "\n".join(_record_line(n, d) for n, d in entries) + "\n%s,,\n" % _dist_info("RECORD")
    path = os.path.join(wheel_directory, wheel)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries:
            z.writestr(n, d)
        z.writestr(_dist_info("RECORD"), record)
    return wheel


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, _version())
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for rel in ["pyproject.toml", "_backend/parplan_build.py"] + [n for n, _ in _files() if "_build_info" not in n]:
            t.add(os.path.join(HERE, rel), arcname="%s/%s" % (base, rel))
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        data = _metadata().encode()
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return os.path.basename(path)
