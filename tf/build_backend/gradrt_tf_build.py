"""An in-tree PEP 517 build backend for gradrt_tf (no third-party build dependency).

pip runs a backend in an isolated environment that hides the installed packages, tensorflow
included, while the kernel library must be compiled against exactly that tensorflow (its headers,
its ABI flags, libtensorflow_framework.so.2). So the backend asks the *outer* interpreter: it runs
sys.executable (the Python that runs pip) in a subprocess with pip's isolation variables
(PYTHONPATH, PYTHONNOUSERSITE) removed, which sees the environment's own site-packages, and reads
tf.sysconfig's compile and link flags from it. GRADRT_TF_PYTHON names another interpreter.

Build steps: gradrt's static core (position-independent, cpu backend only) with CMake in
<repo>/build-tf/core, the TF-facing translation unit with TF's flags (C++17), one shared library
linked against both; then a wheel holding the package and that library. GRADRT_TF_BUILD_DIR moves
the build folders; ccache is used when installed. Needs an in-tree build (pip >= 21.3, the default),
because the gradrt sources are the parent folder of tf/.
"""
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

TF_DIR = Path(__file__).resolve().parent.parent
ROOT = TF_DIR.parent
LIB_NAME = "_gradrt_tf_kernels.so"
ISOLATION_VARS = ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME", "PYTHONSAFEPATH")


def _project():
    with open(TF_DIR / "pyproject.toml", "rb") as f:
        p = tomllib.load(f)["project"]
    return p["name"], p["version"]


def _dist_name():
    name, version = _project()
    return f"{name.replace('-', '_')}-{version}"


def _log(msg):
    print(f"gradrt_tf build: {msg}", file=sys.stderr, flush=True)


def _run(cmd, **kw):
    _log(" ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def _tf_flags():
    """tf.sysconfig's flags, from the interpreter that runs pip, outside pip's isolation."""
    python = os.environ.get("GRADRT_TF_PYTHON", sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ISOLATION_VARS}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    code = ("import json, tensorflow as tf; print(json.dumps({'cflags': tf.sysconfig.get_compile_flags(),"
            " 'lflags': tf.sysconfig.get_link_flags(), 'version': tf.__version__}))")
    r = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, cwd=str(ROOT))
    if r.returncode != 0:
        raise RuntimeError(f"gradrt_tf needs tensorflow installed in the environment that runs pip "
                           f"({python}); importing it failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _build_library():
    if not (ROOT / "core" / "include" / "gradrt" / "gradrt.h").exists():
        raise RuntimeError(f"gradrt sources not found at {ROOT}: build tf/ in place, from a gradrt checkout "
                           f"(pip >= 21.3 builds in place)")
    flags = _tf_flags()
    _log(f"tensorflow {flags['version']}: {' '.join(flags['cflags'])}")
    build = Path(os.environ.get("GRADRT_TF_BUILD_DIR", ROOT / "build-tf"))
    core, plugin = build / "core", build / "plugin"
    plugin.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    ccache = shutil.which("ccache")
    launcher = [f"-DCMAKE_CXX_COMPILER_LAUNCHER={ccache}"] if ccache else []
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    jobs = os.environ.get("JOBS", str(min(os.cpu_count() or 1, 2)))
    # Release, -fPIC (the core goes into a shared library), no Vulkan/CLI/tests: the plugin runs
    # gradrt's cpu backend only.
    _run(["cmake", "-S", ROOT, "-B", core, *generator, *launcher, "-DCMAKE_BUILD_TYPE=Release",
          "-DCMAKE_POSITION_INDEPENDENT_CODE=ON", "-DGRADRT_TESTS=OFF", "-DGRADRT_CLI=OFF",
          "-DGRADRT_VULKAN=OFF"], env=env, stdout=subprocess.DEVNULL)
    _run(["cmake", "--build", core, "--target", "gradrt", "-j", jobs], env=env)
    archive = core / "libgradrt.a"
    cxx = os.environ.get("CXX", "g++")
    obj = plugin / "gradrt_tf_kernels.o"
    src = TF_DIR / "src" / "gradrt_tf_kernels.cc"
    # TF's flags carry --std=c++17 and _GLIBCXX_USE_CXX11_ABI; gradrt's public header is C++17-clean.
    _run([*([ccache] if ccache else []), cxx, "-O2", "-fPIC", "-fvisibility=hidden",
          "-Wno-deprecated-declarations", "-I", ROOT / "core" / "include", *flags["cflags"],
          "-c", src, "-o", obj], env=env)
    out = plugin / LIB_NAME
    # --exclude-libs keeps gradrt's own symbols out of the dynamic symbol table.
    _run([cxx, "-shared", "-o", out, obj, archive, *flags["lflags"], "-Wl,--exclude-libs,ALL",
          "-Wl,--as-needed", "-pthread"], env=env)
    return out, flags["version"]


def _metadata(tf_version):
    name, version = _project()
    return (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
            f"Summary: gradrt's cpu kernels as TensorFlow kernels (built against tensorflow {tf_version})\n"
            f"Requires-Python: >=3.9\n")


def _wheel_tag():
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{impl}-{impl}-{plat}"


def _wheel_file():
    return f"Wheel-Version: 1.0\nGenerator: gradrt_tf_build\nRoot-Is-Purelib: false\nTag: {_wheel_tag()}\n"


def _write_dist_info(directory, tf_version):
    d = Path(directory) / f"{_dist_name()}.dist-info"
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata(tf_version))
    (d / "WHEEL").write_text(_wheel_file())
    return d.name


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory, "(the installed version)")


def write_wheel(path, files, info):
    """Writes the wheel `path` holding `files` ({name in the wheel: bytes}) and, in the dist-info
    folder `info`, their RECORD (urlsafe-base64 sha256 of each, PEP 376/427). Fixed dates: the same
    inputs give the same wheel. Also used by litert/'s backend."""
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files = {**files, f"{info}/RECORD": ("\n".join(record) + "\n").encode()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            z.writestr(entry, data, zipfile.ZIP_DEFLATED)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    lib, tf_version = _build_library()
    files = {f"gradrt_tf/{p.name}": p.read_bytes() for p in sorted((TF_DIR / "gradrt_tf").glob("*.py"))}
    files[f"gradrt_tf/{LIB_NAME}"] = lib.read_bytes()
    info = _dist_name() + ".dist-info"
    files[f"{info}/METADATA"] = _metadata(tf_version).encode()
    files[f"{info}/WHEEL"] = _wheel_file().encode()
    wheel = f"{_dist_name()}-{_wheel_tag()}.whl"
    write_wheel(Path(wheel_directory) / wheel, files, info)
    return wheel
