# Installs what clvscu needs on a Debian/Ubuntu machine without a GPU and exports the library
# path for NVRTC. Sourced by scripts/run-default.sh, scripts/test.sh and .ci/run.
if ! ldconfig -p 2>/dev/null | grep -q libpocl || ! ldconfig -p 2>/dev/null | grep -q libOpenCL.so.1; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "installing PoCL (OpenCL CPU device) ..." >&2
        SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        # Another apt (unattended upgrades on a fresh machine) may hold the lock: wait for it.
        $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq pocl-opencl-icd ocl-icd-libopencl1 >/dev/null
    else
        echo "warning: cannot install PoCL (no apt-get); OpenCL may be unavailable" >&2
    fi
fi
if ! ldconfig -p 2>/dev/null | grep -q libnvrtc.so.13; then
    NVRTC_DIR="$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))' 2>/dev/null || true)"
    if [ -z "$NVRTC_DIR" ] || [ ! -e "$NVRTC_DIR/libnvrtc.so.13" ]; then
        echo "installing NVRTC (pip wheel nvidia-cuda-nvrtc) ..." >&2
        python3 -m pip install -q --disable-pip-version-check nvidia-cuda-nvrtc >/dev/null 2>&1 || true
        NVRTC_DIR="$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))' 2>/dev/null || true)"
    fi
    if [ -n "$NVRTC_DIR" ] && [ -e "$NVRTC_DIR/libnvrtc.so.13" ]; then
        export LD_LIBRARY_PATH="$NVRTC_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    else
        echo "warning: NVRTC not found; CUDA kernels cannot be compiled" >&2
    fi
fi
