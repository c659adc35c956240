"""Write a result file so that it is either complete or absent: to a hidden temporary
beside it (same folder, so the rename stays on one file system), then renamed over it. An
interrupt, a full disk or a crash leaves the old file or none, never half of one."""
import csv
import io
import json
import os
from pathlib import Path


def write_atomic(path, content, fsync=False):
    """Write content (str, bytes, or a function taking the open binary file) to path.
    fsync: also force it to disk before the rename (trial records: the one copy of a
    run that took minutes). The temporary is removed on any failure; errors propagate."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            if callable(content):
                content(f)
            else:
                f.write(content.encode() if isinstance(content, str) else content)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_json(path, data, fsync=False):
    write_atomic(path, json.dumps(data, indent=1), fsync=fsync)


def write_csv(path, fieldnames, rows):
    """A table with a header row; columns beyond fieldnames in a row are an error."""
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=fieldnames)
    w.writeheader()
    w.writerows(rows)
    write_atomic(path, buf.getvalue())
