"""An in-tree PEP 517 build backend for gradrt_litert (no third-party build dependency).

The wheel holds the pure-Python ctypes package `gradrt_litert` and `libgradrt_litert.so`, which
CMake builds from the gradrt checkout this folder sits in (the parent of litert/): the top-level
project with -DGRADRT_LITERT=ON (position-independent, cpu backend only, no Vulkan), Release, no
tests or CLI. The library needs neither
TensorFlow nor LiteRT headers; it opens libLiteRt.so at run time. So unlike tf/'s backend this one
does not look at the installed packages at all, and the wheel is tagged py3-none-<platform> (ctypes:
no CPython ABI). Build folder: <repo>/build-litert/lib, or GRADRT_LITERT_BUILD_DIR; JOBS sets the
parallelism (default 2); ccache and Ninja are used when installed. Cross builds: CMAKE_TOOLCHAIN_FILE
is passed through (the wheel's platform tag is then still this interpreter's: rename it).
"""
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

PKG_DIR = Path(__file__).resolve().parent.parent  # litert/
ROOT = PKG_DIR.parent
sys.path.insert(0, str(ROOT / "tf" / "build_backend"))
from gradrt_tf_build import write_wheel  # noqa: E402  (the wheel writer: stdlib only, no TF needed)
LIB = "libgradrt_litert.so"


def _meta():
    with open(PKG_DIR / "pyproject.toml", "rb") as f:
        p = tomllib.load(f)["project"]
    lines = [f"Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    return f"{p['name'].replace('-', '_')}-{p['version']}", "\n".join(lines) + "\n"


def _tag():
    return "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _wheel_text():
    return f"Wheel-Version: 1.0\nGenerator: gradrt_litert_build\nRoot-Is-Purelib: false\nTag: {_tag()}\n"


def _sh(cmd):
    print("gradrt_litert build: " + " ".join(map(str, cmd)), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in cmd], check=True)


def build_library():
    """CMake-builds libgradrt_litert.so and returns its path."""
    if not (PKG_DIR / "CMakeLists.txt").exists() or not (ROOT / "core" / "include" / "gradrt" / "gradrt.h").exists():
        raise RuntimeError(f"gradrt sources with litert/CMakeLists.txt not found at {ROOT}: build litert/ "
                           f"in place, from a gradrt checkout (pip >= 21.3 builds in place)")
    build = Path(os.environ.get("GRADRT_LITERT_BUILD_DIR", ROOT / "build-litert" / "lib"))
    # the top-level project with GRADRT_LITERT=ON (PIC, hidden visibility, no Vulkan: litert/CMakeLists.txt)
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DGRADRT_LITERT=ON", "-DGRADRT_TESTS=OFF", "-DGRADRT_CLI=OFF"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    if shutil.which("ccache"):
        args.append(f"-DCMAKE_CXX_COMPILER_LAUNCHER={shutil.which('ccache')}")
    if os.environ.get("CMAKE_TOOLCHAIN_FILE"):
        args.append(f"-DCMAKE_TOOLCHAIN_FILE={os.environ['CMAKE_TOOLCHAIN_FILE']}")
    _sh(["cmake", "-S", ROOT, "-B", build, *args])
    _sh(["cmake", "--build", build, "--target", "gradrt_litert", "-j", os.environ.get("JOBS", "2")])
    found = sorted(build.rglob(LIB))
    if not found:
        raise RuntimeError(f"the build in {build} made no {LIB}")
    return found[0]


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    dist, metadata = _meta()
    info = Path(metadata_directory) / f"{dist}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(metadata)
    (info / "WHEEL").write_text(_wheel_text())
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    dist, metadata = _meta()
    contents = {f"gradrt_litert/{f.name}": f.read_bytes() for f in sorted((PKG_DIR / "gradrt_litert").glob("*.py"))}
    contents[f"gradrt_litert/{LIB}"] = build_library().read_bytes()
    info = f"{dist}.dist-info"
    contents[f"{info}/METADATA"] = metadata.encode()
    contents[f"{info}/WHEEL"] = _wheel_text().encode()
    name = f"{dist}-{_tag()}.whl"
    write_wheel(Path(wheel_directory) / name, contents, info)
    return name
