"""vips: `vips sharpen` (the library behind PARSEC's vips) again and again on a generated
square image; runs/s, counting the fraction of the run a stop interrupted."""
from pathlib import Path

from loads.kinds.common import json_figures, program, repeat

NAME = "vips"
SCHEMA = {
    "image_px": {
        "type": "integer",
        "minimum": 64,
        "maximum": 20000,
        "description": "vips: side of the generated square image in pixels [2600].",
    },
}
REQUIRED = ()


def availability(spec):
    return program("vips", "libvips-tools")


def describe(proc):
    px = int(proc.get("image_px", 2600))
    return f"vips sharpen on a generated {px}x{px} image, {proc['threads']} thread(s)"


def prepare(proc, workdir=None):
    from loads import inputs
    inputs.ppm_image(int(proc.get("image_px", 2600)))


def command(proc, workdir):
    from loads import inputs
    image = inputs.ppm_image(int(proc.get("image_px", 2600)))
    # --vips-progress ("36% complete") counts the fraction of a stopped run.
    return repeat(["vips", "sharpen", str(image), str(Path(workdir) / "out.v"), "--vips-progress"],
                  "runs/s", partial_regex=r"(\d+)% complete", partial_scale=0.01), \
        {"VIPS_CONCURRENCY": str(proc["threads"])}


def figures(proc, stdout, stderr, workdir):
    return json_figures(stdout)


def doctor_lines():
    return [(*availability({"kind": NAME}), NAME)]
