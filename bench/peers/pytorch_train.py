"""The GPU peer: the same LeNet-5 and ConvNet (docs/models.md) trained with PyTorch on
the same kind of synthetic batches, reporting training images/s, one JSON line per run.
scripts/gpu-check.sh runs it on the GPU machine next to `ember bench-train --device cuda`.

    python3 bench/peers/pytorch_train.py --model convnet --batch 64 --steps 200
"""
import argparse
import json
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def lenet5():
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def convnet():
    def block(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(
        *block(1, 32), *block(32, 32), nn.MaxPool2d(2), *block(32, 64), *block(64, 64), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="convnet", choices=["lenet5", "convnet"])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = (lenet5() if args.model == "lenet5" else convnet()).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    pool = 8  # distinct batches, cycled, as in ember bench-train
    images = [torch.randn(args.batch, 1, 28, 28, device=device) for _ in range(pool)]
    labels = [torch.randint(0, 10, (args.batch,), device=device) for _ in range(pool)]

    def step(i):
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(images[i % pool]), labels[i % pool]).backward()
        optimizer.step()

    for i in range(args.warmup):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(args.steps):
        step(i)
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": "pytorch", "model": args.model, "batch": args.batch, "device": args.device,
                      "images_per_s": round(args.batch * args.steps / seconds, 1)}))


if __name__ == "__main__":
    main()
