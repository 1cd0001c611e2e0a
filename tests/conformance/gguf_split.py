"""Split a GGUF file in two by hand, as llama.cpp's gguf-split does: every shard a GGUF file of its own
tensors, the first with all the metadata, each with split.no (u16), split.count (u16) and
split.tensors.count (i32), named PREFIX-0000N-of-0000M.gguf. Only the header is parsed; tensor bytes
are copied as they are."""
import os
import struct

SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


class _Reader:
    def __init__(self, f):
        self.f = f

    def take(self, fmt):
        size = struct.calcsize("<" + fmt)
        return struct.unpack("<" + fmt, self.f.read(size))[0]

    def string(self):
        return self.f.read(self.take("Q"))

    def value(self, vtype):
        if vtype == 8:
            return self.string()
        if vtype == 9:
            etype, n = self.take("I"), self.take("Q")
            return [self.value(etype) for _ in range(n)]
        return self.take(SCALAR[vtype])


def _string(b):
    return struct.pack("<Q", len(b)) + b


def _split_kvs(no, count, tensors):
    out = b""
    for key, vtype, fmt, v in (("split.no", 2, "H", no), ("split.count", 2, "H", count),
                               ("split.tensors.count", 5, "i", tensors)):
        out += _string(key.encode()) + struct.pack("<I", vtype) + struct.pack("<" + fmt, v)
    return out


def split_gguf(path, out_dir, prefix, parts=2):
    """Writes out_dir/PREFIX-0000N-of-0000M.gguf; returns their paths."""
    with open(path, "rb") as f:
        r = _Reader(f)
        assert f.read(4) == b"GGUF"
        version, n_tensors, n_kv = r.take("I"), r.take("Q"), r.take("Q")
        alignment = 32
        kv_start = f.tell()
        for _ in range(n_kv):
            key = r.string()
            vtype = r.take("I")
            v = r.value(vtype)
            if key == b"general.alignment":
                alignment = v
        kv_bytes_end = f.tell()
        f.seek(kv_start)
        kv_bytes = f.read(kv_bytes_end - kv_start)
        infos = []
        for _ in range(n_tensors):
            name = r.string()
            dims = [r.take("Q") for _ in range(r.take("I"))]
            infos.append((name, dims, r.take("I"), r.take("Q")))
        data_start = -(-f.tell() // alignment) * alignment
        file_size = os.path.getsize(path)
        order = sorted(infos, key=lambda t: t[3])
        ends = {t[0]: (order[i + 1][3] if i + 1 < len(order) else file_size - data_start) for i, t in enumerate(order)}
        per = -(-n_tensors // parts)
        paths = []
        for k in range(parts):
            mine = infos[k * per:(k + 1) * per]
            head = b"GGUF" + struct.pack("<IQQ", version, len(mine), (n_kv if k == 0 else 0) + 3)
            head += (kv_bytes if k == 0 else b"") + _split_kvs(k, parts, n_tensors)
            offset, blobs = 0, []
            for name, dims, ttype, old in mine:
                f.seek(data_start + old)
                data = f.read(ends[name] - old)
                data += b"\0" * (-len(data) % alignment)
                head += _string(name) + struct.pack("<I", len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
                head += struct.pack("<IQ", ttype, offset)
                offset += len(data)
                blobs.append(data)
            head += b"\0" * (-len(head) % alignment)
            out = os.path.join(out_dir, f"{prefix}-{k + 1:05d}-of-{parts:05d}.gguf")
            with open(out, "wb") as o:
                o.write(head)
                for data in blobs:
                    o.write(data)
            paths.append(out)
    return paths
