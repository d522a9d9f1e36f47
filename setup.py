"""Build step beyond pyproject.toml: the embedding kernels are compiled when the package is built.

``build_py`` copies the package as usual, then runs :func:`dialeval.metrics.embedding.warm_kernels` from the
built copy with numba's cache pointed into it (``dialeval/metrics/_kernel_cache``), so the installed package
carries machine code for this machine and the first embedding run loads it instead of compiling (about 7 s).
See :mod:`dialeval.metrics.kernel_cache`. The build environment has numba (``[build-system] requires``); when
the step fails (numba missing or broken) the build goes on and the kernels compile on their first use.
Editable installs run from the source tree and skip it.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithKernels(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        lib = Path(self.build_lib).resolve()
        target = lib / "dialeval" / "metrics" / "_kernel_cache"
        # compiled afresh: a build folder kept from an earlier build holds that build's entries, and numba names
        # them by the kernel's line number and overload, so stale copies would ship beside the new ones
        shutil.rmtree(target, ignore_errors=True)
        env = {**os.environ, "DIALEVAL_KERNEL_CACHE": str(target),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(lib), os.environ.get("PYTHONPATH")]))}
        self.announce(f"compiling the embedding kernels into {target}", 2)
        done = subprocess.run([sys.executable, "-c", "from dialeval.metrics.embedding import warm_kernels; "
                               "warm_kernels()"], env=env, cwd=lib, capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            sys.stderr.write(f"warning: embedding kernels not precompiled ({last}); they compile on first use\n")


setup(cmdclass={"build_py": BuildPyWithKernels})
