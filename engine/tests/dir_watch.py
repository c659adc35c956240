"""Every name that appeared in a directory while it was watched: a Linux inotify watch,
read after the fact, so a file that existed for microseconds is seen however the test
was scheduled (polling for it would be a race the test could lose)."""
import ctypes
import ctypes.util
import os
import struct

IN_CREATE, IN_MOVED_TO = 0x100, 0x80
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows


class DirWatch:
    def __init__(self, path):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        if libc.inotify_add_watch(self.fd, os.fsencode(path), IN_CREATE | IN_MOVED_TO) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path} failed")

    def appeared(self):
        """The names created in or renamed into the directory so far; closes the watch."""
        names = set()
        try:
            while True:
                try:
                    buf = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    return names
                at = 0
                while at < len(buf):
                    _, _, _, length = _EVENT.unpack_from(buf, at)
                    at += _EVENT.size
                    names.add(buf[at:at + length].rstrip(b"\0").decode())
                    at += length
        finally:
            os.close(self.fd)
