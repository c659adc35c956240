"""Inputs for the x264 and vips loads, generated deterministically (fixed seed, fixed
pattern) and cached under results/inputs/, so every machine encodes the same video and
sharpens the same image. Written atomically: an interrupt while one is written (a trial's
SIGTERM) leaves no partial file."""
import numpy as np

from airbase.atomic import write_atomic
from airbase.paths import RESULTS

INPUTS = RESULTS / "inputs"
WIDTH, HEIGHT = 640, 360


def y4m_video(frames):
    """A 640x360 YUV 4:2:0 video of `frames` frames: moving gradients plus fixed noise, so
    the encoder has motion and texture to work on."""
    path = INPUTS / f"video-{WIDTH}x{HEIGHT}-{frames}.y4m"
    if path.exists():
        return path
    rng = np.random.default_rng(2015)
    noise = rng.integers(0, 40, size=(HEIGHT, WIDTH), dtype=np.uint8)
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]

    def write(f):
        f.write(f"YUV4MPEG2 W{WIDTH} H{HEIGHT} F25:1 Ip A1:1 C420jpeg\n".encode())
        for k in range(frames):
            luma = ((x + 3 * k) % 256 // 2 + (y + 2 * k) % 256 // 2 + noise) % 256
            chroma = np.full((HEIGHT // 2, WIDTH // 2), 128 + (k % 32), dtype=np.uint8)
            f.write(b"FRAME\n")
            f.write(luma.astype(np.uint8).tobytes())
            f.write(chroma.tobytes())
            f.write((255 - chroma).tobytes())
    write_atomic(path, write)
    return path


def ppm_image(side):
    """A side x side RGB image (binary PPM) of smooth gradients plus fixed noise."""
    path = INPUTS / f"image-{side}.ppm"
    if path.exists():
        return path
    rng = np.random.default_rng(2015)
    y, x = np.mgrid[0:side, 0:side]
    img = np.stack([(x * 255 // side), (y * 255 // side), ((x + y) * 127 // side)], axis=-1)
    img = (img + rng.integers(0, 30, size=img.shape)) % 256

    def write(f):
        f.write(f"P6\n{side} {side}\n255\n".encode())
        f.write(img.astype(np.uint8).tobytes())
    write_atomic(path, write)
    return path
