"""x264: the encoder behind PARSEC's x264, again and again on a generated 640x360 video;
frames/s, counting the frames of the run a stop interrupted."""
from pathlib import Path

from loads.kinds.common import json_figures, program, repeat

NAME = "x264"
SCHEMA = {
    "frames": {
        "type": "integer",
        "minimum": 1,
        "maximum": 10000,
        "description": "x264: frames in the generated video [60].",
    },
}
REQUIRED = ()


def availability(spec):
    return program("x264", "x264")


def describe(proc):
    return f"the x264 encoder on a generated {int(proc.get('frames', 60))}-frame 640x360 video, {proc['threads']} thread(s)"


def prepare(proc, workdir=None):
    from loads import inputs
    inputs.y4m_video(int(proc.get("frames", 60)))


def command(proc, workdir):
    from loads import inputs
    frames = int(proc.get("frames", 60))
    video = inputs.y4m_video(frames)
    # Not --quiet: its progress line ("16/60 frames") counts the frames of a stopped run.
    return repeat(["x264", "--threads", str(proc["threads"]), "--preset", "medium",
                   "-o", str(Path(workdir) / "out.264"), str(video)], "frames/s", frames,
                  partial_regex=r"\] (\d+)/\d+ frames"), {}


def figures(proc, stdout, stderr, workdir):
    return json_figures(stdout)


def doctor_lines():
    return [(*availability({"kind": NAME}), NAME)]
