"""Generates the gRPC stubs from the repository's ``proto/undust/v1/*.proto`` while building.

The stubs land in ``undust_client/_pb/`` of the build (never in the source tree), with their
imports made package-relative, so ``pip install ./clients/python`` always ships stubs of the protos
it was built next to.
"""

import pathlib
import re

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
PROTO_ROOT = HERE.parent.parent / "proto"
PROTO_DIR = PROTO_ROOT / "undust" / "v1"


class BuildWithStubs(build_py):
    """``build_py`` that also compiles the protos into the built package."""

    def run(self):
        super().run()
        self.generate(pathlib.Path(self.build_lib) / "undust_client" / "_pb")

    def generate(self, out):
        from grpc_tools import protoc  # a build requirement (pyproject.toml)
        import grpc_tools

        protos = sorted(PROTO_DIR.glob("*.proto"))
        if not protos:
            raise SystemExit(
                f"no .proto files in {PROTO_DIR}: build undust-client from the undust repository "
                "(pip install ./clients/python)"
            )
        out.mkdir(parents=True, exist_ok=True)
        include = pathlib.Path(grpc_tools.__file__).parent / "_proto"
        args = [
            "grpc_tools.protoc",
            f"-I{PROTO_DIR}",
            f"-I{include}",
            f"--python_out={out}",
            f"--pyi_out={out}",
            f"--grpc_python_out={out}",
        ] + [str(p) for p in protos]
        if protoc.main(args) != 0:
            raise SystemExit(f"protoc failed on {PROTO_DIR}")
        # grpc_tools writes `import x_pb2`; inside a package it must be relative.
        for path in out.glob("*_pb2_grpc.py"):
            text = re.sub(r"^import (\w+_pb2) as", r"from . import \1 as", path.read_text(), flags=re.M)
            path.write_text(text)
        (out / "__init__.py").write_text('"""Stubs generated from proto/undust/v1 at build time."""\n')


setup(cmdclass={"build_py": BuildWithStubs})
