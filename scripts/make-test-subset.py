#!/usr/bin/env python3
"""Writes the committed Fashion-MNIST test subset (tests/data/fashion-mnist-subset/).

Takes the first TRAIN training and the first TEST test images and labels from the
full set (Debian's dataset-fashion-mnist) and writes them as gzipped IDX files
with the standard names. The output is byte-for-byte reproducible (gzip mtime 0,
no file name in the gzip header). Fashion-MNIST is MIT-licensed (Zalando SE).

    python3 scripts/make-test-subset.py [--source DIR] [--out DIR] [--train N] [--test N]

The test counts are chosen to keep the committed files under 1 MB: 2000 real
images already take ~860 KB gzipped, so the test split keeps 250.
"""
import argparse
import gzip
import os
import struct

FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise SystemExit(f"{path}: bad IDX magic number {data[:4].hex()}")
    dims = list(struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim]))
    return dims, data[4 + 4 * ndim:]


def write_idx(path, dims, payload):
    header = struct.pack(">HBB", 0, 0x08, len(dims)) + struct.pack(">" + "I" * len(dims), *dims)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as f:
            f.write(header + payload)


def subset(source, out, split, count):
    images_name, labels_name = FILES[split]
    dims, images = read_idx(os.path.join(source, images_name + ".gz"))
    label_dims, labels = read_idx(os.path.join(source, labels_name + ".gz"))
    if count > dims[0] or count > label_dims[0]:
        raise SystemExit(f"{split}: asked for {count} samples, the source has {dims[0]}")
    sample_bytes = dims[1] * dims[2]
    write_idx(os.path.join(out, images_name + ".gz"), [count] + dims[1:], images[:count * sample_bytes])
    write_idx(os.path.join(out, labels_name + ".gz"), [count], labels[:count])
    print(f"{split}: {count} images {dims[1]}x{dims[2]}, first labels {list(labels[:10])}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "fashion-mnist-subset"))
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--test", type=int, default=250)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    subset(args.source, args.out, "train", args.train)
    subset(args.source, args.out, "test", args.test)


if __name__ == "__main__":
    main()
