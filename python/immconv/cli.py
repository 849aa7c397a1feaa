"""The `immconv` command (also `python -m immconv`).

  immconv compile-onnx model.onnx -o out/model [--batch N] [--input-shape x:1x3x224x224]
                      [--jobs J] [--cache-dir D] [--quiet]
  immconv check-sidecar out/model.json
"""
import argparse
import re
import sys

from . import launch


def parse_shape(text):
    m = re.fullmatch(r"(.+):(\d+)x(\d+)x(\d+)x(\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError("--input-shape wants NAME:NxCxHxW, got %r" % text)
    return m.group(1), tuple(int(m.group(i)) for i in range(2, 6))


def cmd_compile_onnx(args):
    from .compiler import CompileError, compile_onnx
    from .tools import ToolNotFound
    try:
        b = compile_onnx(args.model, args.output, batch=args.batch,
                         input_shapes=dict(args.input_shape or []), cache_dir=args.cache_dir,
                         jobs=args.jobs, progress=not args.quiet)
    except (CompileError, ToolNotFound, launch.SidecarError) as e:
        print("immconv: error: %s" % e, file=sys.stderr)
        return 1
    print("%d kernels: %s %s %s %s" % (len(b.kernels), b.mlir, b.listing, b.cubin, b.sidecar))
    return 0


def cmd_check_sidecar(args):
    return launch.main(["immconv check-sidecar", args.sidecar])


def main(argv=None):
    ap = argparse.ArgumentParser(prog="immconv",
                                 description="immconv: the Python front end of the spconv compiler")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile-onnx", help="ONNX model -> .mlir, listing, cubin, sidecar")
    c.add_argument("model")
    c.add_argument("-o", dest="output", required=True, metavar="PREFIX")
    c.add_argument("--batch", type=int)
    c.add_argument("--input-shape", type=parse_shape, action="append", metavar="NAME:NxCxHxW")
    c.add_argument("--jobs", type=int)
    c.add_argument("--cache-dir")
    c.add_argument("--quiet", action="store_true", help="no progress bar")
    c.set_defaults(func=cmd_compile_onnx)
    s = sub.add_parser("check-sidecar", help="validate a launch sidecar, one line per kernel")
    s.add_argument("sidecar")
    s.set_defaults(func=cmd_check_sidecar)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
